/**
 * Is the server on this machine? nvidia-smi only sees this host's GPUs, so
 * GPU details and health samples describe the server only when it runs here.
 */
import { createHash } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { arch, cpus, hostname, networkInterfaces, platform, release } from 'node:os'
import type { ServerHost } from '../types.js'

/** True when `url`'s host is a loopback name or address, this host's name, or one of its interface addresses. */
export function isServerOnThisHost(
  url: string,
  host: { name: string; addresses: readonly string[] } = { name: hostname(), addresses: localAddresses() },
): boolean {
  let h: string
  try {
    h = new URL(url).hostname.toLowerCase().replace(/^\[|\]$/g, '')
  } catch {
    return false
  }
  if (h === 'localhost' || h.endsWith('.localhost') || h === '::1' || /^127\.\d+\.\d+\.\d+$/.test(h) || h === '0.0.0.0') return true
  // This host by name, bare or with a domain (`gpu-1` or `gpu-1.lab.example`).
  const name = host.name.toLowerCase()
  if (h === name || h.split('.')[0] === name) return true
  return host.addresses.some((a) => a.toLowerCase() === h)
}

function localAddresses(): string[] {
  return Object.values(networkInterfaces()).flatMap((list) => (list ?? []).map((i) => i.address))
}

/** This host's identity as ServerHost records it, less its GPUs (env/nvidia-smi.ts lists their UUIDs). */
export type LocalMachine = Omit<ServerHost, 'location' | 'gpu_uuids'>

/** systemd's and D-Bus's places for the machine id; either names this installation. */
const MACHINE_ID_FILES = ['/etc/machine-id', '/var/lib/dbus/machine-id']

/**
 * The first 16 hex digits of the SHA-256 of a machine id, or 'unknown' for none. The id itself is
 * never recorded: systemd asks that it be treated as confidential, and a hash tells two machines
 * apart just as well.
 */
export function machineIdHash(id: string | null): string {
  const v = id?.trim() ?? ''
  if (v === '') return 'unknown'
  return createHash('sha256').update(v).digest('hex').slice(0, 16)
}

function readMachineId(read: (path: string) => string): string | null {
  for (const path of MACHINE_ID_FILES) {
    try {
      const id = read(path).trim()
      if (id !== '') return id
    } catch {
      // absent here (a container without systemd, another OS): try the next place
    }
  }
  return null
}

/** This host: name, hashed machine id, platform and kernel, CPU model and count. */
export function localMachine(read: (path: string) => string = (p) => readFileSync(p, 'utf8')): LocalMachine {
  const cpuList = cpus()
  return {
    hostname: hostname(),
    machine_id_sha256: machineIdHash(readMachineId(read)),
    platform: `${platform()} ${arch()} ${release()}`,
    cpu_model: cpuList[0]?.model.trim() || 'unknown',
    cpus: cpuList.length > 0 ? cpuList.length : 'unknown',
  }
}

/**
 * The serving machine's identity: this host's when the server runs here, else a remote machine
 * whose every field is unknown (servegate sees only its own host; it never claims this one).
 */
export function serverHostOf(onThisHost: boolean, machine: LocalMachine, gpuUuids: readonly string[]): ServerHost {
  if (!onThisHost)
    return { location: 'remote', hostname: 'unknown', machine_id_sha256: 'unknown', platform: 'unknown', cpu_model: 'unknown', cpus: 'unknown', gpu_uuids: [] }
  return { location: 'local', ...machine, gpu_uuids: [...gpuUuids] }
}
