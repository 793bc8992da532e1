/** Number formatting, medians with spread, and plain words for validity codes — shared by the report renderers. */
import type { ValidityCode } from '../types.js'
import { median } from '../util/median.js'

/** n, median, min and max of the finite values; null when there are none. */
export function summarize(values: readonly (number | null | undefined)[]): { n: number; median: number; min: number; max: number } | null {
  const xs = values.filter((v): v is number => typeof v === 'number' && Number.isFinite(v)).sort((a, b) => a - b)
  if (xs.length === 0) return null
  return { n: xs.length, median: median(xs), min: xs[0]!, max: xs[xs.length - 1]! }
}

/** Thousands separators, fixed decimals. */
function grouped(x: number, decimals: number): string {
  return x.toLocaleString('en-US', { minimumFractionDigits: decimals, maximumFractionDigits: decimals })
}

/** A latency in ms: 2 decimals under 10 ms, 1 under 100 ms, whole ms above. */
export function fmtMs(x: number): string {
  const a = Math.abs(x)
  return grouped(x, a < 10 ? 2 : a < 100 ? 1 : 0)
}

/** A rate (tok/s): 1 decimal under 100, whole numbers with separators above. */
export function fmtRate(x: number): string {
  return grouped(x, Math.abs(x) < 100 ? 1 : 0)
}

/** A token count with separators (4,096). */
export function fmtInt(x: number): string {
  return grouped(x, 0)
}

/** A fraction as a percentage with one decimal (0.016 → 1.6%), like the ±X% of withSpread. */
export function fmtPct(fraction: number): string {
  return `${(fraction * 100).toFixed(1)}%`
}

/** A fraction as a percentage, at most one decimal, for limits and prose (0.25 → 25%, 0.034 → 3.4%). */
export function fmtPctShort(fraction: number): string {
  return `${pctNumber(fraction)}%`
}

// `+` drops a trailing .0.
function pctNumber(fraction: number): string {
  return String(+(fraction * 100).toFixed(1))
}

/** `lo–hi` of the values, or the one value when both ends print the same. */
export function fmtRange(values: readonly number[], fmt: (x: number) => string): string {
  const lo = fmt(Math.min(...values))
  const hi = fmt(Math.max(...values))
  return lo === hi ? lo : `${lo}–${hi}`
}

/** A range of fractions as percentages with one % sign: 3–12%. */
export function fmtPctRange(fractions: readonly number[]): string {
  return `${fmtRange(fractions, pctNumber)}%`
}

/**
 * A median across repeats with its spread: `412 (±1.8%)`, where ±X% is half
 * the min–max range as a share of the median; a single run has no spread.
 */
export function withSpread(values: readonly (number | null | undefined)[], fmt: (x: number) => string): string {
  const s = summarize(values)
  if (s === null) return 'n/a'
  if (s.n < 2) return fmt(s.median)
  if (s.median === 0) return `${fmt(s.median)} (${fmt(s.min)}–${fmt(s.max)})`
  const pct = ((s.max - s.min) / 2 / Math.abs(s.median)) * 100
  return `${fmt(s.median)} (±${pct.toFixed(1)}%)`
}

const PLAIN: Record<ValidityCode, string> = {
  client_saturated: 'the load generator was saturated (the client, not the server, was the bottleneck)',
  token_count_mismatch: 'server and client token counts disagree',
  output_len_mismatch: 'outputs were shorter than requested',
  input_len_mismatch: 'the server processed another prompt length than was sent',
  prompt_uncalibrated: 'servegate could not size the chat prompts (no /tokenize for chat): the template came on top',
  prefix_cache_contaminated: 'prompts were served from the prefix cache',
  ramp_dominated: 'ramp-up and drain took too much of the run to trust it',
  requests_failed: 'requests failed',
  too_few_requests: 'too few measured requests for the percentiles reported',
  gpu_throttled: 'the GPU was throttled',
  gpu_shared: 'another process was using the GPU',
  checks_not_run: 'imported: some checks could not be made',
  shards_unaligned: "the shards' load did not line up in time (a sharded sweep's schedule or clocks)",
}

/** A validity code in plain words. */
export function plainValidity(code: ValidityCode): string {
  return PLAIN[code] ?? code
}
