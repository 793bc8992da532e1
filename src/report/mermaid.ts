/**
 * The latency–throughput curve as a Mermaid `xychart-beta` block for GitHub
 * markdown. xychart draws each line as y values over shared x categories — it
 * has no (x, y) pairs — so the x axis is the load step (concurrency, in sweep
 * order), the y axis the latency, and the throughput of every point is given
 * exactly in a table under the chart rather than resampled (which would draw
 * values nobody measured). Pure.
 */
import { fmtMs, fmtRate } from './format.js'

export interface MermaidCurvePoint {
  /** Output tok/s. */
  throughput: number
  /** The latency plotted (e.g. p95 TPOT), ms. */
  latencyMs: number
  /** The concurrency measured; when every point has one, steps are aligned and labelled by it. */
  concurrency?: number
}

export interface MermaidSeries {
  label: string
  /** In increasing load (concurrency) order. */
  points: MermaidCurvePoint[]
}

/** Line colours in series order, named in the legend (xychart has no legend of its own). */
const PALETTE: [string, string][] = [
  ['#1f77b4', 'blue'],
  ['#d62728', 'red'],
  ['#2ca02c', 'green'],
  ['#ff7f0e', 'orange'],
]

/** A fenced mermaid xychart of latency per load step for each series, a colour legend and the exact figures. */
export function renderMermaidCurve(series: readonly MermaidSeries[], opts: { title?: string; xLabel?: string; yLabel?: string } = {}): string {
  const shown = series.filter((s) => s.points.length > 0).slice(0, PALETTE.length)
  if (shown.length === 0) return '_No curve to draw yet: no measured points._'
  const steps = alignSteps(shown)
  if (steps.labels.length === 0) return '_No curve to draw: the series share no measured load step._'
  const yLabel = opts.yLabel ?? 'latency (ms)'
  const maxY = Math.max(...steps.values.flat())
  const palette = shown.map((_, i) => PALETTE[i]![0]).join(', ')
  const lines = [
    '```mermaid',
    `%%{init: {"themeVariables": {"xyChart": {"plotColorPalette": "${palette}"}}}}%%`,
    'xychart-beta',
    ...(opts.title ? [`  title "${clean(opts.title)}"`] : []),
    `  x-axis "${steps.byConcurrency ? 'concurrency' : 'load step'}" [${steps.labels.map((l) => `"${l}"`).join(', ')}]`,
    `  y-axis "${clean(yLabel)}" 0 --> ${niceCeil(maxY * 1.1)}`,
    ...steps.values.map((vs) => `  line [${vs.map((v) => round(v)).join(', ')}]`),
    '```',
    '',
    `Lines: ${shown.map((s, i) => `${s.label} (${PALETTE[i]![1]})`).join(', ')}.${steps.dropped > 0 ? ` ${steps.dropped} load step(s) measured in only some series are left out of the chart but listed below.` : ''}`,
    '',
  ]
  // The exact figures: every measured point of every series, throughput included.
  const tputLabel = opts.xLabel ?? 'output tok/s'
  lines.push(
    `| ${[steps.byConcurrency ? 'concurrency' : 'step', ...shown.flatMap((s) => [`${s.label} ${tputLabel}`, `${s.label} ${yLabel}`])].map(clean).join(' | ')} |`,
  )
  lines.push(`|${' --- |'.repeat(1 + shown.length * 2)}`)
  const n = Math.max(...shown.map((s) => s.points.length))
  const rowKeys = steps.byConcurrency
    ? [...new Set(shown.flatMap((s) => s.points.map((p) => p.concurrency!)))].sort((a, b) => a - b)
    : Array.from({ length: n }, (_, i) => i)
  for (const key of rowKeys) {
    const cells = shown.flatMap((s) => {
      const p = steps.byConcurrency ? s.points.find((q) => q.concurrency === key) : s.points[key]
      return p ? [fmtRate(p.throughput), fmtMs(p.latencyMs)] : ['–', '–']
    })
    lines.push(`| ${steps.byConcurrency ? `C=${key}` : String(key + 1)} | ${cells.join(' | ')} |`)
  }
  return lines.join('\n')
}

// Steps every shown series measured: by concurrency when all points carry one, else by position.
function alignSteps(shown: readonly MermaidSeries[]): { labels: string[]; values: number[][]; byConcurrency: boolean; dropped: number } {
  const byConcurrency = shown.every((s) => s.points.every((p) => typeof p.concurrency === 'number'))
  if (byConcurrency) {
    const all = [...new Set(shown.flatMap((s) => s.points.map((p) => p.concurrency!)))].sort((a, b) => a - b)
    const common = all.filter((c) => shown.every((s) => s.points.some((p) => p.concurrency === c)))
    return {
      labels: common.map((c) => `C=${c}`),
      values: shown.map((s) => common.map((c) => s.points.find((p) => p.concurrency === c)!.latencyMs)),
      byConcurrency,
      dropped: all.length - common.length,
    }
  }
  const n = Math.min(...shown.map((s) => s.points.length))
  const max = Math.max(...shown.map((s) => s.points.length))
  return {
    labels: Array.from({ length: n }, (_, i) => String(i + 1)),
    values: shown.map((s) => s.points.slice(0, n).map((p) => p.latencyMs)),
    byConcurrency,
    dropped: max - n,
  }
}

function clean(s: string): string {
  return s.replace(/"/g, "'").replace(/\|/g, '/')
}

function round(v: number): number {
  return Math.round(v * 100) / 100
}

// A round axis maximum: 1, 2 or 5 × 10^k at or above v.
function niceCeil(v: number): number {
  if (!(v > 0)) return 1
  const k = Math.pow(10, Math.floor(Math.log10(v)))
  for (const m of [1, 2, 5, 10]) if (m * k >= v) return m * k
  return 10 * k
}
