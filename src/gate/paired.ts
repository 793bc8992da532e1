/**
 * The A/B verdict (`servegate ab`, and the last step of the gate's ladder): the
 * reference A and the candidate B are measured in alternating slots on the
 * same host in one job, so the day-to-day drift that a stored baseline must
 * allow for is absent, and a slow drift of the host over the job is cancelled
 * by the counterbalanced order (A B, B A, A B, …). Each metric is decided from
 * PAIRED differences: round r of B against round r of A (adjacent in time),
 * d_r = ln(B_r / A_r) oriented so positive is worse.
 *
 * Rule (decide.ts's bars, with the paired noise in place of the history's):
 * D = the mean of the AB-order rounds' mean and the BA-order rounds' mean, so a
 * drift over the job cancels even when a round drops out and the orders are
 * no longer balanced; s = the spread of the d_r about D (n − 1 degrees of
 * freedom); while s is below the prior √2 · withinFloor (each side's own
 * run-to-run noise) the two are blended, the prior worth PRIOR_DF degrees of
 * freedom, so a few pairs that agree by luck do not make a bar of zero — a
 * spread above the prior is taken as measured. σ_D = s · √((1/n_AB + 1/n_BA)/4);
 * the bar and the MDC use t quantiles at those degrees of freedom and the
 * row's share of the PR's false-alarm rate (decide.ts barsFor). Regression when
 * D > L and the pairs agree (at most one in five points the other way);
 * improvement mirrored; otherwise pass, unless the row is blind (its MDC is
 * above maxMdcPct). Pure. Power and cost: `npm run bench -- gate-false-alarms`.
 */
import type { Decision, DecideOptions } from './decide.js'
import { allowedDisagreements, barsFor, isBlind, mdcLimit, noDecision, rowLevel, worsePctOf } from './decide.js'
import type { FigureRun } from './extract.js'
import { withPrior } from './noise.js'
import { robustSd } from './stats.js'
import { median } from '../util/median.js'

/** Degrees of freedom the √2 · withinFloor prior is worth in σ_pair, while the pairs spread less than it. */
export const PRIOR_DF = 4

type PairedOptions = Pick<DecideOptions, 'alpha' | 'rows' | 'alphaShare' | 'look' | 'screenMdc' | 'power' | 'passMargin' | 'withinFloor' | 'maxMdcPct'>

