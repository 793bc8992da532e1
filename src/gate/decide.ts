/**
 * The decision rule for one metric (docs/gate.md): D = ln(candidate median /
 * baseline centre), oriented so positive is worse; bar L = max(ln(1 + tol),
 * k · σ_diff); regression when D > L and the candidate's runs agree; pass when
 * D ≤ L − passMargin · σ_diff; undecided in between.
 */
import { dayPrior, estimateNoise, sigmaDiff } from './noise.js'
import { median } from './stats.js'
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
  /** Log change in the worse direction that is caught with ~95 % probability. */
  mdc: number | null
  nBaseline: number
  nCandidate: number
  history: number
  /** For an undecided decision: extra candidate repeats likely to resolve it within budget, else null. */
  extraRepeats: number | null
  notes: string[]
}

type DecideOptions = Pick<
  GateOptions,
  'k' | 'earlyK' | 'passMargin' | 'centerWindow' | 'minHistory' | 'dayFloor' | 'shortDayFloor' | 'withinFloor' | 'maxRepeats'
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
  /** Regression bar, pass threshold and σ_diff, log units. */
  bar: number
  passBar: number
  sigma: number
}

// One-sided 95 % normal quantile, for the minimum detectable change.
const Z95 = 1.645

// ln with 0 → −∞ so an unreachable target (throughput 0) still orders correctly.
const ln = (x: number): number => (x > 0 ? Math.log(x) : -Infinity)

/** A decision with no figures yet (status missing), for the rules to fill in. */
export function noDecision(nBaseline: number, nCandidate: number, history: number): Decision {
  return { status: 'missing', baseline: null, candidate: null, d: null, bar: null, margin: null, sigma: null, mdc: null, nBaseline, nCandidate, history, extraRepeats: null, notes: [] }
}

/** Decide one metric from its baseline history and candidate runs. */
export function decideMetric(input: MetricInput, opts: DecideOptions): Decision {
  const histLogs = input.history.map((r) => r.map(ln))
  const candLogs = input.candidate.map(ln)
  const used = histLogs.filter((r) => r.length > 0)
  const window = used.slice(-Math.max(1, opts.centerWindow))
  const base = noDecision(window.reduce((a, r) => a + r.length, 0), candLogs.length, used.length)
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
  const tolBar = Math.log(1 + input.tolerance)
  const bars = (n: number): Bars => {
    const sigma = sigmaDiff(noise, n)
    // With confirmation left, clearer evidence is asked for both ways; at the budget the
    // rule must decide, so the band closes and the bar is the final k.
    const early = n < opts.maxRepeats
    const kNow = early ? Math.max(opts.k, opts.earlyK) : opts.k
    const passBar = Math.max(tolBar, opts.k * sigma) - (early ? opts.passMargin * sigma : 0)
    return { bar: Math.max(tolBar, kNow * sigma), passBar, sigma }
  }
  const { bar, passBar, sigma } = bars(candLogs.length)
  if (!Number.isFinite(sigma) || !Number.isFinite(d)) {
    // No finite baseline spread to judge against: say so rather than print an infinite bar.
    base.notes.push('no finite baseline data to estimate the noise from')
    return { ...base, d: Number.isFinite(d) ? d : null, status: 'undecided' }
  }
  const worse = candLogs.filter((x) => sign * (x - center) > 0).length
  const better = candLogs.filter((x) => sign * (x - center) < 0).length
  const n = candLogs.length
  Object.assign(base, { d, bar, margin: bar - passBar, sigma, mdc: bar + Z95 * sigma })
  if (noise.refreshes < opts.minHistory) {
    const drift = (dayPrior(noise.refreshes, opts) * 100).toFixed(1)
    base.notes.push(
      `short history (${noise.refreshes} refresh${noise.refreshes === 1 ? '' : 'es'}): assuming ~${drift} % day-to-day drift until ${opts.minHistory} refreshes show the real one`,
    )
  }

  if (d > bar) {
    if (worse >= n - allowedDisagreements(n)) return { ...base, status: 'regression' }
    base.notes.push(`only ${worse} of ${n} runs are worse than the baseline`)
    return { ...base, status: 'undecided', extraRepeats: repeatsForAgreement(n, n - worse, opts.maxRepeats - n) }
  }
  if (-d > bar) {
    if (better >= n - allowedDisagreements(n)) return { ...base, status: 'improvement' }
    return { ...base, status: 'pass' }
  }
  if (d <= passBar) return { ...base, status: 'pass' }
  const show = (x: number): string => worseChange(x, input.higherIsBetter)
  base.notes.push(`${show(d)} lies between the pass threshold ${show(passBar)} and the bar ${show(bar)}`)
  return { ...base, status: 'undecided', extraRepeats: repeatsToResolve(d, n, bars, opts.maxRepeats - n) }
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
 * Extra repeats to ask for: the fewest after which D (assumed unchanged) leaves the
 * band; failing that the whole budget, provided it shrinks σ_diff by at least 10 %
 * (otherwise the noise is day-to-day drift that same-day repeats cannot average away).
 */
function repeatsToResolve(
  d: number,
  n: number,
  bars: (n: number) => Bars,
  budget: number,
): number | null {
  for (let extra = 1; extra <= budget; extra++) {
    const { bar, passBar } = bars(n + extra)
    if (d > bar || d <= passBar) return extra
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
