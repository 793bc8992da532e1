/**
 * The field's picture: output throughput per GPU against interactivity
 * (tok/s per user = 1000 / p95 TPOT ms), one series for the candidate and one
 * for the baseline, the Pareto front of each, and the interactivity target as
 * a line. Drawn by the HTML report (Chart.js) and the PR comment (Mermaid).
 * Medians over valid runs only, like the methodology's table. Pure.
 */
import { gpuCount, interactivity, perGpu } from '../analysis/per-gpu.js'
import { metricKey, pointLabel } from '../gate/metric-keys.js'
import type { Baseline } from '../gate/types.js'
import type { ResultFile, ResultTarget, RunResult } from '../types.js'
import { summarize } from './format.js'
import { targetInteractivityText } from './target-text.js'

export interface FrontierPoint {
  concurrency: number
  /** Median over valid runs of the run's p95 TPOT, ms. */
  tpotP95Ms: number
  /** 1000 / tpotP95Ms: tokens per second one user sees, at p95 TPOT. */
  interactivity: number
  /** Median output tok/s over valid runs, divided by the GPUs when `Frontier.perGpu`. */
  throughput: number
  /** No other point of the series is at least as interactive and at least as fast (and better in one). */
  onFront: boolean
  /** Whether the point holds the target (its own metric and percentile); null when the figure is not recorded. */
  meetsTarget: boolean | null
}

export interface FrontierSeries {
  role: 'candidate' | 'baseline'
  label: string
  /** By concurrency. */
  points: FrontierPoint[]
}

export interface ShapeFrontier {
  inputLen: number
  outputLen: number
  series: FrontierSeries[]
  /** Concurrencies of the candidate left off the chart because no run there was valid. */
  noValidRun: number[]
}

export interface Frontier {
  /** True when y is per GPU: the GPU count of every series is known. */
  perGpu: boolean
  /** y-axis title, saying output (not total) tokens and per GPU or total. */
  yLabel: string
  xLabel: string
  /** Where the target line is drawn on the x-axis (tok/s/user); null for a target that is not a latency. */
  targetInteractivity: number | null
  /** `p95 TPOT ≤ 50 ms ⇔ ≥ 20 tok/s/user` */
  targetLabel: string
  /** GPUs of each series (null: unknown). */
  gpus: { candidate: number | null; baseline: number | null }
  shapes: ShapeFrontier[]
}

const X_LABEL = 'interactivity: tok/s/user = 1000 / p95 TPOT (ms)'

/** The frontier of `result` and, when given, of `baseline`'s newest refresh, per shape of the result. */
export function buildFrontier(result: ResultFile, baseline: Baseline | null): Frontier {
  const newest = baseline?.refreshes[baseline.refreshes.length - 1] ?? null
  const gpus = { candidate: gpuCount(result.env), baseline: newest === null ? null : gpuCount(newest.env) }
  const usePerGpu = gpus.candidate !== null && (newest === null || gpus.baseline !== null)
  const divide = (x: number, n: number | null): number => (usePerGpu ? perGpu(x, n)! : x)
  const shapes: ShapeFrontier[] = []
  for (const p of [...result.points].sort((a, b) => a.concurrency - b.concurrency)) {
    let sf = shapes.find((s) => s.inputLen === p.input_len && s.outputLen === p.output_len)
    if (sf === undefined) {
      const series: FrontierSeries[] = [{ role: 'candidate', label: 'candidate', points: [] }]
      // Candidate first: Chart.js draws the first dataset on top.
      if (newest !== null) series.push({ role: 'baseline', label: 'baseline', points: [] })
      sf = { inputLen: p.input_len, outputLen: p.output_len, series, noValidRun: [] }
      shapes.push(sf)
    }
    const valid = p.runs.filter((r) => r.validity.valid)
    const tpot = summarize(valid.map((r) => r.tpot_ms.p95))?.median ?? null
    const tput = summarize(valid.map((r) => r.output_throughput))?.median ?? null
    const x = interactivity(tpot)
    const cand = sf.series.find((s) => s.role === 'candidate')!
    if (x === null || tput === null || tpot === null) sf.noValidRun.push(p.concurrency)
    else
      cand.points.push({
        concurrency: p.concurrency,
        tpotP95Ms: tpot,
        interactivity: x,
        throughput: divide(tput, gpus.candidate),
        onFront: false,
        meetsTarget: meets(valid, result.target),
      })
  }
  if (newest !== null) {
    // The baseline keeps its own grid: every point it stored for the shape, not only the candidate's.
    for (const sf of shapes) {
      const base = sf.series.find((s) => s.role === 'baseline')!
      const concs = new Set<number>()
      const prefix = `${sf.inputLen}x${sf.outputLen}@c`
      for (const key of Object.keys(newest.runs)) {
        const scope = key.slice(key.indexOf('@') + 1)
        if (scope.startsWith(prefix)) concs.add(Number(scope.slice(prefix.length)))
      }
      for (const c of [...concs].filter(Number.isInteger).sort((a, b) => a - b)) {
        const scope = pointLabel(sf.inputLen, sf.outputLen, c)
        const tpot = summarize(newest.runs[metricKey('tpot_p95', scope)] ?? [])?.median ?? null
        const tput = summarize(newest.runs[metricKey('output_tput', scope)] ?? [])?.median ?? null
        const x = interactivity(tpot)
        if (x === null || tput === null || tpot === null) continue
        const kind = result.target.metric === 'itl' ? 'itl_p95' : 'tpot_p95'
        const held = result.target.percentile === 95 ? (summarize(newest.runs[metricKey(kind, scope)] ?? [])?.median ?? null) : null
        base.points.push({
          concurrency: c,
          tpotP95Ms: tpot,
          interactivity: x,
          throughput: divide(tput, gpus.baseline),
          onFront: false,
          meetsTarget: held === null ? null : held <= result.target.threshold_ms,
        })
      }
    }
  }
  for (const sf of shapes) for (const s of sf.series) markFront(s.points)
  return {
    perGpu: usePerGpu,
    yLabel: usePerGpu ? 'output tok/s per GPU' : 'output tok/s of the whole server (GPU count unknown: not per GPU)',
    xLabel: X_LABEL,
    targetInteractivity: interactivity(result.target.threshold_ms),
    targetLabel: targetInteractivityText(result.target),
    gpus,
    shapes,
  }
}

// The point's median of the target's own figure, held against the threshold.
function meets(valid: readonly RunResult[], t: ResultTarget): boolean | null {
  const key = `p${t.percentile}` as 'p50' | 'p95' | 'p99'
  const stats = t.metric === 'itl' ? (r: RunResult) => r.itl_ms : (r: RunResult) => r.tpot_ms
  const m = summarize(valid.map((r) => (key in stats(r) ? stats(r)[key] : null)))?.median ?? null
  return m === null ? null : m <= t.threshold_ms
}

/** Marks the Pareto front: both interactivity and throughput are better higher. */
export function markFront(points: FrontierPoint[]): void {
  for (const p of points) {
    p.onFront = !points.some(
      (q) =>
        q !== p && q.interactivity >= p.interactivity && q.throughput >= p.throughput && (q.interactivity > p.interactivity || q.throughput > p.throughput),
    )
  }
}
