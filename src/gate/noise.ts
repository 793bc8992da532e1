/**
 * Noise of one metric from the baseline history, in natural-log units (so σ is
 * a relative spread: 0.02 ≈ 2 %). Two components:
 * - within: run-to-run spread inside one refresh (same day, same machine);
 * - day: extra spread between refreshes (drift, placement, thermals) that more
 *   repeats on the same day cannot average away.
 * With three runs a standard deviation is uncertain by 0.5×–6×, so each
 * component has a prior (`withinFloor`, `dayFloor`) worth `minHistory − 1`
 * degrees of freedom: with a short history the prior dominates, with a long
 * one the data do, and a history noisier than the prior is never talked down.
 *
 * Runs of one refresh say nothing about drift between days: a server can agree
 * with itself within 0.3 % and still move 3 % from one start to the next. So
 * while the history is too short to show that drift, the day prior is a
 * conservative `shortDayFloor`, and `dayFloor` once the refreshes reach
 * `minHistory` (see `dayPrior`).
 */
import { chi2MedianRatio, chi2Ratio, clippedSd, median, sampleVariance, varMedianFactor } from './stats.js'
import type { GateOptions } from './types.js'

export interface Noise {
  /** Run-to-run σ². */
  within2: number
  /**
   * Run-to-run σ² of the candidate: `within2`, unless the candidate's own runs spread
   * significantly wider (a disturbed runner today), then their sample variance.
   */
  candidateWithin2: number
  /** Day-to-day σ² (beyond what the runs' own spread explains). */
  day2: number
  /** Variance of the baseline centre (median of the newest refresh medians). */
  center2: number
  /** Refreshes with data, and those forming the centre. */
  refreshes: number
  window: number
}

type NoiseOptions = Pick<GateOptions, 'centerWindow' | 'minHistory' | 'dayFloor' | 'shortDayFloor' | 'withinFloor'>

/**
 * Day-to-day σ assumed for a history of `refreshes`: `shortDayFloor` while it has fewer
 * than `minHistory` refreshes, `dayFloor` from then on (never below `dayFloor`). The
 * prior keeps its weight of `minHistory − 1` degrees of freedom either way, so the
 * history's own drift counts for more with every refresh: with a quiet history the
 * short-history floor fades from 3.5 % (1 refresh) to 2.6 % (4 refreshes) at the
 * defaults. It does not fade faster: the spread of 2–4 refresh medians is so uncertain
 * that trusting it sooner let 3 % per-start drift through as regressions
 * (bench/gate-power.ts, per-start scenario).
 */
export function dayPrior(refreshes: number, opts: Pick<GateOptions, 'minHistory' | 'dayFloor' | 'shortDayFloor'>): number {
  return refreshes < opts.minHistory ? Math.max(opts.dayFloor, opts.shortDayFloor) : opts.dayFloor
}

/** Floor that fades with evidence: the estimate, unless it is below the prior, then a df-weighted blend. */
function withPrior(est2: number, df: number, prior: number, priorDf: number): number {
  const prior2 = prior * prior
  if (est2 >= prior2 || priorDf <= 0) return est2
  return (df * est2 + priorDf * prior2) / (df + priorDf)
}

/** Estimate the noise of one metric from its history (log values per refresh, oldest first) and the candidate's log values. */
export function estimateNoise(historyLogs: readonly number[][], candidateLogs: readonly number[], opts: NoiseOptions): Noise {
  const refreshes = historyLogs.filter((r) => r.length > 0)
  const priorDf = Math.max(0, opts.minHistory - 1)
  // Within: pooled variance of the refreshes, after dropping any refresh whose variance is
  // implausible for the pool's robust scale (an interference outlier among its runs) —
  // robust like a median of variances, but with nearly all the degrees of freedom.
  const groups = refreshes.filter((g) => g.length >= 2)
  let within2 = 0
  let withinDf = 0
  if (groups.length > 0) {
    const vars = groups.map((g) => ({ v: sampleVariance(g), df: g.length - 1 }))
    const typicalDf = median(vars.map((g) => g.df))
    const robust2 = median(vars.map((g) => g.v)) / chi2MedianRatio(typicalDf)
    const kept = vars.filter((g) => g.v <= robust2 * chi2Ratio(g.df, 2.576))
    withinDf = kept.reduce((a, g) => a + g.df, 0)
    within2 = withinDf > 0 ? kept.reduce((a, g) => a + g.v * g.df, 0) / withinDf : robust2
  }
  within2 = withPrior(within2, withinDf, opts.withinFloor, priorDf * 2)
  // One-sided 95 % test of the candidate's spread against the history's: wider means
  // interference or a sick runner, and its median deserves less trust.
  // From five runs on the median shrugs off a single stray run, so the spread may as well.
  const candVar = candidateLogs.length >= 5 ? clippedSd(candidateLogs) ** 2 : sampleVariance(candidateLogs)
  const candidateWithin2 =
    candidateLogs.length >= 2 && candVar > within2 * chi2Ratio(candidateLogs.length - 1, 1.645) ? candVar : within2

  // Day: spread of refresh medians minus the part the runs' own noise explains.
  const runsPerRefresh = refreshes.length > 0 ? Math.round(median(refreshes.map((r) => r.length))) : 1
  let day2 = 0
  if (refreshes.length >= 2) {
    const medSd = clippedSd(refreshes.map((r) => median(r)))
    day2 = Math.max(0, medSd * medSd - varMedianFactor(runsPerRefresh) * within2)
  }
  day2 = withPrior(day2, Math.max(0, refreshes.length - 1), dayPrior(refreshes.length, opts), priorDf)

  const window = Math.min(opts.centerWindow, refreshes.length)
  const refresh2 = day2 + varMedianFactor(runsPerRefresh) * within2
  const center2 = window > 0 ? varMedianFactor(window) * refresh2 : Infinity
  return { within2, candidateWithin2, day2, center2, refreshes: refreshes.length, window }
}

/** σ of D (log units) for a candidate median over `nCandidate` runs measured on one day. */
export function sigmaDiff(noise: Noise, nCandidate: number): number {
  return Math.sqrt(noise.day2 + varMedianFactor(nCandidate) * noise.candidateWithin2 + noise.center2)
}
