/**
 * Spread across repeats of every figure in the methodology's table (issue:
 * "spread across repeats (median, min, max, CV) for every reported figure").
 * A table cell keeps only the median and ±half the range to stay readable;
 * this is the full account behind it, valid runs only like the cells. Pure.
 */
import { spread } from '../analysis/spread.js'
import type { PointResult, RunResult } from '../types.js'
import { fmtMs, fmtPct, fmtRate } from './format.js'

export const SPREAD_COLUMNS = ['Concurrency', 'Figure', 'Valid runs', 'Median', 'Min', 'Max', 'CV'] as const

/** The table's figures in its column order, with the cell's number format. */
const FIGURES: readonly [string, (r: RunResult) => number | null, (x: number) => string][] = [
  ['TTFT p50 (ms)', (r) => r.ttft_ms.p50, fmtMs],
  ['TTFT p99 (ms)', (r) => r.ttft_ms.p99, fmtMs],
  ['ITL p50 (ms)', (r) => r.itl_ms.p50, fmtMs],
  ['ITL p99 (ms)', (r) => r.itl_ms.p99, fmtMs],
  ['Output tok/s', (r) => r.output_throughput, fmtRate],
  ['Tok/s/user', (r) => r.tok_s_per_user, fmtRate],
]

/**
 * Rows (cells in SPREAD_COLUMNS order): one per concurrency with a valid run
 * and figure it has. Pending and all-invalid concurrencies have no row: the
 * table already says so. CV is n/a for one run (no spread to measure).
 */
export function buildSpreadRows(concurrencies: readonly number[], points: readonly PointResult[]): string[][] {
  const rows: string[][] = []
  for (const c of concurrencies) {
    const valid = (points.find((p) => p.concurrency === c)?.runs ?? []).filter((r) => r.validity.valid)
    for (const [name, get, fmt] of FIGURES) {
      const s = spread(valid.map(get).filter((v): v is number => v !== null && Number.isFinite(v)))
      if (s === null) continue
      rows.push([String(c), name, String(s.n), fmt(s.median), fmt(s.min), fmt(s.max), s.n > 1 ? fmtPct(s.cv) : 'n/a'])
    }
  }
  return rows
}