export interface PairedInput {
  /** [A, B] values of the rounds where both runs are valid, in round order. */
  pairs: ReadonlyArray<readonly [number, number]>
  /** Round (0-based) of each pair: even rounds ran A then B, odd ones B then A. Absent: 0, 1, 2, … */
  rounds?: readonly number[]
  /**
   * The engine start of each pair's A and of its B (ids per side). Slots that share a start share
   * its offset, so their pairs are not independent: with two or more starts on each side, what the
   * shared offsets add to D's variance is estimated (sharedStartVariance). Absent: every pair its
   * own start on both sides.
   */
  starts?: ReadonlyArray<readonly [number, number]>
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
  const allDiffs = input.pairs.map((_, i) => sign * ((logsB[i] as number) - (logsA[i] as number)))
  const allRounds = input.rounds ?? input.pairs.map((_, i) => i)
  // From five pairs on, a pair worse than the others by 3 robust σ (and by 3 × the prior pair noise:
  // one B slot on a disturbed node) is left out of D and of the spread, as a refresh's stray run is
  // left out of the history's.
  // Residuals about each order's own median: a drift over the job parts the AB and BA orders,
  // and must not make either order look like outliers of the other.
  const orderOf = (i: number): number => (allRounds[i] ?? i) % 2
  const orderMedian = [0, 1].map((o) => {
    const xs = allDiffs.filter((_, i) => orderOf(i) === o)
    return xs.length > 0 ? median(xs) : 0
  })
  const residuals = allDiffs.map((x, i) => x - orderMedian[orderOf(i)]!)
  // The robust scale never below the prior pair noise: among pairs that agree to 0.1 %, a 1 % one is no stray.
  const s0 = n >= 5 ? Math.max(robustSd(residuals), Math.SQRT2 * opts.withinFloor) : 0
  // Only strays in the worse direction are left out: they are what a disturbed B slot makes, and could
  // make a false regression; a stray the other way only makes a regression harder to call.
  const keep = residuals.map((r) => s0 === 0 || r <= 3 * s0)
  const diffs = allDiffs.filter((_, i) => keep[i])
  const rounds = allRounds.filter((_, i) => keep[i])
  if (diffs.length < n) base.notes.push(`${n - diffs.length} of ${n} pairs left out as outliers (beyond 3 robust σ of the others)`)
  const ab = diffs.filter((_, i) => (rounds[i] ?? i) % 2 === 0)
  const ba = diffs.filter((_, i) => (rounds[i] ?? i) % 2 === 1)
  const mean = (xs: readonly number[]): number => xs.reduce((a, x) => a + x, 0) / xs.length
  // Both orders present: weigh them equally, so a drift over the job cancels however many rounds each kept.
  const balanced = ab.length > 0 && ba.length > 0
  const d = balanced ? (mean(ab) + mean(ba)) / 2 : mean(diffs)
  const varFactor = balanced ? (1 / ab.length + 1 / ba.length) / 4 : 1 / diffs.length
  base.baseline = Math.exp(mean(logsA))
  base.candidate = Math.exp(mean(logsB))
  const dataDf = diffs.length - 1
  const s2 = dataDf > 0 ? diffs.reduce((a, x) => a + (x - d) ** 2, 0) / dataDf : 0
  const pair = withPrior(s2, dataDf, Math.SQRT2 * opts.withinFloor, PRIOR_DF)
  let sigma = Math.sqrt(pair.v * varFactor)
  let df = pair.df
  const shared =
    input.starts === undefined
      ? null
      : sharedStartVariance(
          input.pairs.map((_, i) => i).filter((i) => keep[i]),
          allDiffs,
          input.starts,
          allRounds,
          pair.v,
        )
  if (shared !== null && shared.extra > 0) {
    // Pairs that share an engine start share its offset: D varies more than independent pairs would
    // make it, and its degrees of freedom shrink with the part the shared offsets add.
    const naive = pair.v * varFactor
    sigma = Math.sqrt(naive + shared.extra)
    // The start offsets are measured by the starts alone (two side means fitted): as the part they add
    // grows, the degrees of freedom fall from the pairs' towards starts − 2, never below it.
    const floor = Math.max(1, Math.min(pair.df, shared.starts - 2))
    df = floor + (pair.df - floor) * (naive / (naive + shared.extra))
  }
  const bars = barsFor(sigma, df, input.tolerance, opts)
  const blind = isBlind(bars, input.higherIsBetter, input.tolerance, opts)
  Object.assign(base, { d, bar: bars.bar, margin: bars.bar - bars.passBar, sigma, mdc: bars.mdc, blind, level: rowLevel(opts), df: bars.df })
  const worse = diffs.filter((x) => x > 0).length
  const better = diffs.filter((x) => x < 0).length
  const agree = diffs.length - allowedDisagreements(diffs.length)
  if (d > bars.bar) {
    if (worse >= agree) return { ...base, status: 'regression' }
    base.notes.push(`only ${worse} of ${diffs.length} pairs have B worse than A`)
    return { ...base, status: 'undecided' }
  }
  if (-d > bars.bar && better >= agree) return { ...base, status: 'improvement' }
  if (blind) {
    const mdc = Number.isFinite(bars.mdc) ? `${worsePctOf(bars.mdc, input.higherIsBetter).toFixed(1)} %` : 'unknown'
    base.notes.push(
      `blind: the smallest change ${n === 1 ? 'one pair' : `these ${n} pairs`} would catch ${Math.round(opts.power * 100)} % of the time is ${mdc}, more than ${mdcLimit(opts, input.tolerance)} %; more rounds would give it power`,
    )
    return { ...base, status: 'undecided' }
  }
  if (d <= bars.passBar || -d > bars.bar) return { ...base, status: 'pass' }
  base.notes.push(`the paired change lies between the pass threshold and the bar (${n} pairs); more rounds would narrow it`)
  return { ...base, status: 'undecided' }
}

