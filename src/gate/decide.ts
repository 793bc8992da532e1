/**
 * The decision rule for one metric (docs/gate.md): D = ln(candidate median /
 * baseline centre), oriented so positive is worse; σ_diff and its degrees of
 * freedom from ./noise.ts; the row's false-alarm level is alpha × alphaShare /
 * rows (Bonferroni over the verdict's gated rows); bar L = max(ln(1 + tol),
 * t(1 − level, df) · σ_diff); MDC = L + t(power, df) · σ_diff. Regression when
 * D > L and the candidate's runs agree. A row whose MDC exceeds maxMdcPct is
 * blind: it never passes. The band is closed: pass when D ≤ L. (This is
 * `servegate compare`'s one look; where servegate can measure again, each row
 * is a sequential test over engine starts instead: ./sequential.ts.)
 */
import { estimateNoise, sigmaDiff } from './noise.js'
import { tQuantile } from './stats.js'
import { median } from '../util/median.js'
import type { GateOptions } from './types.js'

export interface MetricInput {
  /** Valid run values per baseline refresh, oldest first (an empty list: no data that time). */
  history: readonly (readonly number[])[]
  /** Valid candidate run values. */
  candidate: readonly number[]
  higherIsBetter: boolean
  /** Fraction, e.g. 0.05. */
  tolerance: number
}

export type DecisionStatus = 'regression' | 'improvement' | 'pass' | 'undecided' | 'missing'

export interface Decision {
  status: DecisionStatus
  /** Baseline centre and candidate median, in the metric's unit (null when absent). */
  baseline: number | null
  candidate: number | null
  /** Oriented log-ratio (positive = worse); null when either side is absent. */
  d: number | null
  /** Regression bar L, width of the undecided band below it, and σ_diff, log units. */
  bar: number | null
  margin: number | null
  sigma: number | null
  /** Log change in the worse direction that is caught with probability `power` (90 % by default). */
  mdc: number | null
  /** The row could not have caught a change of maxMdcPct (its MDC is larger): it does not pass. */
  blind: boolean
  /** One-sided false-alarm level of this row and the degrees of freedom of σ; null when no bar was set. */
  level: number | null
  df: number | null
  nBaseline: number
  /**
   * Runs the reference side planned, where they are not the candidate's plan: a stored baseline's
   * centre is its refreshes' runs, whatever the candidate planned. Absent: the candidate's plan
   * (an A/B's reference planned the same rounds).
   */
  baselinePlanned?: number
  nCandidate: number
  history: number
  /** For an undecided decision: extra candidate repeats likely to resolve it within budget, else null. */
  extraRepeats: number | null
  notes: string[]
}

export type DecideOptions = Pick<
  GateOptions,
  'alpha' | 'rows' | 'alphaShare' | 'power' | 'centerWindow' | 'minHistory' | 'dayFloor' | 'withinFloor' | 'maxRepeats' | 'maxMdcPct'
>

/** An oriented log change shown as the metric's own signed % change: latency up is "+", throughput down is "−". */
function worseChange(x: number, higherIsBetter: boolean): string {
  const pct = (higherIsBetter ? Math.exp(-x) - 1 : Math.exp(x) - 1) * 100
  return `${pct >= 0 ? '+' : '−'}${Math.abs(pct).toFixed(1)} %`
}

/** Runs that may point the other way and still count as agreement: none up to 4 runs, then one in five. */
export function allowedDisagreements(n: number): number {
  return Math.floor(n / 5)
}

interface Bars {
  /** Regression bar, pass threshold, σ_diff and the MDC, log units; the degrees of freedom of σ_diff. */
  bar: number
  passBar: number
  sigma: number
  mdc: number
  df: number
}

/** One-sided false-alarm level of one row: the PR's alpha, this look's share, split over the gated rows. */
export function rowLevel(opts: Pick<GateOptions, 'alpha' | 'alphaShare' | 'rows'>): number {
  return (opts.alpha * opts.alphaShare) / Math.max(1, opts.rows)
}

/** A log change in the worse direction as the metric's own % change in that direction (a fall for throughputs). */
export function worsePctOf(x: number, higherIsBetter: boolean): number {
  return (higherIsBetter ? 1 - Math.exp(-x) : Math.exp(x) - 1) * 100
}

