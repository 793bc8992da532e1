/**
 * Names of gated and reported figures. A key is `kind@INxOUT@cC` for a
 * concurrency point or `kind@INxOUT` for a per-shape figure; keys are stored in
 * baselines, so their format is part of the `servegate.baseline/v1` contract.
 */
import type { MetricKind } from './types.js'

export interface KindInfo {
  /** Human name used in labels. */
  name: string
  unit: string
  higherIsBetter: boolean
  perShape: boolean
}

export const KIND_INFO: Record<MetricKind, KindInfo> = {
  itl_p95: { name: 'p95 ITL', unit: 'ms', higherIsBetter: false, perShape: false },
  tput_at_target: { name: 'throughput at target', unit: 'tok/s', higherIsBetter: true, perShape: true },
  ttft_p95: { name: 'p95 TTFT', unit: 'ms', higherIsBetter: false, perShape: false },
  tpot_p95: { name: 'p95 TPOT', unit: 'ms', higherIsBetter: false, perShape: false },
  e2el_p95: { name: 'p95 E2EL', unit: 'ms', higherIsBetter: false, perShape: false },
  req_tput: { name: 'request throughput', unit: 'req/s', higherIsBetter: true, perShape: false },
  output_tput: { name: 'output throughput', unit: 'tok/s', higherIsBetter: true, perShape: false },
  // Requests per second that met every --goodput SLO; present only in runs measured with SLOs.
  goodput: { name: 'goodput', unit: 'req/s', higherIsBetter: true, perShape: false },
}

/** Every metric kind in display order (gated primaries first). */
export const METRIC_KINDS = Object.keys(KIND_INFO) as MetricKind[]

/** Prefix of the per-point invariant "output tokens per completed request" (stored, never a row). */
export const OUT_TOK = 'out_tok'

/**
 * Prefix of the per-point p95 of ITL per token (each gap over the request's mean tokens
 * per chunk): stored, and gated instead of per-chunk ITL when tokens per chunk changed.
 */
export const ITL_TOK = 'itl_tok_p95'

/** `4096x512` */
export function shapeLabel(inputLen: number, outputLen: number): string {
  return `${inputLen}x${outputLen}`
}

/** `4096x512@c16` */
export function pointLabel(inputLen: number, outputLen: number, concurrency: number): string {
  return `${shapeLabel(inputLen, outputLen)}@c${concurrency}`
}

/** Scope of a result point: `4096x512@c16`, or for an open-loop point its rate, `4096x512@rate20` (`@rateinf`). */
export function pointScope(p: { input_len: number; output_len: number; concurrency: number; request_rate?: number | 'inf' }): string {
  return p.request_rate === undefined ? pointLabel(p.input_len, p.output_len, p.concurrency) : `${shapeLabel(p.input_len, p.output_len)}@rate${p.request_rate}`
}

/** Key of a figure: `kind@scope`. */
export function metricKey(kind: MetricKind | typeof OUT_TOK | typeof ITL_TOK, scope: string): string {
  return `${kind}@${scope}`
}

/** Splits a key back into its kind and scope; null when the kind is unknown. */
export function parseMetricKey(key: string): { kind: MetricKind; scope: string } | null {
  const at = key.indexOf('@')
  if (at < 0) return null
  const kind = key.slice(0, at)
  if (!(kind in KIND_INFO)) return null
  return { kind: kind as MetricKind, scope: key.slice(at + 1) }
}

/** `p95 ITL 4096×512 c=16` — what a person reads in the verdict table. */
export function humanLabel(kind: MetricKind, scope: string): string {
  const m = /^(\d+)x(\d+)(?:@c(\d+)|@rate([\d.]+|inf))?$/.exec(scope)
  const where = m ? `${m[1]}×${m[2]}${m[3] !== undefined ? ` c=${m[3]}` : m[4] !== undefined ? ` rate=${m[4]}/s` : ''}` : scope
  return `${KIND_INFO[kind].name} ${where}`
}
