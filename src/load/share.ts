/**
 * One load thread's part of a run point: its own connection pool, its share
 * of the warmup and measured requests, and a watch on its own event loop.
 * The same code runs in the calling thread (workers = 0) and in each worker.
 */
import { getPriority, setPriority } from 'node:os'
import { setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'
import type { PlannedRequest, RequestRecord } from '../types.js'
import { createLoadDispatcher, runClosedLoop } from './closed-loop.js'
import { runOpenLoop } from './open-loop.js'
import { startLoopMonitor, type LoopSample } from './monitor.js'

export interface ShareInput {
  warmup: PlannedRequest[]
  measured: PlannedRequest[]
  concurrency: number
  idleTimeoutMs: number
  /** Per-request total deadline, ms (absent: each request's shape default). */
  deadlineMs?: number
  /** The run's epoch (process.hrtime.bigint(), the same clock in every thread of the process). */
  epochNs: bigint
  /** Nice value to ask for while running (null: leave as is). */
  priority: number | null
  /**
   * Open loop: when each warmup and measured request is due, ms after its phase's
   * start (warmup: when this thread starts it; measured: the start `go` hands over,
   * shared by every thread), and this thread's cap on requests in flight (null: none).
   * Absent: closed loop at `concurrency`.
   */
  openLoop?: { warmupDueMs: number[]; measuredDueMs: number[]; maxConcurrency: number | null }
}

export interface ShareResult {
  warmupRequests: number
  records: RequestRecord[]
  sendLagsMs: number[]
  loop: LoopSample
}

/**
 * Run warmup, wait for `go` (all threads warm), then the measured requests at
 * this share's concurrency. Warmup records are dropped here.
 */
export async function runShare(input: ShareInput, go: () => Promise<number | void>, signal?: AbortSignal): Promise<ShareResult> {
  const now = process.hrtime.bigint
  const restore = raisePriority(input.priority)
  const dispatcher = createLoadDispatcher(input.concurrency)
  const base = {
    concurrency: input.concurrency,
    dispatcher,
    now,
    epochNs: input.epochNs,
    idleTimeoutMs: input.idleTimeoutMs,
    ...(input.deadlineMs !== undefined ? { deadlineMs: input.deadlineMs } : {}),
    ...(signal ? { signal } : {}),
  }
  // Cancelled: cut the streams in flight at once (their records say transport error) and send no more.
  const cut = (): void => void dispatcher.destroy(new LoadAborted()).catch(() => {})
  signal?.addEventListener('abort', cut, { once: true })
  try {
    // METHODOLOGY: warmup requests run but never enter percentiles.
    const open = input.openLoop
    const sinceEpochMs = (): number => Number(now() - input.epochNs) / 1e6
    const openBase = (dueMs: number[], startMs: number) => ({ ...base, dueMs: dueMs.map((d) => d + startMs), maxConcurrency: open?.maxConcurrency ?? null })
    if (input.warmup.length > 0) {
      if (open) await runOpenLoop(input.warmup, openBase(open.warmupDueMs, sinceEpochMs()))
      else await runClosedLoop(input.warmup, base)
    }
    // A thread's heap grows through its start, its earlier runs and this warmup
    // until V8 runs a full mark-compact (measured: 6–23 ms, stalling every
    // stream at once); run it now, outside the measured window.
    collectGarbage()
    const startAt = await go()
    const monitor = startLoopMonitor()
    const measured = open
      ? await runOpenLoop(input.measured, openBase(open.measuredDueMs, typeof startAt === 'number' ? startAt : sinceEpochMs()))
      : await runClosedLoop(input.measured, base)
    const loop = monitor.stop()
    if (signal?.aborted === true) throw new LoadAborted()
    return { warmupRequests: input.warmup.length, records: measured.records, sendLagsMs: measured.sendLagsMs, loop }
  } finally {
    signal?.removeEventListener('abort', cut)
    restore()
    await dispatcher.destroy().catch(() => {})
  }
}

/** The load was cancelled: the run is cut short and must not be summarised as if complete. */
export class LoadAborted extends Error {
  override readonly name = 'LoadAborted'
  constructor() {
    super('the load was cancelled; in-flight requests were cut')
  }
}

/** A full garbage collection of this thread's heap, if V8 lets us ask for one. */
function collectGarbage(): void {
  try {
    let gc = (globalThis as { gc?: () => void }).gc
    if (typeof gc !== 'function') {
      // Exposes `gc` in contexts created from now on; harmless otherwise.
      setFlagsFromString('--expose-gc')
      gc = runInNewContext('gc') as () => void
    }
    gc()
  } catch {
    // Not available: the run simply keeps V8's own timing.
  }
}

/**
 * Ask for a higher scheduling priority for this thread (Linux applies a nice
 * value per thread). Why: a token is timestamped when the load thread wakes up
 * to read it; when the CPU is shared (a co-located server, CI neighbours) a
 * default-priority thread waits behind others, which showed as |ITL error| p50
 * 0.14–0.5 ms and p99 2.5–21 ms at C=64 × 20 ms on a busy 2-core machine, against
 * 0.03–0.11 ms and 1.6–2.1 ms at nice -10. Returns the undo.
 */
function raisePriority(priority: number | null): () => void {
  if (priority === null) return () => {}
  let before: number
  try {
    before = getPriority()
    if (priority >= before) return () => {}
    setPriority(priority)
  } catch {
    return () => {} // not permitted: keep the default
  }
  return () => {
    try {
      setPriority(before)
    } catch {
      // Lowering one's own priority is always permitted; nothing to do if not.
    }
  }
}
