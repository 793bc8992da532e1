/**
 * A matrix's one verdict as markdown (the PR comment, the job summary,
 * `servegate aggregate --markdown`) and as terminal text: one row per
 * configuration, worst first, then each configuration's gated rows in a
 * collapsed block. Every string comes from a record some job wrote, so each is
 * escaped. Pure.
 */
import { NO_RECORD, type Aggregate, type AggregateRow } from '../gate/aggregate.js'
import { costLine, costOf } from '../gate/cost.js'
import type { RecordRow } from '../gate/record.js'
import type { VerdictKind } from '../gate/types.js'
import { escapeMarkdown } from '../util/markdown-escape.js'
import { VERDICT_ICON, fmtSignedPct, fmtValue, verdictWord } from './verdict-format.js'

const ICON = VERDICT_ICON

/** Longest "why" shown in a table cell; the details block and the record have the rest. */
const WHY_LIMIT = 300

const plural = (n: number, one: string, many = `${one}s`): string => `${n} ${n === 1 ? one : many}`

/** `3 configurations: 1 pass, 1 regression, 1 incomplete`, counted in the rows' order (worst first). */
function aggregateCounts(agg: Pick<Aggregate, 'rows'>): string {
  const counts = new Map<VerdictKind, number>()
  for (const r of agg.rows) counts.set(r.verdict, (counts.get(r.verdict) ?? 0) + 1)
  const parts = [...counts.entries()].map(([v, n]) => `${n} ${v.replace('_', ' ')}`)
  return `${plural(agg.rows.length, 'configuration')}: ${parts.join(', ')}`
}

/** The first line: `❌ servegate matrix: regression — 3 configurations: 1 pass, …`. */
export function aggregateHeadline(agg: Pick<Aggregate, 'rows' | 'verdict'>): string {
  return `${ICON[agg.verdict]} servegate matrix: ${agg.verdict.replace('_', ' ')} — ${aggregateCounts(agg)}`
}

function changed(r: RecordRow): string {
  return `${r.label} ${fmtSignedPct(r.delta_pct)}`
}

/** Plain text (unescaped) saying why a row reads as it does. */
function rowWhy(row: AggregateRow): string {
  const r = row.record
  const parts: string[] = []
  if (r === null) parts.push(NO_RECORD)
  else if (r.verdict === 'regression') {
    const regressed = r.rows.filter((x) => x.status === 'regression')
    parts.push(regressed.length > 0 ? regressed.map(changed).join('; ') : r.regressions.join('; '))
  } else if (r.verdict === 'pass' || r.verdict === 'improvement') {
    const better = r.rows.filter((x) => x.status === 'improvement')
    parts.push(
      `${plural(r.rows.length, 'gated metric')} within ${r.rows.length === 1 ? 'its bar' : 'their bars'}${better.length > 0 ? `; improved: ${better.map(changed).join('; ')}` : ''}`,
    )
  } else if (r.detail !== null) parts.push(r.detail)
  else if (r.reasons.length > 0) parts.push(r.reasons[0]!)
  parts.push(...row.notes.filter((n) => n !== NO_RECORD))
  const text = parts.filter((p) => p !== '').join(' · ')
  return text.length > WHY_LIMIT ? `${text.slice(0, WHY_LIMIT)} …` : text
}

function runnerCell(row: AggregateRow): string {
  const ru = row.record?.runner
  if (ru == null || ru.name === null) return '–'
  return escapeMarkdown(ru.os === null ? ru.name : `${ru.name} (${ru.os})`)
}

function jobCell(row: AggregateRow): string {
  const j = row.record?.job
  if (j == null || j.run_url === null) return '–'
  // Only links GitHub would make itself: an https URL, no markdown in it.
  if (!/^https?:\/\/[^\s()<>[\]]+$/.test(j.run_url)) return escapeMarkdown(j.run_url)
  const name = j.job === null ? 'run' : escapeMarkdown(j.job)
  return `[${name}](${j.run_url})${j.run_attempt !== null && j.run_attempt !== '1' ? ` attempt ${escapeMarkdown(j.run_attempt)}` : ''}`
}

