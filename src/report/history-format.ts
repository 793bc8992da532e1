/** `servegate history` as console text and markdown (with a Mermaid chart per metric GitHub renders). Pure. */
import type { History, HistoryStep, MetricHistory } from '../gate/history.js'
import { sparkline } from '../gate/history.js'
import type { EnvChange } from '../gate/types.js'
import { escapeMarkdown } from '../util/markdown-escape.js'
import { fmtMs, fmtRate } from './format.js'

const fmt = (m: MetricHistory, v: number | null): string => (v === null ? '–' : m.unit === 'ms' ? `${fmtMs(v)} ms` : `${fmtRate(v)} ${m.unit}`)
const envText = (changes: readonly EnvChange[]): string => changes.map((c) => `${c.field} ${c.baseline} → ${c.candidate}`).join('; ')
const day = (iso: string): string => iso.slice(0, 16).replace('T', ' ')

/** One line per change point: `refresh 6 (2026-11-02 01:00): +10.2 % (worse); serve command a → b`. */
function changePointLines(h: History): string[] {
  return changePointEntries(h).map((e) => e.line)
}

function changePointEntries(h: History): Array<{ index: number; line: string }> {
  const out: Array<{ index: number; line: string }> = []
  for (const m of h.metrics) {
    for (const c of m.changePoints) {
      const env = c.envChanges.length > 0 ? envText(c.envChanges) : 'no environment change recorded'
      out.push({
        index: c.index,
        line: `${m.label}: change at refresh ${c.index + 1} (${day(h.steps[c.index]!.at)}): ${c.changePct >= 0 ? '+' : '−'}${Math.abs(c.changePct).toFixed(1)} % (${c.worse ? 'worse' : 'better'}); ${env}`,
      })
    }
  }
  return out
}

export function renderHistoryText(h: History): string {
  const lines: string[] = [`servegate history — baseline ${h.baseline}, ${h.steps.length} refreshes, oldest first`, '']
  const width = Math.max(...h.metrics.map((m) => m.label.length), 6)
  for (const m of h.metrics) {
    lines.push(
      `${m.label.padEnd(width)}  ${sparkline(m.values)}  ${fmt(m, m.values.find((v) => v !== null) ?? null)} → ${fmt(m, [...m.values].reverse().find((v) => v !== null) ?? null)}`,
    )
  }
  // One column per metric, as wide as its label or its widest cell, so the rows line up under the header.
  const cells = h.steps.map((s) => h.metrics.map((m) => `${fmt(m, m.values[s.index] ?? null)}${m.changePoints.some((c) => c.index === s.index) ? ' ◆' : ''}`))
  const widths = h.metrics.map((m, j) => Math.max(m.label.length, ...cells.map((row) => row[j]!.length)))
  const row = (first: string, cols: string[]): string => `${first}${cols.map((c, j) => c.padStart(widths[j]!)).join(' | ')}`.trimEnd()
  lines.push(
    '',
    row(
      'refresh  at                commit    ',
      h.metrics.map((m) => m.label),
    ),
  )
  for (const s of h.steps) {
    lines.push(row(`${String(s.index + 1).padStart(7)}  ${day(s.at).padEnd(16)}  ${(s.commit ?? '').slice(0, 8).padEnd(8)}  `, cells[s.index]!))
    if (s.envChanges.length > 0) lines.push(`${' '.repeat(9)}env: ${envText(s.envChanges)}`)
  }
  const cps = changePointLines(h)
  lines.push('', cps.length > 0 ? 'Change points (◆):' : 'No change point: every metric stayed within its noise across the refreshes.')
  for (const c of cps) lines.push(`  - ${c}`)
  lines.push('', `Method: ${h.method}.`)
  return `${lines.join('\n')}\n`
}

export function renderHistoryMarkdown(h: History): string {
  const out: string[] = [`### servegate history: ${escapeMarkdown(h.baseline)}`, '', `${h.steps.length} refreshes, oldest first. Method: ${h.method}.`, '']
  out.push(`| Refresh | At | ${h.metrics.map((m) => escapeMarkdown(m.label)).join(' | ')} | Environment change |`)
  out.push(`|---:|---|${h.metrics.map(() => '---:|').join('')}---|`)
  for (const s of h.steps) {
    const cells = h.metrics.map((m) => `${fmt(m, m.values[s.index] ?? null)}${m.changePoints.some((c) => c.index === s.index) ? ' **◆**' : ''}`)
    out.push(`| ${s.index + 1} | ${day(s.at)} | ${cells.join(' | ')} | ${escapeMarkdown(envText(s.envChanges))} |`)
  }
  const cps = changePointLines(h)
  out.push('', cps.length > 0 ? '**Change points (◆)**' : '_No change point: every metric stayed within its noise._', '')
  for (const c of cps) out.push(`- ${escapeMarkdown(c)}`)
  for (const m of h.metrics) out.push(...mermaidChart(m, h.steps))
  return `${out.join('\n')}\n`
}

/**
 * A Mermaid xychart (GitHub renders it) of one metric over `steps`, x labelled by refresh
 * number. A refresh without a value is left off the axis, never drawn as 0. Empty below two points.
 */
