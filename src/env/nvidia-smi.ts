/**
 * Queries of `nvidia-smi` and parsing of its CSV output. Every figure it
 * cannot give ([N/A], [Not Supported], a missing binary) becomes null or
 * 'unknown' — never a guess.
 */
import type { GpuSample } from '../types.js'
import type { ExecFn } from './exec.js'
import { readProcessGroup, type PgidReader } from './process-group.js'

/** Clock event ("throttle") reasons servegate asks for, by their nvidia-smi field suffix. */
export const THROTTLE_REASON_FIELDS = [
  'gpu_idle',
  'applications_clocks_setting',
  'sw_power_cap',
  'hw_slowdown',
  'hw_thermal_slowdown',
  'hw_power_brake_slowdown',
  'sw_thermal_slowdown',
  'sync_boost',
] as const

/** The reasons that mean clocks were cut by power or heat (idle, application clocks and sync boost are benign). */
export const THROTTLING_REASONS: readonly string[] = ['sw_power_cap', 'hw_slowdown', 'hw_thermal_slowdown', 'hw_power_brake_slowdown', 'sw_thermal_slowdown']

// Newer drivers name them clocks_event_reasons.*, older ones clocks_throttle_reasons.*.
const REASON_PREFIXES = ['clocks_event_reasons', 'clocks_throttle_reasons'] as const
type ReasonPrefix = (typeof REASON_PREFIXES)[number] | null

/** One CSV line of nvidia-smi (`, ` separated) into trimmed fields. */
function splitCsvLine(line: string): string[] {
  return line.split(',').map((f) => f.trim())
}

function lines(stdout: string): string[] {
  return stdout
    .split(/\r?\n/)
    .map((l) => l.trim())
    .filter((l) => l !== '')
}

/** A numeric field, or null for [N/A], [Not Supported] and anything not a number. */
export function numberField(value: string | undefined): number | null {
  if (value === undefined) return null
  const v = value.trim()
  if (v === '' || /n\/a|not supported|unknown|err/i.test(v)) return null
  const n = Number(v)
  return Number.isFinite(n) ? n : null
}

function textField(value: string | undefined): string {
  const v = value?.trim() ?? ''
  return v === '' || /^\[?(n\/a|not supported)\]?$/i.test(v) ? 'unknown' : v
}

/** GPU inventory for the environment record. */
export interface GpuInventory {
  names: string[]
  count: number | 'unknown'
  driver_version: string
  cuda_version: string
  clocks: string
}

const UNKNOWN_INVENTORY: GpuInventory = { names: [], count: 'unknown', driver_version: 'unknown', cuda_version: 'unknown', clocks: 'unknown' }

/** The inventory when nothing is known (no nvidia-smi, or the server is on another host). */
export function unknownGpuInventory(): GpuInventory {
  return { ...UNKNOWN_INVENTORY, names: [] }
}

/** Names, count, driver, CUDA version and clocks of the local GPUs; every field 'unknown' without nvidia-smi. */
export async function queryGpuInventory(exec: ExecFn): Promise<GpuInventory> {
  const fields = ['index', 'name', 'driver_version', 'clocks.sm', 'clocks.max.sm', 'clocks.mem', 'clocks.max.mem']
  const res = await exec('nvidia-smi', [`--query-gpu=${fields.join(',')}`, '--format=csv,noheader,nounits'])
  if (!res) return unknownGpuInventory()
  const rows = lines(res.stdout)
    .map(splitCsvLine)
    .filter((r) => r.length >= fields.length)
  if (rows.length === 0) return unknownGpuInventory()
  const drivers = [...new Set(rows.map((r) => textField(r[2])))]
  const clocks = rows
    .map((r) => {
      const mhz = (v: string | undefined): string => (numberField(v) === null ? '?' : String(numberField(v)))
      return `GPU${textField(r[0])} SM ${mhz(r[3])}/${mhz(r[4])} MHz, memory ${mhz(r[5])}/${mhz(r[6])} MHz (current/max)`
    })
    .join('; ')
  // The CUDA version the driver supports is printed only in the plain report's header.
  const plain = await exec('nvidia-smi', [])
  const cuda = plain ? /CUDA Version:\s*([0-9][0-9.]*)/.exec(plain.stdout)?.[1] : undefined
  return {
    names: rows.map((r) => textField(r[1])),
    count: rows.length,
    driver_version: drivers.join(', '),
    cuda_version: cuda ?? 'unknown',
    clocks,
  }
}

/** A GPU's UUID as nvidia-smi prints it (`GPU-…`, or `MIG-…` for a MIG instance). */
const UUID = /^(GPU|MIG)-[0-9a-f-]+$/i

/** The UUIDs of this host's GPUs, in nvidia-smi's order; [] when nvidia-smi is absent or prints none. */
export async function queryGpuUuids(exec: ExecFn): Promise<string[]> {
  const res = await exec('nvidia-smi', ['--query-gpu=uuid', '--format=csv,noheader'])
  if (!res) return []
  const uuids = lines(res.stdout)
  // Anything but a list of UUIDs (an error text, another query's answer) proves no GPU's identity.
  return uuids.length > 0 && uuids.every((u) => UUID.test(u)) ? uuids : []
}