/**
 * What shared engine starts add to the variance of D. D = Σ w_p d_p over the kept pairs (each
 * weighed 1 / (2 · pairs of its order), both orders equally). Two pairs whose A slots, or whose B
 * slots, ran on one engine start share that start's offset: cov(d_p, d_q) = σ_u², the variance of
 * a start's offset, which the pairs' own spread does not show. σ_u² is estimated from the
 * products of the residuals (about each order's mean) of the pairs that share a start, kept
 * between 0 and the pair variance `pairVar`; extra = σ_u² · Σ_{p≠q sharing} w_p w_q. A shared
 * host drift (both slots of a round) cancels in each d_p and adds nothing. Null when no two kept
 * pairs share a start (a resident job: every pair shares both starts, and the offsets are the
 * gap between the two engines that no design of one host can separate from B's change).
 */
export function sharedStartVariance(
  kept: readonly number[],
  diffs: readonly number[],
  starts: ReadonlyArray<readonly [number, number]>,
  rounds: readonly number[],
  pairVar: number,
): { extra: number; sigmaU2: number; starts: number } | null {
  const orderOf = (i: number): number => (rounds[i] ?? i) % 2
  const inOrder = [0, 1].map((o) => kept.filter((i) => orderOf(i) === o).length)
  const balanced = inOrder[0]! > 0 && inOrder[1]! > 0
  const weight = (i: number): number => (balanced ? 1 / (2 * inOrder[orderOf(i)]!) : 1 / kept.length)
  const orderMean = [0, 1].map((o) => {
    const xs = kept.filter((i) => orderOf(i) === o).map((i) => diffs[i]!)
    return xs.length > 0 ? xs.reduce((a, x) => a + x, 0) / xs.length : 0
  })
  const resid = (i: number): number => diffs[i]! - orderMean[orderOf(i)]!
  const idsA = new Set(kept.map((i) => starts[i]![0]))
  const idsB = new Set(kept.map((i) => starts[i]![1]))
  // One start on a side: every pair shares it, and nothing tells its offset from B's change.
  if (idsA.size < 2 || idsB.size < 2) return null
  let products = 0
  let count = 0
  let w2 = 0
  for (const p of kept) {
    for (const q of kept) {
      if (q <= p) continue
      const sameA = starts[p]![0] === starts[q]![0]
      const sameB = starts[p]![1] === starts[q]![1]
      if (!sameA && !sameB) continue
      const k = (sameA ? 1 : 0) + (sameB ? 1 : 0)
      products += (resid(p) * resid(q)) / k
      count++
      w2 += 2 * k * weight(p) * weight(q)
    }
  }
  if (count === 0) return null
  // Residuals about the order means are shrunk by the means' own fit: scale as a variance would be.
  const n = kept.length
  const sigmaU2 = Math.min(pairVar, Math.max(0, (products / count) * (n / Math.max(1, n - 2))))
  return { extra: sigmaU2 * w2, sigmaU2, starts: idsA.size + idsB.size }
}

/** [A, B] values of the repeats valid on both sides, in repeat order, with each pair's round (its repeat). */
export function pairUp(a: readonly FigureRun[], b: readonly FigureRun[]): { pairs: Array<[number, number]>; rounds: number[] } {
  const usable = (r: FigureRun): boolean => r.valid && r.value !== null
  const byRepeat = new Map(a.filter(usable).map((r) => [r.repeat, r.value as number]))
  const kept = b
    .filter(usable)
    .filter((r) => byRepeat.has(r.repeat))
    .sort((x, y) => x.repeat - y.repeat)
  return { pairs: kept.map((r) => [byRepeat.get(r.repeat) as number, r.value as number]), rounds: kept.map((r) => r.repeat) }
}
