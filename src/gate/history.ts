/**
 * A baseline's history read as a trend (`servegate history`): each gated
 * metric's median per refresh, oldest first, the environment change at each
 * step, and the refreshes where a metric moved beyond its noise (change
 * points), each labelled with the environment change that came with it. Pure.
 *
 * Change points: binary segmentation with the CUSUM statistic on the log
 * series of refresh medians (Page 1954; Scott & Knott 1974): the split that
 * maximises the standardised difference of the two sides' means is a change
 * point when that difference passes max(ln(1 + tolerance), K · σ_split), and
 * both sides are searched again. σ_split = σ · √(1/n₁ + 1/n₂), where σ, the
 * noise of one refresh median, is estimated robustly from the successive
 * differences (median |x_i − x_{i−1}| / (0.6745 · √2), so one step does not
 * inflate it) and floored by the gate's priors: √(dayFloor² + withinFloor² / runs).
 * Each side of a split holds at least MIN_SEGMENT (2) refreshes, so a shift at the newest refresh
 * is marked when the next refresh confirms it, and the two refreshes next to a split must each lie
 * on their own side of the midpoint between the two sides' means, so a shift is never pinned on a
 * refresh before it happened.
 */
import { median } from '../util/median.js'
import { diffEnv } from './env-diff.js'
import { KIND_INFO, humanLabel, parseMetricKey } from './metric-keys.js'
import { DEFAULT_GATE_OPTIONS, toleranceFor } from './options.js'
import type { Baseline, EnvChange, GateOptions, MetricKind } from './types.js'

/** Noise multiplier of a change point: a shift must pass K · σ_split (and the tolerance). */
export const CHANGE_K = 3
/**
 * Fewest refreshes on a side of a split. One refresh alone is never a segment: a single odd
 * refresh (one run caught by a busy host, with two repeats its median is half that run) would
 * otherwise read as two change points, a step there and one back. A shift shows as a change
 * point once a second refresh confirms it, as PyTorch's HUD waits for two bad nights.
 */
export const MIN_SEGMENT = 2

export interface HistoryStep {
  index: number
  at: string
  commit: string | null
  /** Environment fields that differ from the previous refresh (none for the first). */
  envChanges: EnvChange[]
}

export interface MetricHistory {
  key: string
  label: string
  unit: string
  higherIsBetter: boolean
  /** Median of the valid runs per refresh (null: no valid run that time). */
  values: Array<number | null>
  /** Refresh indexes where the metric shifted, with the signed change in % and the environment change that came with it. */
  changePoints: Array<{ index: number; changePct: number; worse: boolean; envChanges: EnvChange[] }>
  /** σ of one refresh median, log units, used for the change points. */
  sigma: number | null
}

export interface History {
  baseline: string
  steps: HistoryStep[]
  metrics: MetricHistory[]
  method: string
}

export const CHANGE_POINT_METHOD =
  'binary segmentation with the CUSUM statistic on the log medians (Page 1954; Scott & Knott 1974), K = 3 σ and the gate tolerance, at least 2 refreshes a side'

/** The trend of every gated metric across the baseline's refreshes. */
export function baselineHistory(baseline: Baseline, options: Partial<GateOptions> = {}): History {
  const opts: GateOptions = {
    ...DEFAULT_GATE_OPTIONS,
    ...options,
    tolerances: { ...DEFAULT_GATE_OPTIONS.tolerances, ...baseline.tolerances, ...options.tolerances },
  }
  const refreshes = baseline.refreshes
  const steps: HistoryStep[] = refreshes.map((r, i) => ({
    index: i,
    at: r.at,
    commit: r.commit ?? null,
    envChanges: i === 0 ? [] : diffEnv(refreshes[i - 1]!.env, r.env, { baseline: refreshes[i - 1]!.fingerprint, candidate: r.fingerprint }).changes,
  }))
  const keys = new Set<string>()
  for (const r of refreshes) for (const k of Object.keys(r.runs)) keys.add(k)
  const metrics: MetricHistory[] = []
  for (const key of [...keys].sort(byKindThenScope)) {
    const parsed = parseMetricKey(key)
    if (parsed === null || !opts.gated.includes(parsed.kind)) continue
    const info = KIND_INFO[parsed.kind]
    const values = refreshes.map((r) => {
      const v = (r.runs[key] ?? []).filter((x) => Number.isFinite(x) && x > 0)
      return v.length > 0 ? median(v) : null
    })
    const runsPerRefresh = median(refreshes.map((r) => Math.max(1, (r.runs[key] ?? []).length)))
    const { points, sigma } = changePoints(
      values,
      toleranceFor(opts, parsed.kind as MetricKind),
      Math.sqrt(opts.dayFloor ** 2 + opts.withinFloor ** 2 / runsPerRefresh),
    )
    metrics.push({
      key,
      label: humanLabel(parsed.kind, parsed.scope),
      unit: info.unit,
      higherIsBetter: info.higherIsBetter,
      values,
      sigma,
      changePoints: points.map(({ index, shift }) => ({
        index,
        changePct: (Math.exp(shift) - 1) * 100,
        worse: info.higherIsBetter ? shift < 0 : shift > 0,
        envChanges: steps[index]!.envChanges,
      })),
    })
  }
  return { baseline: baseline.name, steps, metrics, method: CHANGE_POINT_METHOD }
}

