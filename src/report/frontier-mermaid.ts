/**
 * The frontier as Mermaid, which GitHub renders inline in a PR comment. A
 * Mermaid xychart's x-axis is categories, not numbers, so interactivity cannot
 * be placed at its value; rather than bend the picture, the chart runs along
 * the concurrencies both series measured (the parameter that traces the
 * frontier) with one line per series of output tok/s per GPU, each category
 * labelled with the candidate's interactivity, and a table gives every point's
 * both coordinates, the Pareto front and the target. Pure.
 */
import { fmtInt, fmtRate } from './format.js'
import type { Frontier, FrontierPoint, FrontierSeries, ShapeFrontier } from './frontier.js'

const COLORS: Record<FrontierSeries['role'], [string, string]> = { baseline: ['#7f7f7f', 'grey'], candidate: ['#1f77b4', 'blue'] }

/** One block per shape: heading line, the chart, the colour legend and the table of points. */
export function renderFrontierMermaid(frontier: Frontier): string[] {
  return frontier.shapes.map((sf) => shapeBlock(frontier, sf))
}

function shapeBlock(frontier: Frontier, sf: ShapeFrontier): string {
  const title = `${fmtInt(sf.inputLen)} in / ${fmtInt(sf.outputLen)} out`
  const shown = sf.series.filter((s) => s.points.length > 0)
  // Baseline first: Mermaid draws the last line on top, and the candidate is what the reader checks.
  shown.sort((a, b) => (a.role === 'baseline' ? -1 : b.role === 'baseline' ? 1 : 0))
  const lines = [`**${title}**: ${frontier.yLabel} against interactivity (tok/s/user = 1000 / p95 TPOT ms); target ${frontier.targetLabel}.`, '']
  const cand = shown.find((s) => s.role === 'candidate')
  const common = (cand?.points ?? []).map((p) => p.concurrency).filter((c) => shown.every((s) => s.points.some((p) => p.concurrency === c)))
  if (cand === undefined || common.length === 0) {
    lines.push('_No frontier to draw: the candidate has no valid measured point (or none the baseline shares)._')
  } else {
    const at = (s: FrontierSeries, c: number): FrontierPoint => s.points.find((p) => p.concurrency === c)!
    const maxY = Math.max(...shown.flatMap((s) => common.map((c) => at(s, c).throughput)))
    lines.push(
      '```mermaid',
      `%%{init: {"themeVariables": {"xyChart": {"plotColorPalette": "${shown.map((s) => COLORS[s.role][0]).join(', ')}"}}}}%%`,
      'xychart-beta',
      `  title "${sf.inputLen}×${sf.outputLen}: ${clean(frontier.yLabel)} by concurrency"`,
      `  x-axis "concurrency · candidate tok/s/user at p95 TPOT" [${common.map((c) => `"C=${c} · ${short(at(cand, c).interactivity)}"`).join(', ')}]`,
      `  y-axis "${clean(frontier.yLabel)}" 0 --> ${niceCeil(maxY * 1.1)}`,
      ...shown.map((s) => `  line [${common.map((c) => round(at(s, c).throughput)).join(', ')}]`),
      '```',
      '',
      `Lines: ${shown.map((s) => `${s.label} (${COLORS[s.role][1]})`).join(', ')}.`,
    )
  }
  const concs = [...new Set(sf.series.flatMap((s) => s.points.map((p) => p.concurrency)))].sort((a, b) => a - b)
  if (concs.length > 0) {
    lines.push(
      '',
      `| C | ${sf.series.map((s) => `${s.label} tok/s/user | ${s.label} ${frontier.perGpu ? 'tok/s/GPU' : 'tok/s'}`).join(' | ')} |`,
      `|---:|${'---:|---:|'.repeat(sf.series.length)}`,
    )
    for (const c of concs) {
      const cells = sf.series.flatMap((s) => {
        const p = s.points.find((q) => q.concurrency === c)
        return p === undefined
          ? ['–', '–']
          : [`${fmtRate(p.interactivity)}${p.meetsTarget === false ? ' ✗' : ''}`, `${fmtRate(p.throughput)}${p.onFront ? ' ★' : ''}`]
      })
      lines.push(`| ${c} | ${cells.join(' | ')} |`)
    }
    lines.push('', "★ on the series' Pareto front (no point of it is both more interactive and faster); ✗ misses the target. Medians across valid repeats.")
  }
  if (sf.noValidRun.length > 0) lines.push(`Left out: C=${sf.noValidRun.join(', ')} (no valid run).`)
  return lines.join('\n')
}

function short(x: number): string {
  return x >= 100 ? String(Math.round(x)) : x.toFixed(1)
}

function clean(s: string): string {
  return s.replace(/"/g, "'")
}

function round(v: number): number {
  return Math.round(v * 10) / 10
}

// A round axis maximum: 1, 2 or 5 × 10^k at or above v.
function niceCeil(v: number): number {
  if (!(v > 0)) return 1
  const k = Math.pow(10, Math.floor(Math.log10(v)))
  for (const m of [1, 2, 5, 10]) if (m * k >= v) return m * k
  return 10 * k
}
