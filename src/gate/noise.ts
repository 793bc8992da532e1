/**
 * Noise of one metric from the baseline history, in natural-log units (so σ is
 * a relative spread: 0.02 ≈ 2 %). Two components:
 * - within: run-to-run spread inside one refresh (same day, same engine start);
 * - day: extra spread between refreshes (drift, placement, thermals, the
 *   engine's start) that more repeats on the same day cannot average away.
 * With three runs a standard deviation is uncertain by 0.5×–6×, so each
 * component has a prior (`withinFloor`, `dayFloor`) worth `minHistory − 1`
 * degrees of freedom that the data are blended with while they show less
 * spread than it: a short history leans on the prior, a long one on its own
 * data, and a history noisier than the prior is never talked down. The prior
 * is one level at every history length (no step), and the degrees of freedom
 * the estimate rests on are returned, so the decision uses t quantiles that
 * widen the bar exactly as much as the sample is small (./decide.ts).
 */
import { chi2MedianRatio, chi2Ratio, clippedSd, sampleVariance, varMedianFactor } from './stats.js'
import { median } from '../util/median.js'
import type { GateOptions } from './types.js'

export interface Noise {
  /** Run-to-run σ², and the degrees of freedom behind it. */
  within2: number
  withinDf: number
  /**
   * Run-to-run σ² of the candidate: `within2`, unless the candidate's own runs spread
   * significantly wider (a disturbed runner today), then their sample variance.
   */
  candidateWithin2: number
  /**
   * Degrees of freedom of candidateWithin2: withinDf, also when the candidate's own wider spread is
   * used — that spread is a protective inflation for a disturbed runner (one stray run among three
   * makes it), and its n − 1 = 2 degrees of freedom in a t quantile would blind the row outright.
   */
  candidateDf: number
  /** Day-to-day σ² (beyond what the runs' own spread explains), and its degrees of freedom. */
  day2: number
  dayDf: number
  /** Variance of the baseline centre (median of the newest refresh medians). */
  center2: number
  /** Refreshes with data, and those forming the centre, and the typical runs per refresh. */
  refreshes: number
  window: number
  runsPerRefresh: number
}

type NoiseOptions = Pick<GateOptions, 'centerWindow' | 'minHistory' | 'dayFloor' | 'withinFloor'>

/**
 * The estimate, unless it is below the prior, then a df-weighted blend; with the degrees of
 * freedom the result rests on. Above the prior the prior's weight fades with (prior² / est²)²
 * instead of vanishing, so neither σ nor its df (and with them the bar) jumps where the data
 * cross the prior.
 */
export function withPrior(est2: number, df: number, prior: number, priorDf: number): { v: number; df: number } {
  const prior2 = prior * prior
  if (priorDf <= 0) return { v: est2, df }
  if (est2 >= prior2) return { v: est2, df: df + priorDf * (prior2 / est2) ** 2 }
  return { v: (df * est2 + priorDf * prior2) / (df + priorDf), df: df + priorDf }
}

/** Estimate the noise of one metric from its history (log values per refresh, oldest first) and the candidate's log values. */
export function estimateNoise(historyLogs: readonly number[][], candidateLogs: readonly number[], opts: NoiseOptions): Noise {
  const refreshes = historyLogs.filter((r) => r.length > 0)
  const priorDf = Math.max(0, opts.minHistory - 1)
  // Within: pooled variance of the refreshes, after dropping any refresh whose variance is
  // implausible for the pool's robust scale (an interference outlier among its runs) —
  // robust like a median of variances, but with nearly all the degrees of freedom.
  const groups = refreshes.filter((g) => g.length >= 2)
  let rawWithin2 = 0
  let rawWithinDf = 0
  if (groups.length > 0) {
    const vars = groups.map((g) => ({ v: sampleVariance(g), df: g.length - 1 }))
    const typicalDf = median(vars.map((g) => g.df))
    const robust2 = median(vars.map((g) => g.v)) / chi2MedianRatio(typicalDf)
    const kept = vars.filter((g) => g.v <= robust2 * chi2Ratio(g.df, 2.576))
    rawWithinDf = kept.reduce((a, g) => a + g.df, 0)
    rawWithin2 = rawWithinDf > 0 ? kept.reduce((a, g) => a + g.v * g.df, 0) / rawWithinDf : robust2
  }
  const within = withPrior(rawWithin2, rawWithinDf, opts.withinFloor, priorDf * 2)
  // One-sided 95 % test of the candidate's spread against the history's: wider means
  // interference or a sick runner, and its median deserves less trust.
  // From five runs on the median shrugs off a single stray run, so the spread may as well.
  const candVar = candidateLogs.length >= 5 ? clippedSd(candidateLogs) ** 2 : sampleVariance(candidateLogs)
  const wider = candidateLogs.length >= 2 && candVar > within.v * chi2Ratio(candidateLogs.length - 1, 1.645)

  // Day: spread of refresh medians minus the part the runs' own noise explains.
  const runsPerRefresh = refreshes.length > 0 ? Math.round(median(refreshes.map((r) => r.length))) : 1
  let rawDay2 = 0
  if (refreshes.length >= 2) {
    const medSd = clippedSd(refreshes.map((r) => median(r)))
    rawDay2 = Math.max(0, medSd * medSd - varMedianFactor(runsPerRefresh) * within.v)
  }
  const day = withPrior(rawDay2, Math.max(0, refreshes.length - 1), opts.dayFloor, priorDf)

  const window = Math.min(opts.centerWindow, refreshes.length)
  const refresh2 = day.v + varMedianFactor(runsPerRefresh) * within.v
  const center2 = window > 0 ? varMedianFactor(window) * refresh2 : Infinity
  return {
    within2: within.v,
    withinDf: within.df,
    candidateWithin2: wider ? candVar : within.v,
    candidateDf: within.df,
    day2: day.v,
    dayDf: day.df,
    center2,
    refreshes: refreshes.length,
    window,
    runsPerRefresh,
  }
}

/** σ_diff of D (log units) for a candidate median over `nCandidate` runs measured on one day, and its Welch–Satterthwaite degrees of freedom. */
export function sigmaDiff(noise: Noise, nCandidate: number): { sigma: number; df: number } {
  const vmW = varMedianFactor(noise.window)
  const terms: Array<{ v: number; df: number }> = [
    // The candidate's own day, and the day part of the baseline centre.
    { v: noise.day2 * (1 + vmW), df: noise.dayDf },
    { v: varMedianFactor(nCandidate) * noise.candidateWithin2, df: noise.candidateDf },
    { v: vmW * varMedianFactor(noise.runsPerRefresh) * noise.within2, df: noise.withinDf },
  ]
  const total = terms.reduce((a, t) => a + t.v, 0)
  const denom = terms.reduce((a, t) => a + (t.v > 0 ? (t.v * t.v) / Math.max(t.df, 1e-9) : 0), 0)
  return { sigma: Math.sqrt(total), df: denom > 0 ? (total * total) / denom : Infinity }
}
