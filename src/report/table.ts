/** The methodology's table for a terminal: fixed-width columns, one table per shape. Pure. */
import type { ResultFile } from '../types.js'
import { buildReportModel, CLOCK_LINE, COLUMNS, environmentLine, perGpuLine } from './model.js'
import { SERVER_COLUMNS, SERVER_SIDE_CAPTION, SERVER_SIDE_TITLE } from './server-side.js'

/** Renders a result as plain-text tables (one per shape) with the throughput-at-target line and notes. */
export function renderConsoleTable(result: ResultFile): string {
  const model = buildReportModel(result)
  const out: string[] = []
  out.push(`servegate${model.sweep ? ` — sweep ${model.sweep}` : ''} — target ${model.target}`)
  out.push(environmentLine(model.env))
  out.push(CLOCK_LINE)
  out.push(perGpuLine(model.gpus))
  if (model.source !== null) out.push(model.source)
  if (model.interrupted !== null) out.push(model.interrupted)
  out.push(model.headroom)
  for (const shape of model.shapes) {
    out.push('', shape.title)
    // Concurrency and the numeric columns right-aligned, like the markdown table.
    out.push(
      ...drawTable(
        shape.columns ?? COLUMNS,
        shape.rows.map((r) => r.cells),
        (i) => i === 0 || i >= 3,
      ),
    )
    if (shape.warmup !== null) out.push(shape.warmup)
    out.push(shape.atTarget)
    out.push(...(shape.extra ?? []))
    for (const [i, n] of shape.notes.entries()) out.push(`[${i + 1}] ${n}`)
    if (shape.serverSide !== null) {
      out.push('', SERVER_SIDE_TITLE, SERVER_SIDE_CAPTION)
      out.push(...drawTable(SERVER_COLUMNS, shape.serverSide, (i) => i === 0 || i >= 5))
    }
  }
  return out.join('\n')
}

/** Header, dashes and rows, each column as wide as its widest cell. */
function drawTable(columns: readonly string[], body: readonly (readonly string[])[], rightAligned: (column: number) => boolean): string[] {
  const rows = [columns, ...body]
  const widths = columns.map((_, i) => Math.max(...rows.map((r) => width(r[i] ?? ''))))
  const line = (cells: readonly string[]): string =>
    cells
      .map((c, i) => (rightAligned(i) ? padStart(c, widths[i]!) : padEnd(c, widths[i]!)))
      .join('  ')
      .trimEnd()
  return [line(columns), widths.map((w) => '-'.repeat(w)).join('  '), ...body.map(line)]
}

// Display width: count code points, not UTF-16 units (±, –, ≥ are one column each).
function width(s: string): number {
  return [...s].length
}
function padStart(s: string, w: number): string {
  return ' '.repeat(Math.max(0, w - width(s))) + s
}
function padEnd(s: string, w: number): string {
  return s + ' '.repeat(Math.max(0, w - width(s)))
}
