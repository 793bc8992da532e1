/**
 * The machine that served the model, as the gate compares it. A result records it
 * (`env.server_host`, env/local-host.ts); one written before that is read from what it did
 * record: a server on loopback ran on the host that measured it, so that host's name, platform
 * and CPU count name the serving machine; any other base URL leaves the machine unknown. The
 * load's host (`env.host`) is not part of it: load from other hosts is no host change. Pure.
 */
import type { EnvRecord, ServerHost } from '../types.js'

const UNKNOWN = 'unknown'

/** Whether a base URL names a loopback name or address, the only ones a record proves local (env/local-host.ts also knows the host's own names). */
function onLoopback(url: string): boolean {
  let h: string
  try {
    h = new URL(url).hostname.toLowerCase().replace(/^\[|\]$/g, '')
  } catch {
    return false
  }
  return h === 'localhost' || h.endsWith('.localhost') || h === '::1' || /^127\.\d+\.\d+\.\d+$/.test(h) || h === '0.0.0.0'
}

/** The serving machine of `env`: its record, or for an older result what its load host and base URL tell. */
export function servingMachine(env: EnvRecord): ServerHost | null {
  if (env.server_host !== undefined) return env.server_host
  if (!onLoopback(env.base_url)) return null
  return {
    location: 'local',
    hostname: env.host?.hostname ?? UNKNOWN,
    machine_id_sha256: UNKNOWN,
    platform: env.host?.platform ?? UNKNOWN,
    cpu_model: UNKNOWN,
    cpus: env.host?.cpus ?? UNKNOWN,
    gpu_uuids: [],
  }
}

/** The field env-diff.ts lists the host name under; its values stay out of published text (show-host). */
export const HOST_NAME_FIELD = 'host name'

/**
 * The serving machine's identity fields in env-diff.ts's form: name, getter. `server` says where it
 * ran (`local`, `remote`; unknown for an older record of a server on another address).
 */
export const IDENTITY_FIELDS: ReadonlyArray<readonly [string, (e: EnvRecord) => string]> = [
  ['server', (e) => servingMachine(e)?.location ?? UNKNOWN],
  [HOST_NAME_FIELD, (e) => servingMachine(e)?.hostname ?? UNKNOWN],
  ['machine id', (e) => servingMachine(e)?.machine_id_sha256 ?? UNKNOWN],
  ['CPU', (e) => servingMachine(e)?.cpu_model ?? UNKNOWN],
  ['CPUs', (e) => String(servingMachine(e)?.cpus ?? UNKNOWN)],
  ['GPU UUIDs', (e) => gpuUuids(e)],
]

/** The fields that name the serving machine (IDENTITY_FIELDS' names). */
export const IDENTITY_FIELD_NAMES: readonly string[] = IDENTITY_FIELDS.map(([f]) => f)

function gpuUuids(e: EnvRecord): string {
  const uuids = servingMachine(e)?.gpu_uuids ?? []
  // Sorted: the same GPUs listed in another order are the same machine.
  return uuids.length === 0 ? UNKNOWN : [...uuids].sort().join(', ')
}

/** The serving machine's platform and kernel, `linux x64 6.8.0-45-generic`; unknown for a remote server. */
export function servingPlatform(e: EnvRecord): string {
  return servingMachine(e)?.platform ?? UNKNOWN
}

/** Whether the record shows any GPU of the server: a name, or a count (nvidia-smi's, or the declared `--gpus`). */
export function showsGpus(e: EnvRecord): boolean {
  return e.gpu.names.length > 0 || (typeof e.gpu.count === 'number' && e.gpu.count > 0)
}
