/**
 * The charts of the HTML report as plain data (the page's inline script turns
 * each into a Chart.js chart): per shape the frontier and, per latency, its
 * p50/p95/p99 against concurrency with the min–max across valid repeats as
 * error bars. Strings here are shown on a canvas, never parsed as HTML. Pure.
 */
import type { PointResult, ResultFile, RunResult } from '../types.js'
import { fmtInt, summarize } from './format.js'
import type { Frontier } from './frontier.js'

export interface FrontierChartPoint {
  x: number
  y: number
  c: number
  front: boolean
  meets: boolean | null
}

export interface FrontierChartSpec {
  kind: 'frontier'
  id: string
  shape: string
  title: string
  xLabel: string
  yLabel: string
  target: { x: number; label: string } | null
  series: { role: 'candidate' | 'baseline'; label: string; color: string; points: FrontierChartPoint[] }[]
}

/** One percentile's median with the lowest and highest value across valid repeats; null where none. */
export interface LatencyChartPoint {
  y: number
  yMin: number
  yMax: number
}

export interface LatencyChartSpec {
  kind: 'latency'
  id: string
  shape: string
  title: string
  yLabel: string
  /** Concurrencies, as category labels. */
  labels: string[]
  series: { label: string; color: string; points: (LatencyChartPoint | null)[] }[]
}

export type ChartSpec = FrontierChartSpec | LatencyChartSpec

const SERIES_COLORS = { candidate: '#1f77b4', baseline: '#7f7f7f' } as const
const PERCENTILE_COLORS = { p50: '#2ca02c', p95: '#ff7f0e', p99: '#d62728' } as const

const LATENCIES = [
  ['ttft_ms', 'TTFT'],
  ['itl_ms', 'ITL'],
  ['tpot_ms', 'TPOT'],
  ['e2el_ms', 'E2EL'],
] as const

export const SPREAD_NOTE = 'Dot: median across valid repeats; error bar: lowest to highest value across valid repeats (min–max, not IQR).'

/** `4,096 in / 512 out` */
export function shapeTitle(inputLen: number, outputLen: number): string {
  return `${fmtInt(inputLen)} in / ${fmtInt(outputLen)} out`
}

/** Chart specs of every shape: the frontier first, then TTFT, ITL, TPOT and E2EL. */
export function buildChartSpecs(result: ResultFile, frontier: Frontier): ChartSpec[] {
  const out: ChartSpec[] = []
  for (const [i, sf] of frontier.shapes.entries()) {
    const shape = shapeTitle(sf.inputLen, sf.outputLen)
    out.push({
      kind: 'frontier',
      id: `frontier-${i}`,
      shape,
      title: `${shape}: ${frontier.yLabel} vs interactivity`,
      xLabel: frontier.xLabel,
      yLabel: frontier.yLabel,
      target: frontier.targetInteractivity === null ? null : { x: frontier.targetInteractivity, label: `target: ${frontier.targetLabel}` },
      series: sf.series.map((s) => ({
        role: s.role,
        label: s.label,
        color: SERIES_COLORS[s.role],
        points: s.points.map((p) => ({ x: p.interactivity, y: p.throughput, c: p.concurrency, front: p.onFront, meets: p.meetsTarget })),
      })),
    })
    const points = result.points
      .filter((p) => p.input_len === sf.inputLen && p.output_len === sf.outputLen && p.runs.some((r) => r.validity.valid))
      .sort((a, b) => a.concurrency - b.concurrency)
    for (const [key, name] of LATENCIES) {
      out.push({
        kind: 'latency',
        id: `latency-${i}-${name.toLowerCase()}`,
        shape,
        title: `${shape}: ${name} percentiles vs concurrency`,
        yLabel: `${name} (ms, client clock)`,
        labels: points.map((p) => String(p.concurrency)),
        series: (['p50', 'p95', 'p99'] as const).map((pct) => ({
          label: `${name} ${pct}`,
          color: PERCENTILE_COLORS[pct],
          points: points.map((p) => spreadOf(p, (r) => r[key][pct])),
        })),
      })
    }
  }
  return out
}

function spreadOf(p: PointResult, figure: (r: RunResult) => number | null): LatencyChartPoint | null {
  const s = summarize(p.runs.filter((r) => r.validity.valid).map(figure))
  return s === null ? null : { y: s.median, yMin: s.min, yMax: s.max }
}