function details(row: AggregateRow): string | null {
  const r = row.record
  if (r === null) return null
  const lines = [`<details><summary>${escapeMarkdown(row.label)} — ${escapeMarkdown(r.verdict.replace('_', ' '))}</summary>`, '']
  const facts: string[] = []
  if (r.env !== null) {
    const gpus = r.env.gpu_count === 'unknown' ? r.env.gpu : `${r.env.gpu_count} × ${r.env.gpu}`
    facts.push(`GPU ${gpus}, driver ${r.env.driver}, CUDA ${r.env.cuda}; engine ${r.env.engine}; model ${r.env.model} (${r.env.model_revision})`)
    facts.push(`serve command: ${r.env.serve_command}`)
  }
  if (r.compared_with !== null) facts.push(`${r.mode} mode, sweep "${r.sweep ?? '?'}", compared with ${r.compared_with}`)
  if (r.blame !== null) facts.push(`environment: ${r.blame}`)
  if (r.cost !== undefined) facts.push(costLine(r.cost))
  if (r.head_sha !== null) facts.push(`commit ${r.head_sha.slice(0, 12)}, recorded ${r.at}`)
  if (row.path !== null) facts.push(`record: ${row.path}`)
  lines.push(...facts.map((f) => `- ${escapeMarkdown(f)}`))
  if (r.rows.length > 0) {
    lines.push('', '| gated metric | status | baseline | candidate | Δ |', '|---|---|---|---|---|')
    for (const x of r.rows) {
      lines.push(
        `| ${escapeMarkdown(x.label)} | ${x.status} | ${escapeMarkdown(fmtValue(x.baseline, x.unit))} | ${escapeMarkdown(fmtValue(x.candidate, x.unit))} | ${fmtSignedPct(x.delta_pct)} |`,
      )
    }
  }
  const why = r.verdict === 'pass' || r.verdict === 'improvement' ? [] : r.reasons.slice(0, 5)
  if (why.length > 0) lines.push('', ...why.map((w) => `> ${escapeMarkdown(w)}`))
  lines.push('', '</details>')
  return lines.join('\n')
}

/**
 * What the matrix spent: the sum of the costs its records state, and over how many configurations;
 * null when none states one. Caps are per configuration, so the sum names none.
 */
export function matrixCostLine(agg: Pick<Aggregate, 'rows'>): string | null {
  const costs = agg.rows.flatMap((r) => (r.record?.cost !== undefined ? [r.record.cost] : []))
  if (costs.length === 0) return null
  const sum = (f: (c: (typeof costs)[number]) => number): number => costs.reduce((t, c) => t + f(c), 0)
  const total = costOf(
    { engineStarts: sum((c) => c.engine_starts), pointRuns: sum((c) => c.point_runs) },
    sum((c) => c.gpu_minutes),
    null,
    false,
  )
  const over = costs.length === agg.rows.length ? plural(costs.length, 'configuration') : `${costs.length} of ${agg.rows.length} configurations`
  return `${costLine(total)} over ${over}`
}

export interface AggregateMarkdownOptions {
  /** Heading level of the headline: `###` in a comment, `##` in a summary. */
  level?: string
  /** Markdown shown under the headline (the run's stamp line). */
  stamp?: string | null
  /** Plain-text notes for the reader (escaped here). */
  notes?: readonly string[]
}

/** The table, one row per configuration (worst first). */
export function renderAggregateTable(agg: Pick<Aggregate, 'rows'>): string {
  const lines = ['| configuration | verdict | why | runner | job |', '|---|---|---|---|---|']
  for (const row of agg.rows) {
    const label = `${escapeMarkdown(row.label)}${row.expected ? '' : ' ⚑'}`
    lines.push(`| ${label} | ${ICON[row.verdict]} ${row.verdict.replace('_', ' ')} | ${escapeMarkdown(rowWhy(row))} | ${runnerCell(row)} | ${jobCell(row)} |`)
  }
  return lines.join('\n')
}

/** The per-configuration blocks (gated rows, environment, blame), one string each, worst first. */
export function renderAggregateDetails(agg: Pick<Aggregate, 'rows'>): string[] {
  return agg.rows.map(details).filter((d): d is string => d !== null)
}

/** The whole markdown: headline, the matrix's cost, stamp, notes, the table, then each configuration's details. */
export function renderAggregateMarkdown(agg: Aggregate, opts: AggregateMarkdownOptions = {}): string {
  const parts = [`${opts.level ?? '##'} ${aggregateHeadline(agg)}`]
  const cost = matrixCostLine(agg)
  if (cost !== null) parts.push(cost)
  if (opts.stamp != null) parts.push(opts.stamp)
  if (agg.regressions.length > 0) parts.push(`Regressed: ${agg.regressions.map(escapeMarkdown).join('; ')}`)
  for (const n of opts.notes ?? []) parts.push(`> ${escapeMarkdown(n)}`)
  parts.push(renderAggregateTable(agg))
  if (agg.rows.some((r) => !r.expected)) parts.push('⚑ not an expected configuration; its verdict counts all the same.')
  parts.push(...renderAggregateDetails(agg))
  return parts.join('\n\n') + '\n'
}

/** Terminal text: the verdict line and one line per configuration. */
export function renderAggregateText(agg: Aggregate): string {
  const width = Math.max(13, ...agg.rows.map((r) => r.label.length))
  const cost = matrixCostLine(agg)
  const lines = [`servegate aggregate: ${verdictWord(agg.verdict)} — ${aggregateCounts(agg)}`, ...(cost === null ? [] : [`  ${cost}`]), '']
  for (const row of agg.rows) {
    lines.push(`  ${row.label.padEnd(width)}  ${verdictWord(row.verdict).padEnd(14)}  ${rowWhy(row)}${row.expected ? '' : '  [not expected]'}`)
  }
  return lines.join('\n') + '\n'
}
