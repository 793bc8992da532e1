/**
 * The latency–throughput curve of a result and of a baseline (its newest
 * refresh), and the throughput-at-target figures, in the shape the chart and
 * the summary's headline take. Pure.
 */
import type { Baseline } from '../gate/types.js'
import { metricKey, pointLabel, shapeLabel } from '../gate/metric-keys.js'
import type { ResultFile } from '../types.js'
import { finiteMedian } from '../util/median.js'
import { targetText } from '../report/target-text.js'

export interface CurvePoint {
  /** Output tokens per second (median over runs). */
  throughput: number
  /** p95 of the target's latency metric, ms (median over runs). */
  latencyMs: number
  /** The concurrency measured (aligns the two series in the chart). */
  concurrency: number
}

export interface CurveSeries {
  label: string
  points: CurvePoint[]
}

export interface ShapeCurves {
  inputLen: number
  outputLen: number
  baseline: CurveSeries | null
  candidate: CurveSeries
}

const shapeName = (i: number, o: number): string => `${i}×${o}`

/** Candidate and baseline curves per shape of the result, points ordered by concurrency. */
export function curvesFor(result: ResultFile, baseline: Baseline | null): ShapeCurves[] {
  const latencyKind = result.target.metric === 'itl' ? 'itl_p95' : 'tpot_p95'
  const newest = baseline?.refreshes[baseline.refreshes.length - 1] ?? null
  const shapes = new Map<string, ShapeCurves>()
  const points = [...result.points].sort((a, b) => a.concurrency - b.concurrency)
  for (const pt of points) {
    const key = shapeLabel(pt.input_len, pt.output_len)
    let sc = shapes.get(key)
    if (sc === undefined) {
      sc = {
        inputLen: pt.input_len,
        outputLen: pt.output_len,
        baseline: newest === null ? null : { label: 'baseline', points: [] },
        candidate: { label: 'candidate', points: [] },
      }
      shapes.set(key, sc)
    }
    const metric = result.target.metric === 'itl' ? 'itl_ms' : 'tpot_ms'
    const tput = finiteMedian(pt.runs.map((r) => r.output_throughput))
    const lat = finiteMedian(pt.runs.map((r) => r[metric].p95))
    if (tput !== null && lat !== null) sc.candidate.points.push({ throughput: tput, latencyMs: lat, concurrency: pt.concurrency })
    if (newest !== null && sc.baseline !== null) {
      const scope = pointLabel(pt.input_len, pt.output_len, pt.concurrency)
      const bt = finiteMedian(newest.runs[metricKey('output_tput', scope)] ?? [])
      const bl = finiteMedian(newest.runs[metricKey(latencyKind, scope)] ?? [])
      if (bt !== null && bl !== null) sc.baseline.points.push({ throughput: bt, latencyMs: bl, concurrency: pt.concurrency })
    }
  }
  for (const sc of shapes.values()) if (sc.baseline !== null && sc.baseline.points.length === 0) sc.baseline = null
  return [...shapes.values()]
}

/** One line per shape: throughput at the target, candidate vs baseline (medians over runs). */
export function atTargetLines(result: ResultFile, baseline: Baseline | null): string[] {
  const newest = baseline?.refreshes[baseline.refreshes.length - 1] ?? null
  return result.at_target.map((sh) => {
    const cand = finiteMedian(sh.runs.map((r) => (r.bound === 'unreachable' ? 0 : r.throughput)))
    const bounds = new Set(sh.runs.map((r) => r.bound))
    const qualifier = bounds.has('lower_bound')
      ? ' (at least: the target held at every concurrency swept)'
      : bounds.has('unreachable')
        ? ' (the target was missed even at the lowest concurrency in some runs)'
        : ''
    let text = `Throughput at ${targetText(result.target)}, ${shapeName(sh.input_len, sh.output_len)}: **${fmt(cand)} tok/s**${qualifier}`
    const base = newest === null ? null : finiteMedian(newest.runs[metricKey('tput_at_target', shapeLabel(sh.input_len, sh.output_len))] ?? [])
    if (base !== null && cand !== null) {
      const pct = base === 0 ? null : ((cand - base) / base) * 100
      text += ` vs baseline ${fmt(base)} tok/s${pct === null ? '' : ` (${pct >= 0 ? '+' : ''}${pct.toFixed(1)}%)`}`
    }
    return text
  })
}

function fmt(x: number | null): string {
  if (x === null) return 'n/a'
  return x >= 100 ? Math.round(x).toLocaleString('en-US') : x.toFixed(1)
}
