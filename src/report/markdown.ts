/** The methodology's table as GitHub markdown (report files, job summaries). Pure. */
import type { ResultFile } from '../types.js'
import { buildReportModel, CLOCK_LINE, COLUMNS, environmentLine } from './model.js'

/** Renders a result as markdown: environment, then per shape the table, throughput at target and notes. */
export function renderMarkdownReport(result: ResultFile): string {
  const model = buildReportModel(result)
  const env = model.env
  const out: string[] = []
  out.push(`## servegate results${model.sweep ? ` — sweep \`${model.sweep}\`` : ''}`, '')
  out.push(`Target: ${model.target}. ${environmentLine(env)}.`, '')
  out.push(CLOCK_LINE, '')
  for (const shape of model.shapes) {
    out.push(`### ${shape.title}`, '')
    out.push(`| ${COLUMNS.join(' | ')} |`)
    out.push('|---:|---|---|---:|---:|')
    for (const r of shape.rows) out.push(`| ${r.cells.map(escapeCell).join(' | ')} |`)
    out.push('', `**${escapeCell(shape.atTarget)}**`)
    if (shape.notes.length > 0) {
      out.push('')
      for (const [i, n] of shape.notes.entries()) out.push(`${i + 1}. ${escapeCell(n)}`)
    }
    out.push('')
  }
  out.push('<details><summary>Environment</summary>', '')
  const rows: [string, string][] = [
    ['Engine', `${env.engine.name} ${env.engine.version}`],
    ['Model', `${env.model.id} (revision ${env.model.revision}, root ${env.model.root})`],
    ['GPU', env.gpu.names.length > 0 ? `${env.gpu.count} × ${[...new Set(env.gpu.names)].join(', ')}` : 'unknown'],
    ['Driver / CUDA', `${env.gpu.driver_version} / ${env.gpu.cuda_version}`],
    ['Clocks', env.gpu.clocks],
    ['Container digest', env.container_digest],
    ['Serve command', env.serve_command],
    ['Server', env.base_url],
    ['servegate', `${env.harness.version} (commit ${env.harness.git_commit}), Node ${env.harness.node_version}`],
    ['Host', `${env.host.hostname}, ${env.host.platform}, ${env.host.cpus} CPUs`],
    ['Measured', `${env.started_at} → ${env.finished_at}`],
  ]
  out.push('| | |', '|---|---|')
  for (const [k, v] of rows) out.push(`| ${k} | ${escapeCell(v)} |`)
  out.push('', '</details>', '')
  return out.join('\n')
}

// A pipe inside a cell would split it; markdown text must not open HTML either.
function escapeCell(s: string): string {
  return s.replace(/\|/g, '\\|').replace(/</g, '&lt;').replace(/>/g, '&gt;')
}
