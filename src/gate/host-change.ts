/**
 * Whether the host under the GPUs changed between a baseline's refresh and a
 * candidate: driver, CUDA, the GPUs' maximum clocks, and the kernel and
 * platform. A change there can move the numbers as much as the pull request
 * can, so the gate says so before anything else. Pure.
 */
import type { EnvRecord } from '../types.js'

export interface HostChange {
  /** What changed: `driver`, `CUDA`, `GPU clocks`, `kernel/platform`. */
  field: string
  baseline: string
  candidate: string
}

const UNKNOWN = 'unknown'

/**
 * The GPUs' maximum SM and memory clocks, `GPU0 SM max 1980, memory max 2619 MHz; …`.
 * The recorded clocks also hold the current ones, which move with load and heat on the same
 * host, so only the maxima (set by the board, the driver and application clocks) name a host.
 */
export function maxClocks(clocks: string): string {
  if (clocks === UNKNOWN) return UNKNOWN
  const gpus = clocks.split(/;\s*/).map((one) => {
    const m = /^(\S+) SM (\S+)\/(\S+) MHz, memory (\S+)\/(\S+) MHz/.exec(one.trim())
    return m === null ? one.trim() : `${m[1]} SM max ${m[3]}, memory max ${m[5]} MHz`
  })
  return gpus.join('; ')
}

const FIELDS: Array<[string, (e: EnvRecord) => string]> = [
  ['driver', (e) => e.gpu.driver_version],
  ['CUDA', (e) => e.gpu.cuda_version],
  ['GPU clocks', (e) => maxClocks(e.gpu.clocks)],
  // `linux x64 6.8.0-45-generic`: the kernel release is the last word.
  ['kernel/platform', (e) => e.host.platform],
]

/**
 * The host fields that differ between the baseline's environment (its newest refresh) and the
 * candidate's. A side that could not see a field (`unknown`, e.g. no nvidia-smi, or a server on
 * another machine) proves no change, so that field is left out.
 */
export function hostChanges(baselineEnv: EnvRecord, candidateEnv: EnvRecord): HostChange[] {
  const out: HostChange[] = []
  for (const [field, get] of FIELDS) {
    const b = get(baselineEnv)
    const c = get(candidateEnv)
    if (b === c || b === UNKNOWN || c === UNKNOWN || b === '' || c === '') continue
    out.push({ field, baseline: b, candidate: c })
  }
  return out
}

/** `driver 550.54 → 560.28; CUDA 12.4 → 12.6` */
export function describeHostChanges(changes: readonly HostChange[]): string {
  return changes.map((c) => `${c.field} ${c.baseline} → ${c.candidate}`).join('; ')
}
