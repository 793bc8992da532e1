/**
 * Evidence that the client itself kept up: each load thread samples its own
 * event loop (utilisation and delay) over the measured window, and the run's
 * records give send lag, achieved in-flight count and event rate. Saturation
 * is judged from these figures downstream (analysis), not here.
 */
import { monitorEventLoopDelay, performance } from 'node:perf_hooks'
import type { ClientStats, RequestRecord } from '../types.js'

/** What one thread's event loop looked like over the measured window. */
export interface LoopSample {
  /** Event-loop utilisation, 0..1. */
  elu: number
  /** p99 event-loop delay, ms (beyond the sampling interval). */
  delayP99Ms: number
  /** Longest event-loop delay, ms. */
  delayMaxMs: number
}

export interface LoopMonitor {
  /** Stop sampling and return the figures since start. */
  stop(): LoopSample
}

/** Delay sampling interval, ms: fine enough to see a GC pause, cheap enough not to cause delay. */
const DELAY_RESOLUTION_MS = 10

/** Start watching the calling thread's event loop. */
export function startLoopMonitor(): LoopMonitor {
  const elu0 = performance.eventLoopUtilization()
  const h = monitorEventLoopDelay({ resolution: DELAY_RESOLUTION_MS })
  h.enable()
  return {
    stop() {
      h.disable()
      const elu = performance.eventLoopUtilization(elu0).utilization
      // An idle histogram reports NaN/huge sentinels; treat "no sample" as 0.
      // The histogram holds whole sampling intervals; the delay is what exceeds the interval.
      const p99 = h.count > 0 ? Math.max(0, h.percentile(99) / 1e6 - DELAY_RESOLUTION_MS) : 0
      const max = h.count > 0 ? Math.max(0, h.max / 1e6 - DELAY_RESOLUTION_MS) : 0
      return { elu: Number.isFinite(elu) ? elu : 0, delayP99Ms: p99, delayMaxMs: max }
    },
  }
}

/** Nearest-rank percentile (p in 0..100) of `values`; 0 when empty. */
export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return 0
  const sorted = Float64Array.from(values).sort()
  const rank = Math.ceil((p / 100) * sorted.length)
  return sorted[Math.min(sorted.length - 1, Math.max(0, rank - 1))] as number
}

/**
 * Time-weighted mean number of requests in flight (sent → end of stream, as
 * the client saw them) over [fromMs, toMs] (ms since epoch).
 */
export function meanInFlight(records: readonly RequestRecord[], fromMs: number, toMs: number): number {
  const span = toMs - fromMs
  if (!(span > 0)) return 0
  let area = 0
  for (const r of records) {
    const a = Math.max(r.startMs, fromMs)
    const b = Math.min(r.startMs + r.streamEndMs, toMs)
    if (b > a) area += b - a
  }
  return area / span
}

/**
 * The window in which a closed loop must hold every slot busy: first send →
 * last send (after the last send slots legitimately drain). When all requests
 * went out at once (no such window), first send → last completion.
 */
export function issuingWindow(records: readonly RequestRecord[]): { fromMs: number; toMs: number } {
  let first = Infinity
  let last = -Infinity
  let end = -Infinity
  for (const r of records) {
    first = Math.min(first, r.startMs)
    last = Math.max(last, r.startMs)
    end = Math.max(end, r.startMs + r.streamEndMs)
  }
  if (records.length === 0) return { fromMs: 0, toMs: 0 }
  // Under 1 ms of issuing means one batch: judge over the whole run instead.
  return last - first >= 1 ? { fromMs: first, toMs: last } : { fromMs: first, toMs: end }
}

export interface ClientSummaryInput {
  workers: number
  loops: readonly LoopSample[]
  sendLagsMs: readonly number[]
  records: readonly RequestRecord[]
  /** Measured window, ms since epoch. */
  startMs: number
  endMs: number
}

/** Combine the threads' loop samples and the run's records into ClientStats. */
export function summariseClient(input: ClientSummaryInput): ClientStats {
  const { fromMs, toMs } = issuingWindow(input.records)
  let events = 0
  for (const r of input.records) events += r.contentChunks
  const seconds = (input.endMs - input.startMs) / 1000
  return {
    workers: input.workers,
    eventLoopUtilization: Math.max(0, ...input.loops.map((l) => l.elu)),
    // Threads' histograms are not merged: the worst thread's p99 is the figure that matters.
    eventLoopDelayP99Ms: Math.max(0, ...input.loops.map((l) => l.delayP99Ms)),
    sendLagP50Ms: percentile(input.sendLagsMs, 50),
    sendLagP99Ms: percentile(input.sendLagsMs, 99),
    meanInFlight: meanInFlight(input.records, fromMs, toMs),
    eventsPerSecond: seconds > 0 ? events / seconds : 0,
  }
}
