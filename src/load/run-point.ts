/**
 * One run at one concurrency: warmup (discarded, counted), then the measured
 * requests, in the calling thread or split across worker threads so that the
 * client is never the bottleneck it measures.
 */
import { availableParallelism } from 'node:os'
import type { OpenLoopSettings, PlannedRequest, RawRun, RequestRecord } from '../types.js'
import { dealShares } from './deal.js'
import { summariseClient, type LoopSample } from './monitor.js'
import { LoadAborted, runShare, type ShareInput, type ShareResult } from './share.js'
import { acquireLoadWorker, releaseLoadWorker } from './worker-pool.js'

export { LoadAborted } from './share.js'

export interface RunPointOptions {
  warmup: PlannedRequest[]
  measured: PlannedRequest[]
  concurrency: number
  /** 0: run in the calling thread; N ≥ 1: N worker threads; 'auto': see resolveWorkers. */
  workers: number | 'auto' | 0
  /** Fail a request silent for this long, ms (default 120000). */
  idleTimeoutMs?: number
  /** Fail a request whose answer is not complete this long after it was sent, ms (default: its shape's, see defaultRequestTimeoutS). */
  deadlineMs?: number
  /** Epoch for the records' startMs (process.hrtime.bigint() clock); default: now. */
  epochNs?: bigint
  /**
   * Nice value load threads ask for while they run (default -10; null: leave
   * as is). Granted only with the right privilege (root, CAP_SYS_NICE), else
   * silently skipped. Why: see share.ts.
   */
  priority?: number | null
  /**
   * Runs once every thread has finished its warmup and before any measured
   * request is sent (e.g. scrape the server's /metrics, start GPU sampling),
   * so the measured window excludes the warmup while the threads stay warm.
   */
  beforeMeasure?: () => Promise<void>
  /**
   * Cancels the run: no request is sent after it fires, those in flight are
   * cut (worker threads are terminated), and runPoint rejects with LoadAborted
   * — a cut-short run is never summarised as if it were complete.
   */
  signal?: AbortSignal
  /**
   * Open loop: send the requests on a seeded gamma arrival schedule at `rate`
   * (capped by `maxConcurrency` when given) instead of keeping `concurrency` in
   * flight; `concurrency` then sizes the load threads and connection pools.
   * The warmup follows its own schedule from seed + 1.
   */
  openLoop?: OpenLoopSettings & { seed: number }
}

/** Lead time between the go decision and the open-loop schedule's start, ms: every thread gets the message first. */
const OPEN_LOOP_START_LEAD_MS = 5

/** Nice value of load threads unless the caller says otherwise. */
const DEFAULT_PRIORITY = -10

/** Streams one event loop carries before 'auto' adds another worker (where cores allow). */
const STREAMS_PER_WORKER = 64

/**
 * Worker threads for 'auto': 1 on ≤ 2 cores (a second thread only starves a
 * co-located server there); otherwise one per STREAMS_PER_WORKER streams, at
 * most half the cores (the rest for the server and the OS) and at most 8.
 */
export function resolveWorkers(workers: number | 'auto', concurrency: number, cores: number = availableParallelism()): number {
  if (workers !== 'auto') return Math.max(0, Math.min(Math.floor(workers), Math.max(1, concurrency)))
  if (cores <= 2) return 1
  const byCores = Math.min(8, Math.floor(cores / 2))
  const byStreams = Math.ceil(concurrency / STREAMS_PER_WORKER)
  return Math.max(1, Math.min(byCores, byStreams))
}

/**
 * A warning when an explicit `--workers N` gives load threads more of the CPU
 * than `auto` would (half the cores, one on ≤ 2): the threads then compete
 * with each other and with a server on the same host, and the saturation
 * check, which reads each thread on its own, misses runs it should flag
 * (10 of 27 broken 2-thread runs on 2 cores, docs/validity.md). Null when fine.
 */
export function workersWarning(workers: number | 'auto', cores: number = availableParallelism()): string | null {
  if (workers === 'auto' || workers <= 1) return null
  const fair = cores <= 2 ? 1 : Math.floor(cores / 2)
  if (workers <= fair) return null
  return `--workers ${workers} on ${cores} core${cores === 1 ? '' : 's'}: more load threads than half the cores compete for the CPU (with a server on this host too), and client_saturated can miss runs whose timestamps were late; --workers auto would use ${fair}.`
}