function mermaidChart(m: MetricHistory, steps: readonly HistoryStep[]): string[] {
  const pts = steps.flatMap((s) => {
    const v = m.values[s.index]
    return v === null || v === undefined || !Number.isFinite(v) ? [] : [{ x: s.index + 1, y: Number(v.toPrecision(4)) }]
  })
  if (pts.length < 2) return []
  const quote = (t: string): string => `"${t.replace(/"/g, "'")}"`
  return [
    '',
    '```mermaid',
    'xychart-beta',
    `  title ${quote(m.label)}`,
    `  x-axis [${pts.map((p) => quote(String(p.x))).join(', ')}]`,
    `  y-axis ${quote(m.unit)}`,
    `  line [${pts.map((p) => p.y).join(', ')}]`,
    '```',
  ]
}

/** Refreshes the compact trend shows by default. */
const TREND_STEPS = 8

/**
 * The baseline's trend, compact enough for a tracking issue: the last `maxSteps` refreshes (default
 * TREND_STEPS) as a table, one column per gated metric and a trend line under each; the change points
 * among them, each with the environment change that came with it; one chart, of the metric whose change
 * point is newest (none: the first gated metric). Change points are found on the whole history, so a
 * shift just before the window still counts. Pure.
 */
export function renderHistoryTrendMarkdown(h: History, opts: { maxSteps?: number } = {}): string {
  const max = Math.max(1, Math.floor(opts.maxSteps ?? TREND_STEPS))
  const shown = h.steps.slice(-max)
  const first = shown[0]?.index ?? 0
  const span =
    shown.length === h.steps.length ? `${h.steps.length} refresh${h.steps.length === 1 ? '' : 'es'}` : `the last ${shown.length} of ${h.steps.length} refreshes`
  const out: string[] = [`**Trend of baseline ${escapeMarkdown(h.baseline)}**: ${span}, oldest first.`, '']
  if (h.metrics.length === 0 || shown.length === 0) return `${[...out, '_The baseline records no gated metric yet._'].join('\n')}\n`
  const commits = shown.some((s) => s.commit !== null)
  const cp = (m: MetricHistory, i: number): string => (m.changePoints.some((c) => c.index === i) ? ' **◆**' : '')
  out.push(`| Refresh | At |${commits ? ' Commit |' : ''} ${h.metrics.map((m) => escapeMarkdown(m.label)).join(' | ')} | Environment change |`)
  out.push(`|---:|---|${commits ? '---|' : ''}${h.metrics.map(() => '---:|').join('')}---|`)
  for (const s of shown) {
    const commit = commits ? ` ${s.commit === null ? '' : escapeMarkdown(s.commit.slice(0, 8))} |` : ''
    out.push(
      `| ${s.index + 1} | ${day(s.at)} |${commit} ${h.metrics.map((m) => `${fmt(m, m.values[s.index] ?? null)}${cp(m, s.index)}`).join(' | ')} | ${escapeMarkdown(envText(s.envChanges))} |`,
    )
  }
  out.push(`| trend | |${commits ? ' |' : ''} ${h.metrics.map((m) => sparkline(m.values.slice(first))).join(' | ')} | |`)
  const entries = changePointEntries(h)
  const inWindow = entries.filter((e) => e.index >= first)
  const earlier = entries.length - inWindow.length
  out.push('')
  if (inWindow.length > 0) {
    out.push('Change points (◆):', '')
    for (const e of inWindow) out.push(`- ${escapeMarkdown(e.line)}`)
  } else {
    out.push('_No change point in these refreshes: every gated metric stayed within its noise._')
  }
  if (earlier > 0)
    out.push('', `_${earlier} earlier change point${earlier === 1 ? '' : 's'} before refresh ${first + 1}: \`servegate history\` lists the whole history._`)
  const newest = (m: MetricHistory): number => Math.max(-1, ...m.changePoints.filter((c) => c.index >= first).map((c) => c.index))
  const charted = h.metrics.reduce((best, m) => (newest(m) > newest(best) ? m : best), h.metrics[0]!)
  out.push(...mermaidChart(charted, shown))
  out.push('', `<sub>Change points: ${h.method}.</sub>`)
  return `${out.join('\n')}\n`
}

/** Metric lines shown in the compact trend before the rest are counted. */
const TREND_METRICS = 12

/**
 * The trend in a few plain lines (a commit message, an issue's opening): per gated metric a
 * trend line and first → newest value, then the change-point lines (or that there are none).
 */
export function renderHistoryTrendText(h: History): string {
  const n = h.steps.length
  const lines = [`Trend of the gated metrics over the baseline's ${n} refresh${n === 1 ? '' : 'es'}, oldest first:`]
  const shown = h.metrics.slice(0, TREND_METRICS)
  const width = Math.max(...shown.map((m) => m.label.length), 6)
  for (const m of shown) {
    lines.push(
      `  ${m.label.padEnd(width)}  ${sparkline(m.values)}  ${fmt(m, m.values.find((v) => v !== null) ?? null)} → ${fmt(m, [...m.values].reverse().find((v) => v !== null) ?? null)}`,
    )
  }
  if (h.metrics.length > shown.length) lines.push(`  … and ${h.metrics.length - shown.length} more (servegate history)`)
  const cps = changePointLines(h)
  if (n < 2) return lines.join('\n')
  if (cps.length === 0) lines.push('No change point: every metric stayed within its noise.')
  else lines.push(`Change points (${h.method}):`, ...cps.map((c) => `  - ${c}`))
  return lines.join('\n')
}
