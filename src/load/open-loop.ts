/**
 * Open-loop load: each request goes out when its arrival schedule says,
 * whether or not earlier ones have finished (as `vllm bench serve
 * --request-rate` does), so a slow server faces a growing queue instead of a
 * politely waiting client. With a max concurrency a due request first waits
 * for a free slot; that wait is the server's queueing and is recorded apart
 * from the client's own lateness.
 */
import type { Dispatcher } from 'undici'
import { streamRequest } from '../client/stream-request.js'
import type { PlannedRequest, RequestRecord } from '../types.js'

export interface OpenLoopOptions {
  dispatcher: Dispatcher
  /** Monotonic clock, ns. */
  now: () => bigint
  /** The run's epoch on that clock. */
  epochNs: bigint
  /** When each request is due, ms since the epoch (same order as the requests). */
  dueMs: readonly number[]
  /** Most requests in flight at once; null: no cap. */
  maxConcurrency: number | null
  idleTimeoutMs: number
  deadlineMs?: number
  /** Once aborted, nothing more is sent. */
  signal?: AbortSignal
}

export interface OpenLoopResult {
  /** One record per request sent, in plan order (sparse when aborted), each with scheduledMs and queueMs. */
  records: RequestRecord[]
  /** Per request: due (scheduled, or the moment a capped slot freed, whichever is later) → written, ms. */
  sendLagsMs: number[]
}

/** Sleep until `atMs` on the run's clock: a timer for the bulk, then yields for the last millisecond (timers fire late, never early enough). */
async function sleepUntil(atMs: number, nowMs: () => number, signal?: AbortSignal): Promise<void> {
  for (;;) {
    if (signal?.aborted === true) return
    const left = atMs - nowMs()
    if (left <= 0) return
    // Timers on Linux fire ~1 ms late; wake early and finish on setImmediate.
    if (left > 2) await new Promise((r) => setTimeout(r, left - 1.5))
    else await new Promise((r) => setImmediate(r))
  }
}

/** Send `requests` at their due times (capped by maxConcurrency); resolves when every one is recorded (never rejects on request failure). */
export async function runOpenLoop(requests: readonly PlannedRequest[], opts: OpenLoopOptions): Promise<OpenLoopResult> {
  const { now, epochNs } = opts
  const deps = {
    dispatcher: opts.dispatcher,
    now,
    epochNs,
    idleTimeoutMs: opts.idleTimeoutMs,
    ...(opts.deadlineMs !== undefined ? { deadlineMs: opts.deadlineMs } : {}),
  }
  const nowMs = (): number => Number(now() - epochNs) / 1e6
  const aborted = (): boolean => opts.signal?.aborted === true
  const n = requests.length
  const records = new Array<RequestRecord>(n)
  const sendLagsMs = new Array<number>(n)
  const cap = opts.maxConcurrency === null ? Infinity : Math.max(1, Math.floor(opts.maxConcurrency))
  let inFlight = 0
  // Requests due but waiting for a slot, in schedule order; each resolves with the time its slot freed.
  const waiting: Array<(freedMs: number) => void> = []
  const release = (): void => {
    const next = waiting.shift()
    if (next !== undefined) next(nowMs())
    else inFlight--
  }
  const pending: Array<Promise<void>> = []
  // Dispatch in schedule order (the schedule is sorted by construction).
  // A request due while an earlier one still waited for a slot queued behind it until that slot freed.
  let queueFreedMs = -Infinity
  const order = Array.from({ length: n }, (_, i) => i).sort((a, b) => (opts.dueMs[a] as number) - (opts.dueMs[b] as number))
  for (const i of order) {
    const scheduledMs = opts.dueMs[i] as number
    await sleepUntil(scheduledMs, nowMs, opts.signal)
    if (aborted()) break
    let readyMs = Math.max(scheduledMs, queueFreedMs)
    if (inFlight >= cap) {
      queueFreedMs = await new Promise<number>((resolve) => waiting.push(resolve))
      readyMs = Math.max(scheduledMs, queueFreedMs)
      if (aborted()) break
    } else inFlight++
    const queueMs = readyMs - scheduledMs
    const req = requests[i] as PlannedRequest
    pending.push(
      streamRequest(req, deps).then((rec) => {
        records[i] = { ...rec, scheduledMs, queueMs }
        sendLagsMs[i] = Math.max(0, rec.startMs - readyMs)
        release()
      }),
    )
  }
  // Aborted while waiting for a slot: let the waiters go so nothing hangs.
  for (const w of waiting.splice(0)) w(nowMs())
  await Promise.all(pending)
  return { records, sendLagsMs: sendLagsMs.filter((x) => x !== undefined) }
}
