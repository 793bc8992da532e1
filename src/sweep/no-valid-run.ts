/**
 * Whether a sweep measured anything valid. A sweep with no valid run (every request refused,
 * too few requests, a starved client) must not pass for a success: `servegate run` exits 1
 * and the Action's full mode without a baseline fails its step.
 */
import type { ResultFile } from '../types.js'

/**
 * Null when some run of the result is valid; else why none is, in a phrase:
 * "3 runs: requests_failed ×3, too_few_requests ×1" (a run may have several issues).
 */
export function noValidRun(result: ResultFile): string | null {
  const runs = result.points.flatMap((p) => p.runs)
  if (runs.some((r) => r.validity.valid)) return null
  const counts = new Map<string, number>()
  for (const r of runs) for (const code of new Set(r.validity.issues.map((i) => i.code))) counts.set(code, (counts.get(code) ?? 0) + 1)
  const codes = [...counts].map(([code, n]) => `${code} ×${n}`).join(', ')
  return `${runs.length} run${runs.length === 1 ? '' : 's'}${codes === '' ? '' : `: ${codes}`}`
}
