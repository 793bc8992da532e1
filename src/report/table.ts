/** The methodology's table for a terminal: fixed-width columns, one table per shape. Pure. */
import type { ResultFile } from '../types.js'
import { buildReportModel, CLOCK_LINE, COLUMNS, environmentLine } from './model.js'

/** Renders a result as plain-text tables (one per shape) with the throughput-at-target line and notes. */
export function renderConsoleTable(result: ResultFile): string {
  const model = buildReportModel(result)
  const out: string[] = []
  out.push(`servegate${model.sweep ? ` — sweep ${model.sweep}` : ''} — target ${model.target}`)
  out.push(environmentLine(model.env))
  out.push(CLOCK_LINE)
  for (const shape of model.shapes) {
    out.push('', shape.title)
    const rows = [COLUMNS as readonly string[], ...shape.rows.map((r) => r.cells)]
    const widths = COLUMNS.map((_, i) => Math.max(...rows.map((r) => width(r[i]!))))
    const line = (cells: readonly string[]): string =>
      // Concurrency and the numeric columns right-aligned, like the markdown table.
      cells.map((c, i) => (i === 0 || i >= 3 ? padStart(c, widths[i]!) : padEnd(c, widths[i]!))).join('  ').trimEnd()
    out.push(line(rows[0]!))
    out.push(widths.map((w) => '-'.repeat(w)).join('  '))
    for (const r of rows.slice(1)) out.push(line(r))
    out.push(shape.atTarget)
    for (const [i, n] of shape.notes.entries()) out.push(`[${i + 1}] ${n}`)
  }
  return out.join('\n')
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
