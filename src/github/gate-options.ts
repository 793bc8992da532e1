/**
 * The config file's gate tolerances (percent per metric family) as the gate
 * stage's options (fractions per metric kind). Pure.
 */
import type { GateSettings } from '../config/resolve.js'
import type { GateOptions, Tolerances } from '../gate/types.js'

/** `gate.tolerance_pct` → GateOptions.tolerances and `gate.max_failed_requests` → maxFailedRequests; unset keys keep the gate's defaults. */
export function gateOptionsFrom(settings: GateSettings): Partial<GateOptions> {
  const pct = settings.tolerancePct
  const tolerances: Tolerances = {}
  if (pct.itl !== undefined) tolerances.itl_p95 = pct.itl / 100
  if (pct.tpot !== undefined) tolerances.tpot_p95 = pct.tpot / 100
  if (pct.ttft !== undefined) tolerances.ttft_p95 = pct.ttft / 100
  if (pct.throughput !== undefined) {
    tolerances.tput_at_target = pct.throughput / 100
    tolerances.output_tput = pct.throughput / 100
  }
  const opts: Partial<GateOptions> = {}
  if (Object.keys(tolerances).length > 0) opts.tolerances = tolerances
  if (settings.maxFailedRequests !== null) opts.maxFailedRequests = settings.maxFailedRequests
  return opts
}