/** The bars of one row at noise σ with `df` degrees of freedom: the regression bar at the row's level (also the pass threshold), and the MDC at `power`. */
export function barsFor(sigma: number, df: number, tolerance: number, opts: Pick<GateOptions, 'alpha' | 'alphaShare' | 'rows' | 'power'>): Bars {
  const tolBar = Math.log(1 + tolerance)
  const d = Number.isFinite(df) && df > 0 ? df : Infinity
  const bar = Math.max(tolBar, tQuantile(1 - rowLevel(opts), d) * sigma)
  const mdc = bar + tQuantile(opts.power, d) * sigma
  return { bar, passBar: bar, sigma, mdc, df: d }
}

/**
 * The largest MDC (%) a row may have and still pass: gate.max_mdc_pct when set, else three times
 * the row's tolerance (15 % at the default 5 %), so a loosened tolerance never makes every row blind.
 */
export function mdcLimit(opts: Pick<GateOptions, 'maxMdcPct'>, tolerance: number): number {
  return opts.maxMdcPct ?? Number((3 * tolerance * 100).toFixed(2))
}

/** Whether a row at these bars could not have caught the change it must (mdcLimit). */
export function isBlind(b: Bars, higherIsBetter: boolean, tolerance: number, opts: Pick<GateOptions, 'maxMdcPct'>): boolean {
  return !Number.isFinite(b.mdc) || worsePctOf(b.mdc, higherIsBetter) > mdcLimit(opts, tolerance)
}

// ln with 0 → −∞ so an unreachable target (throughput 0) still orders correctly.
const ln = (x: number): number => (x > 0 ? Math.log(x) : -Infinity)

/** A decision with no figures yet (status missing), for the rules to fill in. */
export function noDecision(nBaseline: number, nCandidate: number, history: number): Decision {
  return {
    status: 'missing',
    baseline: null,
    candidate: null,
    d: null,
    bar: null,
    margin: null,
    sigma: null,
    mdc: null,
    blind: false,
    level: null,
    df: null,
    nBaseline,
    nCandidate,
    history,
    extraRepeats: null,
    notes: [],
  }
}

/** Decide one metric from its baseline history and candidate runs. */
export function decideMetric(input: MetricInput, opts: DecideOptions): Decision {
  const histLogs = input.history.map((r) => r.map(ln))
  const candLogs = input.candidate.map(ln)
  const used = histLogs.filter((r) => r.length > 0)
  const window = used.slice(-Math.max(1, opts.centerWindow))
  const base = noDecision(
    window.reduce((a, r) => a + r.length, 0),
    candLogs.length,
    used.length,
  )
  const center = used.length > 0 ? median(window.map((r) => median(r))) : null
  const cand = candLogs.length > 0 ? median(candLogs) : null
  if (center !== null) base.baseline = Math.exp(center)
  if (cand !== null) base.candidate = Math.exp(cand)
  if (center === null || cand === null) {
    base.notes.push(center === null ? 'no valid baseline runs' : 'no valid candidate runs')
    return base
  }

  // A zero on either side (throughput at an unreachable target) has no log-scale distance:
  // decide it outright, without noise, bars or confirmation repeats.
  if (!Number.isFinite(center) || !Number.isFinite(cand)) return decideAtZero(base, center, cand, candLogs, input.higherIsBetter)

  // Noise only from finite logs: a zero (unreachable target) has no log spread.
  const finite = (r: number[]): number[] => r.filter(Number.isFinite)
  const noise = estimateNoise(used.map(finite), finite(candLogs), opts)
  const sign = input.higherIsBetter ? -1 : 1
  const d = center === cand ? 0 : sign * (cand - center)
  const bars = (n: number): Bars => {
    const { sigma, df } = sigmaDiff(noise, n)
    return barsFor(sigma, df, input.tolerance, opts)
  }
  const now = bars(candLogs.length)
  const { bar, passBar, sigma } = now
  if (!Number.isFinite(sigma) || !Number.isFinite(d)) {
    // No finite baseline spread to judge against: say so rather than print an infinite bar.
    base.notes.push('no finite baseline data to estimate the noise from')
    return { ...base, d: Number.isFinite(d) ? d : null, status: 'undecided', blind: true }
  }
  const worse = candLogs.filter((x) => sign * (x - center) > 0).length
  const better = candLogs.filter((x) => sign * (x - center) < 0).length
  const n = candLogs.length
  const blind = isBlind(now, input.higherIsBetter, input.tolerance, opts)
  Object.assign(base, { d, bar, margin: bar - passBar, sigma, mdc: now.mdc, blind, level: rowLevel(opts), df: now.df })
  const show = (x: number): string => worseChange(x, input.higherIsBetter)

  if (d > bar) {
    if (worse >= n - allowedDisagreements(n)) return { ...base, status: 'regression' }
    base.notes.push(`only ${worse} of ${n} runs are worse than the baseline`)
    return { ...base, status: 'undecided', extraRepeats: repeatsForAgreement(n, n - worse, opts.maxRepeats - n) }
  }
  if (-d > bar && better >= n - allowedDisagreements(n)) return { ...base, status: 'improvement' }
  if (blind) {
    // However small the change looked, a change the size the gate promises to catch could have hidden in this noise.
    base.notes.push(blindNote(now, noise.refreshes, input.higherIsBetter, input.tolerance, opts))
    return { ...base, status: 'undecided', extraRepeats: repeatsToResolve(d, n, bars, opts.maxRepeats - n, input.higherIsBetter, input.tolerance, opts) }
  }
  if (d <= passBar || -d > bar) return { ...base, status: 'pass' }
  base.notes.push(`${show(d)} lies between the pass threshold ${show(passBar)} and the bar ${show(bar)}`)
  return { ...base, status: 'undecided', extraRepeats: repeatsToResolve(d, n, bars, opts.maxRepeats - n, input.higherIsBetter, input.tolerance, opts) }
}

