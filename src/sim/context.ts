/** Everything a running simulator instance shares between its routes. */
import type { SimEngine } from './engine.js'
import type { SimOptions } from './options.js'
import type { PrefixCache } from './prefix-cache.js'
import type { SimMetrics } from './prom-metrics.js'
import type { TraceStore } from './trace.js'

export interface SimContext {
  opts: SimOptions
  engine: SimEngine
  metrics: SimMetrics
  traces: TraceStore
  maxModelLen: number
  /** KV block size (prefix-cache granularity). */
  blockSize: number
  /** Model revision reported by /v1/models (changes with the timing configuration). */
  revision: string
  /** Deterministic mode's prefix cache (the batching engine keeps its own). */
  detCache: PrefixCache | null
  /** Timers of requests still inside the front delay (cleared on close). */
  pending: Set<NodeJS.Timeout>
  nextRequestId(): string
}
