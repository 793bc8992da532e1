/** What changed in the environment between a baseline and a candidate, and whether they can be compared at all. */
import type { EnvRecord } from '../types.js'
import type { EnvChange } from './types.js'

const FIELDS: Array<[string, (e: EnvRecord) => string]> = [
  ['engine', (e) => `${e.engine.name} ${e.engine.version}`],
  ['model', (e) => e.model.id],
  ['model revision', (e) => e.model.revision],
  ['GPU', (e) => gpuNames(e)],
  ['GPU count', (e) => String(e.gpu.count)],
  ['driver', (e) => e.gpu.driver_version],
  ['CUDA', (e) => e.gpu.cuda_version],
  ['container digest', (e) => e.container_digest],
  ['serve command', (e) => e.serve_command],
]

function gpuNames(e: EnvRecord): string {
  if (e.gpu.names.length === 0) return 'unknown'
  // Count identical names so "2 × H100" and "H100, H100" compare equal regardless of order.
  const counts = new Map<string, number>()
  for (const n of e.gpu.names) counts.set(n, (counts.get(n) ?? 0) + 1)
  return [...counts.entries()]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([n, c]) => (c > 1 ? `${c} × ${n}` : n))
    .join(', ')
}

export interface EnvDiff {
  changes: EnvChange[]
  /** Reasons the two environments cannot be compared (different GPU model or count); empty if comparable. */
  incomparable: string[]
}

/** Field-by-field differences, and the GPU changes that make a comparison meaningless. */
export function diffEnv(baseline: EnvRecord, candidate: EnvRecord): EnvDiff {
  const changes: EnvChange[] = []
  const incomparable: string[] = []
  for (const [field, get] of FIELDS) {
    const b = get(baseline)
    const c = get(candidate)
    if (b === c) continue
    changes.push({ field, baseline: b, candidate: c })
    // An unknown side cannot prove a different machine; it is shown as a change, not a block.
    if ((field === 'GPU' || field === 'GPU count') && b !== 'unknown' && c !== 'unknown') {
      incomparable.push(`${field} differs: baseline ${b}, candidate ${c}`)
    }
  }
  return { changes, incomparable }
}