/** Run warmup then measured requests at `concurrency`; returns every measured record and the client's own figures. */
export async function runPoint(opts: RunPointOptions): Promise<RawRun> {
  const concurrency = Math.max(1, Math.floor(opts.concurrency))
  const idleTimeoutMs = opts.idleTimeoutMs ?? 120_000
  const epochNs = opts.epochNs ?? process.hrtime.bigint()
  const workers = resolveWorkers(opts.workers, concurrency)
  const threads = Math.max(1, workers)
  const open = opts.openLoop
  const { inputs, measuredIndex: measIdx } = dealShares(opts.warmup, opts.measured, concurrency, threads, open, {
    priority: opts.priority === undefined ? DEFAULT_PRIORITY : opts.priority,
    idleTimeoutMs,
    ...(opts.deadlineMs !== undefined ? { deadlineMs: opts.deadlineMs } : {}),
    epochNs,
  })

  let startedAt = new Date().toISOString()
  const onGo = async (): Promise<number> => {
    await opts.beforeMeasure?.()
    startedAt = new Date().toISOString()
    // The shared start of an open-loop schedule, a little ahead so every thread has heard it.
    return Number(process.hrtime.bigint() - epochNs) / 1e6 + (workers === 0 ? 0 : OPEN_LOOP_START_LEAD_MS)
  }
  if (opts.signal?.aborted === true) throw new LoadAborted()
  const results = workers === 0 ? [await runShare(inputs[0] as ShareInput, onGo, opts.signal)] : await runInWorkers(inputs, onGo, opts.signal)
  const finishedAt = new Date().toISOString()

  const records = new Array<RequestRecord>(opts.measured.length)
  const sendLagsMs: number[] = []
  results.forEach((r, w) => {
    const idx = measIdx[w] ?? []
    r.records.forEach((rec, k) => (records[idx[k] as number] = rec))
    sendLagsMs.push(...r.sendLagsMs)
  })
  let startMs = Infinity
  let endMs = -Infinity
  for (const r of records) {
    startMs = Math.min(startMs, r.startMs)
    endMs = Math.max(endMs, r.startMs + r.streamEndMs)
  }
  if (records.length === 0) startMs = endMs = 0
  const loops: LoopSample[] = results.map((r) => r.loop)
  return {
    concurrency,
    records,
    warmupRequests: results.reduce((a, r) => a + r.warmupRequests, 0),
    startMs,
    endMs,
    client: summariseClient({ workers, loops, sendLagsMs, records, startMs, endMs }),
    startedAt,
    finishedAt,
    ...(open ? { openLoop: { rate: open.rate, burstiness: open.burstiness, maxConcurrency: open.maxConcurrency } } : {}),
  }
}

type WorkerMessage = { type: 'warm' } | { type: 'done'; result: ShareResult } | { type: 'error'; message: string }

/**
 * Give each share a load thread (worker-pool.ts); release them together once all are warm; collect
 * their results. Threads that finished cleanly go back to the pool; after a failure or a cancel
 * every thread of the run is terminated (terminating a thread closes its sockets, which cuts its
 * streams in flight).
 */
async function runInWorkers(inputs: ShareInput[], onGo: () => Promise<number>, signal?: AbortSignal): Promise<ShareResult[]> {
  const workers = inputs.map(() => acquireLoadWorker())
  const detach: Array<() => void> = []
  let warm = 0
  let onAbort: () => void = () => {}
  const aborted = new Promise<never>((_resolve, reject) => {
    onAbort = () => reject(new LoadAborted())
    signal?.addEventListener('abort', onAbort, { once: true })
  })
  aborted.catch(() => {})
  let clean = false
  try {
    const results = await Promise.race([
      aborted,
      Promise.all(
        workers.map(
          (w, i) =>
            new Promise<ShareResult>((resolve, reject) => {
              const onMessage = (m: WorkerMessage): void => {
                if (m.type === 'warm') {
                  // Barrier: the measured window starts when every thread is warm.
                  if (++warm === workers.length) {
                    onGo().then((startMs) => {
                      for (const x of workers) x.postMessage({ startMs })
                    }, reject)
                  }
                } else if (m.type === 'done') resolve(m.result)
                else reject(new Error(`load worker failed: ${m.message}`))
              }
              const onExit = (code: number): void => reject(new Error(`load worker exited with code ${code} before finishing`))
              w.on('message', onMessage)
              w.on('error', reject)
              w.on('exit', onExit)
              detach.push(() => {
                w.off('message', onMessage)
                w.off('error', reject)
                w.off('exit', onExit)
              })
              w.postMessage({ type: 'share', input: inputs[i] })
            }),
        ),
      ),
    ])
    clean = true
    return results
  } finally {
    signal?.removeEventListener('abort', onAbort)
    for (const d of detach) d()
    if (clean && signal?.aborted !== true) for (const w of workers) releaseLoadWorker(w)
    else await Promise.all(workers.map((w) => w.terminate()))
  }
}