function byKindThenScope(a: string, b: string): number {
  const order = Object.keys(KIND_INFO)
  const ka = order.indexOf(a.slice(0, a.indexOf('@')))
  const kb = order.indexOf(b.slice(0, b.indexOf('@')))
  return ka - kb || a.localeCompare(b, undefined, { numeric: true })
}

/**
 * Change points of a series (null = missing, skipped): indexes (into `values`) of the first
 * refresh after each shift, with the shift of the log mean. See the file header.
 */
export function changePoints(
  values: ReadonlyArray<number | null>,
  tolerance: number,
  sigmaFloor: number,
): { points: Array<{ index: number; shift: number }>; sigma: number | null } {
  const idx: number[] = []
  const logs: number[] = []
  values.forEach((v, i) => {
    if (v !== null && v > 0 && Number.isFinite(v)) {
      idx.push(i)
      logs.push(Math.log(v))
    }
  })
  if (logs.length < 2) return { points: [], sigma: null }
  const diffs = logs.slice(1).map((x, i) => Math.abs(x - logs[i]!))
  const sigma = Math.max(sigmaFloor, median(diffs) / (0.6745 * Math.SQRT2))
  const bar = (n1: number, n2: number): number => Math.max(Math.log(1 + tolerance), CHANGE_K * sigma * Math.sqrt(1 / n1 + 1 / n2))
  const found: Array<{ at: number; shift: number }> = []
  const search = (lo: number, hi: number): void => {
    // Segment logs[lo, hi): the split k (first index of the right side) with the largest standardised shift.
    const n = hi - lo
    if (n < 2 * MIN_SEGMENT) return
    let best: { k: number; z: number; shift: number } | null = null
    let sum = 0
    let total = 0
    for (let i = lo; i < hi; i++) total += logs[i]!
    for (let k = lo + 1; k < hi; k++) {
      sum += logs[k - 1]!
      const n1 = k - lo
      const n2 = hi - k
      if (n1 < MIN_SEGMENT || n2 < MIN_SEGMENT) continue
      const shift = (total - sum) / n2 - sum / n1
      // The refreshes either side of the split must each lie on their own side of the midpoint of the
      // two means: otherwise the step is elsewhere (a shift at the newest refresh alone would be
      // pinned on the one before it, with that refresh's environment change).
      const mid = sum / n1 + shift / 2
      if ((logs[k]! - mid) * shift <= 0 || (logs[k - 1]! - mid) * shift >= 0) continue
      const z = Math.abs(shift) / bar(n1, n2)
      if (best === null || z > best.z) best = { k, z, shift }
    }
    if (best === null || best.z <= 1) return
    found.push({ at: best.k, shift: best.shift })
    search(lo, best.k)
    search(best.k, hi)
  }
  search(0, logs.length)
  return { points: found.sort((a, b) => a.at - b.at).map((f) => ({ index: idx[f.at]!, shift: f.shift })), sigma }
}

const SPARKS = '▁▂▃▄▅▆▇█'

/** A small trend line of a series (missing values as a space). */
export function sparkline(values: ReadonlyArray<number | null>): string {
  const v = values.filter((x): x is number => x !== null && Number.isFinite(x))
  if (v.length === 0) return ''
  const lo = Math.min(...v)
  const hi = Math.max(...v)
  return values
    .map((x) => (x === null || !Number.isFinite(x) ? ' ' : SPARKS[hi === lo ? 3 : Math.round(((x - lo) / (hi - lo)) * (SPARKS.length - 1))]!))
    .join('')
}
