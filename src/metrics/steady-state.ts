/**
 * Steady state of one closed-loop run: the window in which all C slots were
 * busy, so the figures describe the engine at the asked concurrency rather
 * than its ramp-up (slots filling) or drain (the last requests finishing
 * with nothing left to send).
 *
 * Window rule, from per-request send and end-of-stream times:
 * - start: the first moment C requests were in flight at once;
 * - end:   the last moment in-flight fell from C to below C (the drain).
 * A closed loop refills a slot a fraction of a millisecond after it frees
 * (the send lag), so in-flight dips to C − 1 many times mid-run; those dips
 * are part of the window (the client's send lag and mean in-flight are
 * judged separately, by the client_saturated rule). At equal timestamps an
 * end is applied before a start (a slot frees before it is refilled).
 *
 * Figures over the window:
 * - output_throughput: output tokens of completed requests whose chunks
 *   arrived inside [start, end], each chunk weighted by its request's tokens
 *   per chunk, divided by the window's length;
 * - completed, ttft/tpot/itl: completed requests that were sent inside the window;
 * - ramp_fraction: 1 − window / run duration (RawRun.endMs − startMs), in 0..1;
 * - start_s, end_s: seconds since the run's start (RawRun.startMs).
 */
import type { RawRun, SteadyState } from '../types.js'
import { LatencyHistogram } from './histogram.js'
import { isCompleted, requestFigures } from './per-request.js'

/** The all-slots-busy window, ms since the run's epoch; null when C requests were never in flight together. */
export function busyWindow(raw: Pick<RawRun, 'concurrency' | 'records'>): { startMs: number; endMs: number } | null {
  const c = raw.concurrency
  if (!(c >= 1) || raw.records.length === 0) return null
  // +1 start, −1 end; ends sort first at equal times.
  const events: Array<[number, number]> = []
  for (const r of raw.records) {
    events.push([r.startMs, 1], [r.startMs + r.streamEndMs, -1])
  }
  events.sort((a, b) => a[0] - b[0] || a[1] - b[1])
  let inFlight = 0
  let start: number | null = null
  let end: number | null = null
  for (const [t, delta] of events) {
    const before = inFlight
    inFlight += delta
    if (start === null && inFlight >= c) start = t
    if (start !== null && before >= c && inFlight < c) end = t
  }
  if (start === null || end === null || !(end > start)) return null
  return { startMs: start, endMs: end }
}

/** Steady-state figures of a run (see file header), or null when there is no all-slots-busy window. */
export function steadyState(raw: RawRun): SteadyState | null {
  const window = busyWindow(raw)
  if (window === null) return null
  const { startMs: ws, endMs: we } = window
  const ttft = new LatencyHistogram()
  const tpot = new LatencyHistogram()
  const itl = new LatencyHistogram()
  let tokensInWindow = 0
  let completed = 0
  for (const rec of raw.records) {
    if (!isCompleted(rec)) continue
    const f = requestFigures(rec)
    for (const at of rec.chunkArrivalsMs) {
      const abs = rec.startMs + at
      if (abs >= ws && abs <= we) tokensInWindow += f.tokensPerChunk
    }
    if (rec.startMs < ws || rec.startMs > we) continue
    completed++
    if (f.ttftMs !== null) ttft.record(f.ttftMs)
    if (f.tpotMs !== null) tpot.record(f.tpotMs)
    itl.recordAll(f.itlMs)
  }
  const windowMs = we - ws
  const durationMs = raw.endMs - raw.startMs
  const rampFraction = durationMs > 0 ? Math.min(1, Math.max(0, 1 - windowMs / durationMs)) : 0
  return {
    start_s: (ws - raw.startMs) / 1000,
    end_s: (we - raw.startMs) / 1000,
    ramp_fraction: rampFraction,
    completed,
    output_throughput: tokensInWindow / (windowMs / 1000),
    ttft_ms: ttft.toStats(),
    tpot_ms: tpot.toStats(),
    itl_ms: itl.toStats(),
  }
}
