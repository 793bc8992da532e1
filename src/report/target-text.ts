/** The sweep's latency target in words, as every report, comment and chart states it. */
import { interactivity } from '../analysis/per-gpu.js'
import type { ResultTarget } from '../types.js'

/** `p95 TPOT ≤ 50 ms` */
export function targetText(t: ResultTarget): string {
  return `p${t.percentile} ${t.metric.toUpperCase()} ≤ ${t.threshold_ms} ms`
}

/**
 * `p95 TPOT ≤ 50 ms ⇔ ≥ 20 tok/s/user`: a TPOT target in interactivity terms too
 * (interactivity is 1000 / TPOT); any other target names its own metric only.
 */
export function targetInteractivityText(t: ResultTarget): string {
  const speed = t.metric === 'tpot' ? interactivity(t.threshold_ms) : null
  return speed === null ? targetText(t) : `${targetText(t)} ⇔ ≥ ${+speed.toFixed(1)} tok/s/user`
}