/** Why a row is blind, and what would give it power. */
function blindNote(b: Bars, refreshes: number, higherIsBetter: boolean, tolerance: number, opts: DecideOptions): string {
  const limit = mdcLimit(opts, tolerance)
  const mdc = Number.isFinite(b.mdc) ? `${worsePctOf(b.mdc, higherIsBetter).toFixed(1)} %` : 'unknown'
  const history = refreshes < 2 * opts.minHistory ? `, more refreshes (${refreshes} so far)` : ''
  return `blind: the smallest change this row would catch ${Math.round(opts.power * 100)} % of the time is ${mdc}, more than ${limit} %; more repeats${history} or a reference command would give it power`
}

/**
 * A median of zero on one side or both (every log is −∞ there): 0 → 0 is a pass (the
 * target was unreachable before and still is), > 0 → 0 a regression, 0 → > 0 an
 * improvement — when the candidate's runs agree, else undecided. No figure of it
 * is infinite: D, the bar, σ and the MDC stay null.
 */
function decideAtZero(base: Decision, center: number, cand: number, candLogs: readonly number[], higherIsBetter: boolean): Decision {
  const n = candLogs.length
  const zeros = candLogs.filter((x) => !Number.isFinite(x)).length
  if (!Number.isFinite(center) && !Number.isFinite(cand)) {
    base.notes.push('zero on both sides (e.g. the target is unreachable in baseline and candidate)')
    return { ...base, status: 'pass' }
  }
  // Zero is the worst a throughput can be (and a latency of zero is refused at parse time).
  const candidateIsZero = !Number.isFinite(cand)
  const worse = candidateIsZero === higherIsBetter
  const agreeing = candidateIsZero ? zeros : n - zeros
  if (agreeing < n - allowedDisagreements(n)) {
    base.notes.push(`only ${agreeing} of ${n} runs are ${candidateIsZero ? 'zero' : 'above zero'}`)
    return { ...base, status: 'undecided' }
  }
  base.notes.push(candidateIsZero ? 'the candidate dropped to zero' : 'the candidate rose from zero')
  return { ...base, status: worse ? 'regression' : 'improvement' }
}

/**
 * Extra repeats to ask for: the fewest after which D (assumed unchanged) is decided by a row that
 * can see; failing that the whole budget, provided it shrinks σ_diff by at least 10 % (otherwise
 * the noise is day-to-day drift that same-day repeats cannot average away: only engine starts, or
 * a reference measured beside the candidate, settle it).
 */
function repeatsToResolve(
  d: number,
  n: number,
  bars: (n: number) => Bars,
  budget: number,
  higherIsBetter: boolean,
  tolerance: number,
  opts: DecideOptions,
): number | null {
  for (let extra = 1; extra <= budget; extra++) {
    const b = bars(n + extra)
    if (d > b.bar || (d <= b.passBar && !isBlind(b, higherIsBetter, tolerance, opts))) return extra
  }
  return budget > 0 && bars(n + budget).sigma <= 0.9 * bars(n).sigma ? budget : null
}

/** Smallest extra repeats (all assumed to agree) after which `disagree` runs are tolerated. */
function repeatsForAgreement(n: number, disagree: number, budget: number): number | null {
  for (let extra = 1; extra <= budget; extra++) {
    if (allowedDisagreements(n + extra) >= disagree) return extra
  }
  return null
}
