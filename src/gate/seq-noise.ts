/**
 * The noise a row's sequential test is designed with (pure; docs/gate.md,
 * "Noise from the host's history"). Increments are engine starts, so the
 * variance of one comes from the host's history of starts, not from the job:
 * the baseline's refreshes (each one start of a few runs) give the day-to-day
 * variance between starts, σ²_day, and the run-to-run variance within one,
 * σ²_w (./noise.ts estimateNoise, with its priors while the history is
 * short). Only runs of the base branch's engine write that history (refreshes,
 * the watch); a pull request's own runs never widen or narrow it.
 *
 * One start's single run varies by σ²_1 = σ²_day + σ²_w. Each component is
 * taken at its upper 90 % confidence bound, σ̂²·df/χ²_0.10(df), from the
 * degrees of freedom behind it (the history's and the prior's, at least
 * PRIOR_BOUND_DF): about 100 degrees of freedom give the factor κ ≈ 1.1 on σ,
 * 30 or fewer about 1.2, so a short history buys its false-alarm level with
 * more starts instead of losing it (an underestimate by 10 % would cost the
 * level 1.1–1.7 %).
 * Then:
 * - an A/B round whose sides were both started for their slot:
 *   v = 2 σ²_1, τ² = 0 (every round is independent);
 * - a side that is never restarted (a base URL, resident engines): its start
 *   offset is shared by every round, σ²_day moves from v to τ²;
 * - a candidate start against the stored centre: v = σ²_day + V(n)·σ²_w for
 *   a start of n runs, τ² = the centre's variance.
 * The job checks the design against its own data: when its increments
 * spread wider than v allows (a one-sided χ² test at 1 %), v becomes their
 * own upper 95 % bound, and the row says so. A job never narrows v.
 */
import { estimateNoise, type Noise } from './noise.js'
import { chi2Ratio, sampleVariance, varMedianFactor } from './stats.js'
import type { GateOptions } from './types.js'

/**
 * Degrees of freedom the priors count as in the bound: they are deliberately high values (2.5 %
 * between starts, 2 % between runs, above what a dedicated GPU node shows), so a history that
 * leans on them is not bounded as if it were three refreshes of data.
 */
export const PRIOR_BOUND_DF = 30

/** The safety factor on a variance estimated from `df` degrees of freedom: its upper 90 % bound over the estimate, df/χ²_0.10(df). */
export function safetyFactor(df: number): number {
  if (!Number.isFinite(df)) return 1
  return 1 / Math.max(1e-6, chi2Ratio(Math.max(PRIOR_BOUND_DF, df), -1.2816))
}

/** How the increments of one row were measured. */
export type IncrementSource =
  /** A/B rounds; each side either started afresh for every slot or kept up for the whole job. */
  | { kind: 'ab'; restarted: { A: boolean; B: boolean } }
  /** Candidate starts against the stored baseline's centre. */
  | { kind: 'baseline' }

export interface RowNoise {
  /** Variance of one increment of `runs` runs (per start), κ² applied. */
  v(runs: number): number
  /** Variance shared by every increment, κ² applied. */
  shared: number
  /** σ²_day and σ²_w as estimated (before their safety factors), for the report. */
  day2: number
  within2: number
  /** Refreshes the estimate rests on. */
  refreshes: number
}

type NoiseOptions = Pick<GateOptions, 'centerWindow' | 'minHistory' | 'dayFloor' | 'withinFloor'>

/**
 * The design noise of one row from its history (log values per engine start of the base engine,
 * oldest first: the noise history, then the refreshes). `centre`: how many of the newest form the
 * stored centre (a candidate start's shared variance); the history's centre window when not given.
 */
export function rowNoise(historyLogs: readonly number[][], source: IncrementSource, opts: NoiseOptions, centre?: number): RowNoise {
  const n: Noise = estimateNoise(historyLogs, [], opts)
  const window = centre ?? n.window
  const day2 = n.day2 * safetyFactor(n.dayDf)
  const within2 = n.within2 * safetyFactor(n.withinDf)
  const base = { day2: n.day2, within2: n.within2, refreshes: n.refreshes }
  if (source.kind === 'baseline') {
    // The centre's variance as noise.ts computes it, with the bounded components.
    const center2 = window > 0 ? varMedianFactor(window) * (day2 + varMedianFactor(n.runsPerRefresh) * within2) : Infinity
    return { ...base, v: (runs) => day2 + varMedianFactor(Math.max(1, runs)) * within2, shared: center2 }
  }
  const restarted = [source.restarted.A, source.restarted.B].filter((r) => r).length
  return { ...base, v: (runs) => restarted * day2 + 2 * varMedianFactor(Math.max(1, runs)) * within2, shared: (2 - restarted) * day2 }
}

/**
 * The job's check of the design variance `v` against its own increments (their spread about
 * their mean, n − 1 degrees of freedom): `v` when they agree, their upper 95 % bound when they
 * spread wider than `v` allows at 1 %. Fewer than 3 increments cannot tell.
 */
export function checkedVariance(xs: readonly number[], v: number): { v: number; wider: boolean; observed: number } {
  const df = xs.length - 1
  if (df < 2) return { v, wider: false, observed: NaN }
  const s2 = sampleVariance(xs)
  if (s2 <= v * chi2Ratio(df, 2.326)) return { v, wider: false, observed: s2 }
  return { v: Math.max(v, s2 / chi2Ratio(df, -1.645)), wider: true, observed: s2 }
}
