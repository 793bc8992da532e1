/**
 * The A/B verdict (`servegate ab`): the reference A and the candidate B are
 * measured in alternating slots on the same host in one job, so the day-to-day
 * drift that a stored baseline must allow for is absent, and a slow drift of
 * the host over the job is cancelled by the counterbalanced order (A B, B A,
 * A B, …). Each metric is decided from PAIRED differences: slot r of B against
 * slot r of A (the two are adjacent in time), d_r = ln(B_r / A_r) oriented so
 * positive is worse.
 *
 * Rule (the same shape as decide.ts, with the paired noise in place of the
 * history's): D = mean of the d_r; σ_pair = the sample SD of the d_r, blended
 * with a prior of √2 · withinFloor (each side's own run-to-run noise) worth
 * PRIOR_DF degrees of freedom, so three pairs that agree by luck do not make a
 * bar of zero; σ_D = σ_pair / √n; bar L = max(ln(1 + tol), k · σ_D) (earlyK
 * while fewer than MIN_PAIRS_FOR_K = 10 pairs, i.e. up to 9 rounds);
 * regression when D > L and the pairs agree (at most one in five points the
 * other way); improvement mirrored; pass when D ≤ L − passMargin · σ_D;
 * undecided in between. Pure. Power and cost: bench/ab-power.ts.
 */
import type { Decision } from './decide.js'
import { allowedDisagreements, noDecision } from './decide.js'
import type { FigureRun } from './extract.js'
import type { GateOptions } from './types.js'

/** Degrees of freedom the √2 · withinFloor prior is worth in σ_pair. */
export const PRIOR_DF = 4
/**
 * Below this many pairs the bar uses earlyK: a t quantile with few df is far above k, and
 * one disturbed slot moves a short series' mean and spread alike. Was 5; bench/ab-power.ts
 * (run CV 2–3 %, 3 % of runs 8–20 % worse, 4 gated metrics) showed k = 2.5 at 6 and 8 pairs
 * crying wolf on 2.9 % and 1.2 % of unchanged PRs, with 25–29 % undecided; earlyK there
 * gives 0.7 % and 0.4 % with ~10 % undecided, still detects every 10 % slowdown, and
 * catches 5 % ones 6–8 points less often. From 10 pairs on, k = 2.5 holds about 1 % and
 * less (docs/gate.md, "A/B verdict").
 */
export const MIN_PAIRS_FOR_K = 10

type PairedOptions = Pick<GateOptions, 'k' | 'earlyK' | 'passMargin' | 'withinFloor'>

export interface PairedInput {
  /** [A, B] values of the slots where both runs are valid, in slot order. */
  pairs: ReadonlyArray<readonly [number, number]>
  higherIsBetter: boolean
  /** Fraction, e.g. 0.05. */
  tolerance: number
}

const ln = (x: number): number => (x > 0 ? Math.log(x) : -Infinity)

/** Decide one metric from paired slots; the Decision's baseline/candidate are the geometric means of A and B. */
export function decidePaired(input: PairedInput, opts: PairedOptions): Decision {
  const n = input.pairs.length
  const base = noDecision(n, n, 0)
  if (n === 0) {
    base.notes.push('no slot where both A and B have a valid run')
    return base
  }
  const logsA = input.pairs.map(([a]) => ln(a))
  const logsB = input.pairs.map(([, b]) => ln(b))
  const zerosA = logsA.filter((x) => !Number.isFinite(x)).length
  const zerosB = logsB.filter((x) => !Number.isFinite(x)).length
  if (zerosA > 0 || zerosB > 0) {
    // A zero (throughput at an unreachable target) has no log distance: decide by agreement.
    base.baseline = zerosA === n ? 0 : null
    base.candidate = zerosB === n ? 0 : null
    if (zerosA === n && zerosB === n) {
      base.notes.push('zero on both sides (the target is unreachable for A and for B)')
      return { ...base, status: 'pass' }
    }
    const candidateZero = zerosB >= n - allowedDisagreements(n) && zerosA <= allowedDisagreements(n)
    const referenceZero = zerosA >= n - allowedDisagreements(n) && zerosB <= allowedDisagreements(n)
    if (candidateZero || referenceZero) {
      base.notes.push(candidateZero ? 'B dropped to zero' : 'B rose from zero')
      return { ...base, status: candidateZero === input.higherIsBetter ? 'regression' : 'improvement' }
    }
    base.notes.push(`zeros in ${zerosA} A and ${zerosB} B slots of ${n}`)
    return { ...base, status: 'undecided' }
  }
  const sign = input.higherIsBetter ? -1 : 1
  const diffs = input.pairs.map((_, i) => sign * ((logsB[i] as number) - (logsA[i] as number)))
  const d = diffs.reduce((s, x) => s + x, 0) / n
  const meanA = logsA.reduce((s, x) => s + x, 0) / n
  const meanB = logsB.reduce((s, x) => s + x, 0) / n
  base.baseline = Math.exp(meanA)
  base.candidate = Math.exp(meanB)
  const df = n - 1
  const s2 = df > 0 ? diffs.reduce((s, x) => s + (x - d) ** 2, 0) / df : 0
  const prior2 = 2 * opts.withinFloor * opts.withinFloor
  const pair2 = (df * s2 + PRIOR_DF * prior2) / (df + PRIOR_DF)
  const sigma = Math.sqrt(pair2 / n)
  const k = n < MIN_PAIRS_FOR_K ? Math.max(opts.k, opts.earlyK) : opts.k
  const bar = Math.max(Math.log(1 + input.tolerance), k * sigma)
  const passBar = bar - opts.passMargin * sigma
  Object.assign(base, { d, bar, margin: bar - passBar, sigma, mdc: bar + 1.645 * sigma })
  const worse = diffs.filter((x) => x > 0).length
  const better = diffs.filter((x) => x < 0).length
  if (d > bar) {
    if (worse >= n - allowedDisagreements(n)) return { ...base, status: 'regression' }
    base.notes.push(`only ${worse} of ${n} pairs have B worse than A`)
    return { ...base, status: 'undecided' }
  }
  if (-d > bar) return { ...base, status: better >= n - allowedDisagreements(n) ? 'improvement' : 'pass' }
  if (d <= passBar) return { ...base, status: 'pass' }
  base.notes.push(`the paired change lies between the pass threshold and the bar (${n} pairs); more rounds would narrow it`)
  return { ...base, status: 'undecided' }
}

/** [A, B] values of the repeats valid on both sides, in repeat order. */
export function pairUp(a: readonly FigureRun[], b: readonly FigureRun[]): Array<[number, number]> {
  const usable = (r: FigureRun): boolean => r.valid && r.value !== null
  const byRepeat = new Map(a.filter(usable).map((r) => [r.repeat, r.value as number]))
  return b
    .filter(usable)
    .filter((r) => byRepeat.has(r.repeat))
    .sort((x, y) => x.repeat - y.repeat)
    .map((r) => [byRepeat.get(r.repeat) as number, r.value as number])
}
