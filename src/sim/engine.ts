/** What the HTTP layer needs from either engine (deterministic or batching). */
import type { EngineGauges } from './prom-metrics.js'
import type { SimSequence } from './sequence.js'

export interface SimEngine {
  /** Start generating for a request that has reached the engine. */
  submit(seq: SimSequence): void
  /** Current running/waiting counts and KV usage for /metrics. */
  gauges(): EngineGauges
  /** Stop all timers (server shutdown). */
  close(): void
}
