/**
 * An open-loop run's arrival process as it happened: the gaps between the
 * actual send times of its measured requests (mean, coefficient of variation,
 * rate), how late each went out after it was due, how long a capped run made
 * requests wait for a slot, and TTFT and E2EL counted from the scheduled send
 * time — so a client that fell behind its schedule shows in the figures
 * instead of hiding in them (TTFT from the actual send stays vLLM's figure).
 * Pure.
 */
import type { Arrivals, FromSchedule, OpenLoopSettings, RequestRecord } from '../types.js'
import { LatencyHistogram } from './histogram.js'
import { isCompleted } from './per-request.js'

/** Mean and coefficient of variation (sample standard deviation / mean) of `xs`; null where undefined (no values; under 2 values or a zero mean for the CV). */
export function meanAndCv(xs: readonly number[]): { mean: number | null; cv: number | null } {
  if (xs.length === 0) return { mean: null, cv: null }
  const mean = xs.reduce((a, b) => a + b, 0) / xs.length
  if (xs.length < 2 || !(mean > 0)) return { mean, cv: null }
  let ss = 0
  for (const x of xs) ss += (x - mean) ** 2
  return { mean, cv: Math.sqrt(ss / (xs.length - 1)) / mean }
}

/** Requests per second over sorted times (ms): (n − 1) / span; null with fewer than 2 or a zero span. */
function rateOf(sortedMs: readonly number[]): number | null {
  if (sortedMs.length < 2) return null
  const span = (sortedMs.at(-1) as number) - (sortedMs[0] as number)
  return span > 0 ? ((sortedMs.length - 1) * 1000) / span : null
}

/** The run's arrivals from its records (every request sent, failed ones included: they arrived too). */
export function summarizeArrivals(records: readonly RequestRecord[], open: OpenLoopSettings): Arrivals {
  const sent = records.filter((r) => r !== undefined)
  const sends = sent.map((r) => r.startMs).sort((a, b) => a - b)
  const gaps: number[] = []
  for (let i = 1; i < sends.length; i++) gaps.push((sends[i] as number) - (sends[i - 1] as number))
  const { mean, cv } = meanAndCv(gaps)
  const lateness = new LatencyHistogram()
  const queue = new LatencyHistogram()
  const due: number[] = []
  for (const r of sent) {
    if (r.scheduledMs === undefined) continue
    const q = r.queueMs ?? 0
    queue.record(q)
    // Lateness is the client's: the time after the request was due (slot wait excluded).
    lateness.record(Math.max(0, r.startMs - (r.scheduledMs + q)))
    due.push(r.scheduledMs)
  }
  due.sort((a, b) => a - b)
  return {
    rate: rateOf(sends),
    burstiness: open.burstiness,
    mean_interarrival_ms: mean,
    cv,
    requested_rate: open.rate === Infinity ? 'inf' : open.rate,
    max_concurrency: open.maxConcurrency,
    send_lateness_ms: lateness.toStats(),
    queue_ms: queue.toStats(),
    scheduled_rate: open.rate === Infinity ? null : rateOf(due),
  }
}

/** TTFT and E2EL of completed requests counted from their scheduled send time, ms. */
export function fromSchedule(records: readonly RequestRecord[]): FromSchedule {
  const ttft = new LatencyHistogram()
  const e2el = new LatencyHistogram()
  for (const r of records) {
    if (r === undefined || !isCompleted(r) || r.scheduledMs === undefined) continue
    const late = Math.max(0, r.startMs - r.scheduledMs)
    if (r.ttftMs !== null) ttft.record(r.ttftMs + late)
    if (r.e2elMs !== null) e2el.record(r.e2elMs + late)
  }
  return { ttft_ms: ttft.toStats(), e2el_ms: e2el.toStats() }
}
