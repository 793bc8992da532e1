/** `servegate history` as console text and markdown (with a Mermaid chart per metric GitHub renders). Pure. */
import type { History, MetricHistory } from '../analysis/history.js'
import { sparkline } from '../analysis/history.js'
import type { EnvChange } from '../gate/types.js'
import { escapeMarkdown } from './escape.js'
import { fmtMs, fmtRate } from './format.js'

const fmt = (m: MetricHistory, v: number | null): string => (v === null ? '–' : m.unit === 'ms' ? `${fmtMs(v)} ms` : `${fmtRate(v)} ${m.unit}`)
const envText = (changes: readonly EnvChange[]): string => changes.map((c) => `${c.field} ${c.baseline} → ${c.candidate}`).join('; ')
const day = (iso: string): string => iso.slice(0, 16).replace('T', ' ')

/** One line per change point: `refresh 6 (2026-11-02 01:00): +10.2 % (worse); serve command a → b`. */
export function changePointLines(h: History): string[] {
  const out: string[] = []
  for (const m of h.metrics) {
    for (const c of m.changePoints) {
      const env = c.envChanges.length > 0 ? envText(c.envChanges) : 'no environment change recorded'
      out.push(`${m.label}: change at refresh ${c.index + 1} (${day(h.steps[c.index]!.at)}): ${c.changePct >= 0 ? '+' : '−'}${Math.abs(c.changePct).toFixed(1)} % (${c.worse ? 'worse' : 'better'}); ${env}`)
    }
  }
  return out
}

export function renderHistoryText(h: History): string {
  const lines: string[] = [`servegate history — baseline ${h.baseline}, ${h.steps.length} refreshes, oldest first`, '']
  const width = Math.max(...h.metrics.map((m) => m.label.length), 6)
  for (const m of h.metrics) {
    lines.push(`${m.label.padEnd(width)}  ${sparkline(m.values)}  ${fmt(m, m.values.find((v) => v !== null) ?? null)} → ${fmt(m, [...m.values].reverse().find((v) => v !== null) ?? null)}`)
  }
  lines.push('', 'refresh  at                commit    ' + h.metrics.map((m) => m.label).join(' | '))
  for (const s of h.steps) {
    const cells = h.metrics.map((m) => `${fmt(m, m.values[s.index] ?? null)}${m.changePoints.some((c) => c.index === s.index) ? ' ◆' : ''}`)
    lines.push(`${String(s.index + 1).padStart(7)}  ${day(s.at).padEnd(16)}  ${(s.commit ?? '').slice(0, 8).padEnd(8)}  ${cells.join(' | ')}`)
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
  for (const m of h.metrics) {
    const vals = m.values.map((v) => (v === null ? 0 : Number(v.toPrecision(4))))
    if (vals.length < 2) continue
    out.push('', '```mermaid', 'xychart-beta', `  title "${m.label.replace(/"/g, "'")}"`, `  x-axis [${h.steps.map((s) => `"${s.index + 1}"`).join(', ')}]`, `  y-axis "${m.unit}"`, `  line [${vals.join(', ')}]`, '```')
  }
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
    lines.push(`  ${m.label.padEnd(width)}  ${sparkline(m.values)}  ${fmt(m, m.values.find((v) => v !== null) ?? null)} → ${fmt(m, [...m.values].reverse().find((v) => v !== null) ?? null)}`)
  }
  if (h.metrics.length > shown.length) lines.push(`  … and ${h.metrics.length - shown.length} more (servegate history)`)
  const cps = changePointLines(h)
  if (n < 2) return lines.join('\n')
  if (cps.length === 0) lines.push('No change point: every metric stayed within its noise.')
  else lines.push(`Change points (${h.method}):`, ...cps.map((c) => `  - ${c}`))
  return lines.join('\n')
}
