/** The methodology's table as GitHub markdown (report files, job summaries). Pure. */
import type { ResultFile } from '../types.js'
import { escapeMarkdown, escapeStrings } from '../util/markdown-escape.js'
import { buildReportModel, CLOCK_LINE, COLUMNS, environmentLine, perGpuLine } from './model.js'
import { SERVER_COLUMNS, SERVER_SIDE_CAPTION, SERVER_SIDE_TITLE } from './server-side.js'
import { SPREAD_COLUMNS } from './spread-rows.js'

export interface MarkdownReportOptions {
  /** Name the server's base URL and the load generator's host (default true; PR comments leave them out). */
  showHost?: boolean
}

/**
 * Renders a result as markdown: environment, then per shape the table, warmup and ramp, throughput at
 * target, notes, the server's own table and (collapsed) the spread across repeats of every figure.
 * Every string the server or host reported is escaped (./escape.ts): it renders as text, never as markup.
 */
export function renderMarkdownReport(result: ResultFile, opts: MarkdownReportOptions = {}): string {
  const model = buildReportModel(result)
  const env = model.env
  const out: string[] = []
  out.push(`## servegate results${model.sweep ? ` — sweep \`${model.sweep}\`` : ''}`, '')
  out.push(`Target: ${model.target}. ${environmentLine(escapeStrings(env))}.`, '')
  out.push(CLOCK_LINE, '')
  out.push(escapeCell(perGpuLine(model.gpus)), '')
  if (model.source !== null) out.push(`**${escapeCell(model.source)}**`, '')
  if (model.interrupted !== null) out.push(`**${escapeCell(model.interrupted)}**`, '')
  out.push(escapeCell(model.headroom), '')
  for (const shape of model.shapes) {
    out.push(`### ${shape.title}`, '')
    const cols = shape.columns ?? COLUMNS
    out.push(
      ...table(
        cols,
        `|${cols.map((_, i) => (i === 1 || i === 2 ? '---' : '---:')).join('|')}|`,
        shape.rows.map((r) => r.cells),
      ),
    )
    if (shape.warmup !== null) out.push('', escapeCell(shape.warmup))
    out.push('', `**${escapeCell(shape.atTarget)}**`)
    for (const line of shape.extra ?? []) out.push('', escapeCell(line))
    if (shape.notes.length > 0) {
      out.push('')
      // Notes quote validity details, which carry the server's own error text.
      for (const [i, n] of shape.notes.entries()) out.push(`${i + 1}. ${escapeMarkdown(n)}`)
    }
    if (shape.serverSide !== null) {
      out.push('', `#### ${escapeCell(SERVER_SIDE_TITLE)}`, '', escapeCell(SERVER_SIDE_CAPTION), '')
      out.push(...table(SERVER_COLUMNS, '|---:|---|---|---|---|---:|---:|', shape.serverSide))
    }
    if (shape.spread.length > 0) {
      // Collapsed: the table's cells already carry the median and ±half range; this is the full account.
      out.push('', '<details><summary>Spread across repeats</summary>', '')
      out.push('Valid runs only; CV = sample standard deviation / mean.', '')
      out.push(...table(SPREAD_COLUMNS, '|---:|---|---:|---:|---:|---:|---:|', shape.spread))
      out.push('', '</details>')
    }
    out.push('')
  }
  out.push('<details><summary>Environment</summary>', '')
  const rows: [string, string | null][] = [
    ['Engine', `${env.engine.name} ${env.engine.version}`],
    ['Model', `${env.model.id} (revision ${env.model.revision}, root ${env.model.root})`],
    [
      'GPU',
      env.gpu.names.length > 0
        ? `${env.gpu.count} × ${[...new Set(env.gpu.names)].join(', ')}`
        : typeof env.gpu.count === 'number'
          ? `${env.gpu.count} (model unknown)`
          : 'unknown',
    ],
    ['Driver / CUDA', `${env.gpu.driver_version} / ${env.gpu.cuda_version}`],
    ['Clocks', env.gpu.clocks],
    ['Container digest', env.container_digest],
    ['Serve command', env.serve_command],
    ['Server', opts.showHost === false ? null : env.base_url],
    ['servegate', `${env.harness.version} (commit ${env.harness.git_commit}), Node ${env.harness.node_version}`],
    ['Host', opts.showHost === false ? `${env.host.platform}, ${env.host.cpus} CPUs` : `${env.host.hostname}, ${env.host.platform}, ${env.host.cpus} CPUs`],
    ['Measured', `${env.started_at} → ${env.finished_at}`],
  ]
  out.push('| | |', '|---|---|')
  for (const [k, v] of rows) if (v !== null) out.push(`| ${k} | ${escapeMarkdown(v)} |`)
  out.push('', '</details>', '')
  return out.join('\n')
}

/** A markdown table: header, the alignment row given, escaped cells. */
function table(columns: readonly string[], align: string, rows: readonly (readonly string[])[]): string[] {
  return [`| ${columns.join(' | ')} |`, align, ...rows.map((r) => `| ${r.map(escapeCell).join(' | ')} |`)]
}

// A pipe inside a cell would split it; markdown text must not open HTML either.
function escapeCell(s: string): string {
  return s.replace(/\|/g, '\\|').replace(/</g, '&lt;').replace(/>/g, '&gt;')
}
