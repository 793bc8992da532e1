/**
 * The server's own figures (its Prometheus /metrics) as a second table per
 * shape, never merged into the client's: the two clocks start at different
 * places (the server's TTFT when the request reaches the engine; see
 * docs/validity.md), so no cell holds both. Same words as the client table:
 * `pending` before a run, `invalid` when no run is valid, `n/a` for what the
 * server did not expose. Pure.
 */
import { clientOutputTokens } from '../analysis/validity-rules.js'
import type { LatencyStats, PointResult, RunResult } from '../types.js'
import { fmtInt, fmtMs, withSpread } from './format.js'

export const SERVER_SIDE_TITLE = "Server-side (from the server's /metrics, the server's own clock)"

export const SERVER_SIDE_CAPTION =
  "Each cell: median across valid repeats (±half the min–max range); percentiles are interpolated within the server's histogram buckets. " +
  "Generated tokens: the server's counter over the run; output tokens (client): the responses' usage, or content chunks without it."

export const SERVER_COLUMNS = [
  'Concurrency',
  'TTFT p50 / p99',
  'ITL p50 / p99',
  'TPOT p50 / p99',
  'E2E p50 / p99',
  'Generated tokens (server)',
  'Output tokens (client)',
] as const

/** Rows (cells in SERVER_COLUMNS order), one per concurrency; null when no run of the shape has server figures. */
export function buildServerSideRows(concurrencies: readonly number[], points: readonly PointResult[]): string[][] | null {
  if (!points.some((p) => p.runs.some((r) => r.server_side !== null))) return null
  return concurrencies.map((c) => serverRow(c, points.find((p) => p.concurrency === c)?.runs ?? []))
}

function serverRow(concurrency: number, runs: readonly RunResult[]): string[] {
  const label = String(concurrency)
  const fill = (word: string): string[] => [label, ...SERVER_COLUMNS.slice(1).map(() => word)]
  if (runs.length === 0) return fill('pending')
  const valid = runs.filter((r) => r.validity.valid)
  if (valid.length === 0) return fill('invalid')
  const pair = (stats: (r: RunResult) => LatencyStats | null | undefined): string => {
    const p50 = withSpread(
      valid.map((r) => stats(r)?.p50),
      fmtMs,
    )
    const p99 = withSpread(
      valid.map((r) => stats(r)?.p99),
      fmtMs,
    )
    return p50 === 'n/a' && p99 === 'n/a' ? 'n/a' : `${p50} / ${p99}`
  }
  return [
    label,
    pair((r) => r.server_side?.ttft_ms),
    pair((r) => r.server_side?.itl_ms),
    pair((r) => r.server_side?.tpot_ms),
    pair((r) => r.server_side?.e2el_ms),
    withSpread(
      valid.map((r) => r.server_side?.generation_tokens),
      fmtInt,
    ),
    withSpread(valid.map(clientOutputTokens), fmtInt),
  ]
}