/**
 * Which compute processes count as foreign (sharing the GPU with the server):
 * - `pids`: the server's own processes are known; every other pid is foreign.
 * - `group`: servegate started the server in its own process group `pgid` (the leader's pid);
 *   a process in that group is the server's, any other on the same GPU is foreign (another
 *   engine included). A GPU none of whose processes is in the group (an engine in a container
 *   is not the command's child; nvidia-smi reporting another pid namespace's pids) falls back
 *   to `unknown`. With `gpus` (the server's
 *   CUDA_VISIBLE_DEVICES: indices or UUIDs), only those GPUs are counted; the others' samples
 *   keep `foreign_processes: null`.
 * - `remote`: the server runs elsewhere, so every process on this host's GPUs is foreign to it.
 * - `unknown` (default): one process per GPU is taken to be the server (an engine runs one
 *   worker per GPU); each further distinct process on that GPU is foreign.
 */
export type ServerProcesses =
  { kind: 'pids'; pids: readonly number[] } | { kind: 'group'; pgid: number; gpus?: readonly string[] | null } | { kind: 'remote' } | { kind: 'unknown' }

/** The GPUs a CUDA_VISIBLE_DEVICES value names ("0,1", "GPU-…"); null when unset (every GPU). */
export function visibleGpus(value: string | undefined): string[] | null {
  if (value === undefined) return null
  return value
    .split(',')
    .map((g) => g.trim())
    .filter((g) => g !== '')
}

/** Whether a GPU (its index and UUID) is among `gpus` (indices, UUIDs or UUID prefixes as CUDA takes them); null: every GPU. */
export function usesGpu(gpus: readonly string[] | null | undefined, index: string, uuid: string): boolean {
  if (gpus === null || gpus === undefined) return true
  return gpus.some((g) => (/^\d+$/.test(g) ? Number(g) === Number(index) : uuid !== '' && uuid.startsWith(g)))
}

/** Remembers which throttle-reason field prefix the local driver accepts. */
export interface SampleState {
  reasonPrefix: ReasonPrefix | undefined
}

/** One sample per GPU; [] when nvidia-smi is absent or answers nothing usable. */
export async function queryGpuSamples(
  exec: ExecFn,
  server: ServerProcesses,
  state: SampleState = { reasonPrefix: undefined },
  pgidOf: PgidReader = readProcessGroup,
): Promise<GpuSample[]> {
  const base = ['index', 'uuid', 'name', 'utilization.gpu', 'clocks.sm', 'clocks.max.sm', 'power.draw', 'temperature.gpu']
  const prefixes: ReasonPrefix[] = state.reasonPrefix !== undefined ? [state.reasonPrefix] : [...REASON_PREFIXES, null]
  let rows: string[][] | null = null
  for (const prefix of prefixes) {
    const fields = prefix ? [...base, ...THROTTLE_REASON_FIELDS.map((f) => `${prefix}.${f}`)] : base
    const res = await exec('nvidia-smi', [`--query-gpu=${fields.join(',')}`, '--format=csv,noheader,nounits'])
    if (!res) continue
    rows = lines(res.stdout)
      .map(splitCsvLine)
      .filter((r) => r.length >= fields.length)
    state.reasonPrefix = prefix
    break
  }
  if (!rows || rows.length === 0) return []
  const apps = await queryComputeApps(exec)
  return rows.map((r) => {
    const uuid = r[1] ?? ''
    const reasons = state.reasonPrefix ? THROTTLE_REASON_FIELDS.filter((_, i) => /^active$/i.test(r[base.length + i] ?? '')) : []
    return {
      index: numberField(r[0]) ?? -1,
      name: textField(r[2]),
      utilization_pct: numberField(r[3]),
      sm_clock_mhz: numberField(r[4]),
      max_sm_clock_mhz: numberField(r[5]),
      power_w: numberField(r[6]),
      temperature_c: numberField(r[7]),
      throttle_reasons: [...reasons],
      foreign_processes:
        apps === null || (server.kind === 'group' && !usesGpu(server.gpus, r[0] ?? '', uuid))
          ? null
          : countForeign(
              apps.filter((a) => a.gpuUuid === uuid),
              server,
              pgidOf,
            ),
    }
  })
}

interface ComputeApp {
  gpuUuid: string
  pid: number
  name: string
}

async function queryComputeApps(exec: ExecFn): Promise<ComputeApp[] | null> {
  const res = await exec('nvidia-smi', ['--query-compute-apps=gpu_uuid,pid,process_name', '--format=csv,noheader'])
  if (!res) return null
  const out: ComputeApp[] = []
  for (const line of lines(res.stdout)) {
    const f = splitCsvLine(line)
    const pid = numberField(f[1])
    if (f.length < 3 || pid === null) continue // e.g. "No running processes found"
    out.push({ gpuUuid: f[0]!, pid, name: f.slice(2).join(',') })
  }
  return out
}

/** Foreign processes among one GPU's compute apps (see ServerProcesses). */
export function countForeign(apps: readonly Pick<ComputeApp, 'pid'>[], server: ServerProcesses, pgidOf: PgidReader = readProcessGroup): number {
  const pids = [...new Set(apps.map((a) => a.pid))]
  if (server.kind === 'pids') return pids.filter((p) => !server.pids.includes(p)).length
  if (server.kind === 'remote') return pids.length
  if (server.kind === 'group') {
    const own = pids.filter((p) => pgidOf(p) === server.pgid).length
    // No process of the group on this GPU: the server's cannot be told apart, so one of them is taken to be it.
    return own > 0 ? pids.length - own : Math.max(0, pids.length - 1)
  }
  return Math.max(0, pids.length - 1)
}
