/**
 * Goodput (vLLM's `--goodput`): the completed requests that met every
 * service-level objective given — TTFT, TPOT and E2EL per request, each at or
 * under its bound in ms — as a share of the completed requests, and as
 * requests and output tokens per second over the run's duration. A request
 * without a TPOT (one output token) meets a TPOT bound vacuously, as in vLLM,
 * which then counts its TPOT as 0. Pure.
 */
import type { Goodput, GoodputSlo, RequestRecord } from '../types.js'
import { isCompleted, requestFigures, type RequestFigures } from './per-request.js'

/** Whether one request's figures meet every SLO given. */
export function meetsSlo(f: Pick<RequestFigures, 'ttftMs' | 'tpotMs' | 'e2elMs'>, slo: GoodputSlo): boolean {
  if (slo.ttft_ms !== undefined && !(f.ttftMs !== null && f.ttftMs <= slo.ttft_ms)) return false
  if (slo.tpot_ms !== undefined && !((f.tpotMs ?? 0) <= slo.tpot_ms)) return false
  if (slo.e2el_ms !== undefined && !(f.e2elMs !== null && f.e2elMs <= slo.e2el_ms)) return false
  return true
}

/** Goodput of a run's records over `durationS` seconds. */
export function goodputOf(records: readonly RequestRecord[], slo: GoodputSlo, durationS: number): Goodput {
  let completed = 0
  let good = 0
  let goodTokens = 0
  for (const rec of records) {
    if (rec === undefined || !isCompleted(rec)) continue
    completed++
    const f = requestFigures(rec)
    if (!meetsSlo(f, slo)) continue
    good++
    goodTokens += f.outputTokens
  }
  const perS = (n: number): number => (durationS > 0 ? n / durationS : 0)
  return { share: completed > 0 ? good / completed : null, request_throughput: perS(good), output_throughput: perS(goodTokens), slo: { ...slo } }
}
