/**
 * Closed-loop load: exactly `concurrency` requests in flight; the moment one
 * finishes, its slot sends the next planned request (as `--max-concurrency`
 * does in a serving benchmark).
 */
import { Agent, type Dispatcher } from 'undici'
import { streamRequest } from '../client/stream-request.js'
import type { PlannedRequest, RequestRecord } from '../types.js'

export interface ClosedLoopOptions {
  concurrency: number
  dispatcher: Dispatcher
  /** Monotonic clock, ns. */
  now: () => bigint
  /** The run's epoch on that clock. */
  epochNs: bigint
  /** Per-request idle timeout, ms. */
  idleTimeoutMs: number
  /** Per-request total deadline, ms (absent: each request's shape default, see ClientDeps). */
  deadlineMs?: number
  /** Once aborted, no slot sends another request (the caller destroys the dispatcher to cut those in flight). */
  signal?: AbortSignal
}

export interface ClosedLoopResult {
  /** One record per planned request, in plan order. */
  records: RequestRecord[]
  /** Per request: slot free (previous request done, or loop start) → request written, ms. */
  sendLagsMs: number[]
  /** Loop start, first send, last send and last completion, ms since epoch. */
  loopStartMs: number
  firstSendMs: number
  lastSendMs: number
  endMs: number
}

/**
 * An undici Agent sized so no request ever queues inside the client: one
 * keep-alive connection per concurrent stream, no pipelining (a pipelined
 * request would wait behind a whole stream).
 */
export function createLoadDispatcher(concurrency: number): Agent {
  return new Agent({
    connections: Math.max(1, concurrency),
    pipelining: 1,
    keepAliveTimeout: 60_000,
    keepAliveMaxTimeout: 600_000,
    connect: { timeout: 30_000 },
  })
}

/** Run `requests` keeping `concurrency` in flight; resolves when all are recorded (never rejects on request failure). */
export async function runClosedLoop(requests: readonly PlannedRequest[], opts: ClosedLoopOptions): Promise<ClosedLoopResult> {
  const { now, epochNs } = opts
  const deps = {
    dispatcher: opts.dispatcher,
    now,
    epochNs,
    idleTimeoutMs: opts.idleTimeoutMs,
    ...(opts.deadlineMs !== undefined ? { deadlineMs: opts.deadlineMs } : {}),
  }
  const toMs = (ns: bigint): number => Number(ns - epochNs) / 1e6
  const n = requests.length
  // Sparse when aborted: requests never sent have no record (see runShare).
  const records = new Array<RequestRecord>(n)
  const sendLagsMs = new Array<number>(n)
  const loopStartMs = toMs(now())
  let next = 0

  const slot = async (): Promise<void> => {
    let freeMs = loopStartMs
    while (next < n && opts.signal?.aborted !== true) {
      const i = next++
      const rec = await streamRequest(requests[i] as PlannedRequest, deps)
      records[i] = rec
      sendLagsMs[i] = Math.max(0, rec.startMs - freeMs)
      // The slot is free from the moment the client saw the stream end.
      freeMs = rec.startMs + rec.streamEndMs
    }
  }
  const slots = Math.max(1, Math.min(Math.floor(opts.concurrency), n))
  await Promise.all(Array.from({ length: slots }, slot))

  let firstSendMs = Infinity
  let lastSendMs = -Infinity
  let endMs = loopStartMs
  for (const r of records) {
    if (r === undefined) continue
    if (r.startMs < firstSendMs) firstSendMs = r.startMs
    if (r.startMs > lastSendMs) lastSendMs = r.startMs
    if (r.startMs + r.streamEndMs > endMs) endMs = r.startMs + r.streamEndMs
  }
  if (n === 0) firstSendMs = lastSendMs = loopStartMs
  return { records, sendLagsMs, loopStartMs, firstSendMs, lastSendMs, endMs }
}
