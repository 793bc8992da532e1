/**
 * The line under each shape's table saying what the figures leave out: the
 * warmup requests (run, never measured) and the ramp outside the
 * all-slots-busy window (measured, flagged when it dominates). Without it a
 * reader cannot tell a cold-start-free figure from one that includes it. Pure.
 */
import { DEFAULT_VALIDITY_THRESHOLDS } from '../analysis/validity-thresholds.js'
import { autoWarmupRequests } from '../config/defaults.js'
import type { RunResult } from '../types.js'
import { fmtInt, fmtPctRange, fmtPctShort, fmtRange } from './format.js'

/**
 * `Warmup: 4–16 requests per run discarded before measuring (…). Ramp: 3–12% …`
 * over every run of a shape (valid or not: both were run this way); null
 * before any run. `warmupSetting` is the result's config.warmup.
 */
export function warmupRampLine(runs: readonly RunResult[], warmupSetting: unknown): string | null {
  if (runs.length === 0) return null
  const warm = runs.flatMap((r) => (r.warmup_requests === null ? [] : [r.warmup_requests]))
  const most = Math.max(...warm)
  let text: string
  // Imported runs do not say how many requests warmed the server up.
  if (warm.length === 0) text = 'Warmup: not recorded.'
  else if (most === 0) text = 'Warmup: none (no request discarded before measuring).'
  else {
    // autoWarmupRequests(0) is the floor of the auto rule (max(4, C)).
    const how =
      warmupSetting === 'auto' ? ` (auto: one per slot, at least ${autoWarmupRequests(0)})` : typeof warmupSetting === 'number' ? ' (as configured)' : ''
    text = `Warmup: ${fmtRange(warm, fmtInt)} request${most === 1 ? '' : 's'} per run discarded before measuring${how}.`
  }
  const ramps = runs.flatMap((r) => (r.steady_state !== null ? [r.steady_state.ramp_fraction] : []))
  if (ramps.length === 0) return text + retriedNote(runs)
  const windowless = runs.filter((r) => r.steady_state === null && r.completed > 0).length
  const none = windowless > 0 ? ` (${windowless} run${windowless === 1 ? '' : 's'} had no such window)` : ''
  // The rule as docs/validity.md states it: C > 1, over the threshold or no window at all.
  return (
    `${text} Ramp: ${fmtPctRange(ramps)} of each run's duration fell outside the steady-state window in which all C slots were busy${none}; ` +
    `at C > 1 a run over ${fmtPctShort(DEFAULT_VALIDITY_THRESHOLDS.rampFractionMax)}, or with no such window, is flagged ramp_dominated.` +
    retriedNote(runs)
  )
}

/**
 * ` Measured again: 2 runs after the host spoiled an attempt (client_saturated 2); …` when the
 * sweep's host_retries measured runs again, else ''. The discarded attempts left out of every
 * figure are named here, so a reader knows the host was busy and how often.
 */
function retriedNote(runs: readonly RunResult[]): string {
  const retried = runs.filter((r) => (r.discarded_attempts?.length ?? 0) > 0)
  if (retried.length === 0) return ''
  const attempts = retried.flatMap((r) => r.discarded_attempts ?? [])
  const codes = new Map<string, number>()
  for (const a of attempts) for (const code of new Set(a.issues.map((i) => i.code))) codes.set(code, (codes.get(code) ?? 0) + 1)
  const why = [...codes].map(([code, n]) => `${code} ${n}`).join(', ')
  const s = (n: number): string => (n === 1 ? '' : 's')
  return (
    ` Measured again (host_retries): ${retried.length} run${s(retried.length)} after the host spoiled an attempt (${why}); ` +
    `the ${attempts.length} discarded attempt${s(attempts.length)} ${attempts.length === 1 ? 'is' : 'are'} left out of every figure and listed in the result's discarded_attempts.`
  )
}
