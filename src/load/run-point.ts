/**
 * One run at one concurrency: warmup (discarded, counted), then the measured
 * requests, in the calling thread or split across worker threads so that the
 * client is never the bottleneck it measures.
 */
import { existsSync, readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { availableParallelism } from 'node:os'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { Worker } from 'node:worker_threads'
import type { OpenLoopSettings, PlannedRequest, RawRun, RequestRecord } from '../types.js'
import { arrivalScheduleMs } from './arrivals.js'
import { summariseClient, type LoopSample } from './monitor.js'
import { LoadAborted, runShare, type ShareInput, type ShareResult } from './share.js'

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

/** File name of the worker emitted next to the bundle (dist/load-worker.js); its entry is src/load/worker.ts. */
export const LOAD_WORKER_BUNDLE_NAME = 'load-worker.js'
/** Source entry the bundler must emit as LOAD_WORKER_BUNDLE_NAME. */
export const LOAD_WORKER_SOURCE = 'src/load/worker.ts'

/**
 * Where the worker code is, for the way servegate is running: from the bundle
 * (dist/load-worker.js beside it), from per-file JS output (worker.js beside
 * this file), or from TypeScript sources (vitest, tsx: worker.ts, loaded
 * through tsx's ESM API, because on Node 20 neither the parent's loader nor
 * `execArgv: ['--import', 'tsx']` reaches a worker thread).
 */
export function workerEntry(moduleUrl: string = import.meta.url): { url: URL; tsxApi: string | null } {
  if (moduleUrl.endsWith('.ts')) {
    return { url: new URL('./worker.ts', moduleUrl), tsxApi: tsxEsmApi(moduleUrl) }
  }
  const bundled = new URL(`./${LOAD_WORKER_BUNDLE_NAME}`, moduleUrl)
  if (existsSync(fileURLToPath(bundled))) return { url: bundled, tsxApi: null }
  return { url: new URL('./worker.js', moduleUrl), tsxApi: null }
}

/** File URL of tsx's ESM register API (its `import` export; the `require` one cannot register ESM hooks). */
function tsxEsmApi(moduleUrl: string): string {
  let pkgPath: string
  try {
    pkgPath = createRequire(moduleUrl).resolve('tsx/package.json')
  } catch {
    pkgPath = createRequire(import.meta.url).resolve('tsx/package.json')
  }
  const pkg = JSON.parse(readFileSync(pkgPath, 'utf8')) as { exports: Record<string, { import: { default: string } }> }
  return new URL(pkg.exports['./esm/api']?.import.default ?? './dist/esm/api/index.mjs', pathToFileURL(pkgPath)).href
}

/** Start a load worker thread on `data` from wherever workerEntry finds the code. */
export function spawnLoadWorker(data: unknown, moduleUrl: string = import.meta.url): Worker {
  const entry = workerEntry(moduleUrl)
  if (entry.tsxApi === null) return new Worker(entry.url, { workerData: data })
  const code = `import(${JSON.stringify(entry.tsxApi)}).then((api) => { api.register(); return import(${JSON.stringify(entry.url.href)}) })`
  return new Worker(code, { eval: true, workerData: data })
}

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

/** Split `total` into `parts` near-equal integers (the first ones get the remainder). */
export function splitEven(total: number, parts: number): number[] {
  return Array.from({ length: parts }, (_, i) => Math.floor(total / parts) + (i < total % parts ? 1 : 0))
}

/** Deal `items` to shares in proportion to their concurrency, interleaved so each share gets a spread of the plan. */
export function dealByShare<T>(items: readonly T[], shares: readonly number[]): number[][] {
  const total = shares.reduce((a, b) => a + b, 0)
  const out = shares.map(() => [] as number[])
  const given = shares.map(() => 0)
  for (let i = 0; i < items.length; i++) {
    // Give item i to the share furthest behind its quota (ties: lowest index).
    let best = 0
    let bestDeficit = -Infinity
    for (let w = 0; w < shares.length; w++) {
      const deficit = ((i + 1) * (shares[w] as number)) / total - (given[w] as number)
      if (deficit > bestDeficit + 1e-12) {
        bestDeficit = deficit
        best = w
      }
    }
    out[best]?.push(i)
    given[best] = (given[best] as number) + 1
  }
  return out
}

/** Run warmup then measured requests at `concurrency`; returns every measured record and the client's own figures. */
export async function runPoint(opts: RunPointOptions): Promise<RawRun> {
  const concurrency = Math.max(1, Math.floor(opts.concurrency))
  const idleTimeoutMs = opts.idleTimeoutMs ?? 120_000
  const epochNs = opts.epochNs ?? process.hrtime.bigint()
  const workers = resolveWorkers(opts.workers, concurrency)
  const threads = Math.max(1, workers)
  const shares = splitEven(concurrency, threads)
  const warmIdx = dealByShare(opts.warmup, shares)
  const measIdx = dealByShare(opts.measured, shares)
  const open = opts.openLoop
  const measuredDue = open ? arrivalScheduleMs(opts.measured.length, open.rate, open.burstiness, open.seed) : []
  const warmupDue = open ? arrivalScheduleMs(opts.warmup.length, open.rate, open.burstiness, (open.seed + 1) >>> 0) : []
  // The cap is split between threads like the concurrency of a closed loop.
  const caps = open?.maxConcurrency != null ? splitEven(Math.max(threads, open.maxConcurrency), threads) : null
  const inputs: ShareInput[] = shares.map((c, w) => ({
    priority: opts.priority === undefined ? DEFAULT_PRIORITY : opts.priority,
    concurrency: c,
    ...(open
      ? {
          openLoop: {
            warmupDueMs: (warmIdx[w] ?? []).map((i) => warmupDue[i] as number),
            measuredDueMs: (measIdx[w] ?? []).map((i) => measuredDue[i] as number),
            maxConcurrency: caps === null ? null : (caps[w] as number),
          },
        }
      : {}),
    idleTimeoutMs,
    ...(opts.deadlineMs !== undefined ? { deadlineMs: opts.deadlineMs } : {}),
    epochNs,
    warmup: (warmIdx[w] ?? []).map((i) => opts.warmup[i] as PlannedRequest),
    measured: (measIdx[w] ?? []).map((i) => opts.measured[i] as PlannedRequest),
  }))

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

/** Start one worker per share; release them together once all are warm; collect their results. */
async function runInWorkers(inputs: ShareInput[], onGo: () => Promise<number>, signal?: AbortSignal): Promise<ShareResult[]> {
  const workers = inputs.map((input) => spawnLoadWorker(input))
  let warm = 0
  // Cancelled: terminating a thread closes its sockets, which cuts its streams in flight.
  let onAbort: () => void = () => {}
  const aborted = new Promise<never>((_resolve, reject) => {
    onAbort = () => reject(new LoadAborted())
    signal?.addEventListener('abort', onAbort, { once: true })
  })
  aborted.catch(() => {})
  try {
    return await Promise.race([aborted, Promise.all(
      workers.map(
        (w) =>
          new Promise<ShareResult>((resolve, reject) => {
            w.on('message', (m: WorkerMessage) => {
              if (m.type === 'warm') {
                // Barrier: the measured window starts when every thread is warm.
                if (++warm === workers.length) {
                  onGo().then((startMs) => {
                    for (const x of workers) x.postMessage({ startMs })
                  }, reject)
                }
              } else if (m.type === 'done') resolve(m.result)
              else reject(new Error(`load worker failed: ${m.message}`))
            })
            w.on('error', reject)
            w.on('exit', (code) => reject(new Error(`load worker exited with code ${code} before finishing`)))
          }),
      ),
    )])
  } finally {
    signal?.removeEventListener('abort', onAbort)
    await Promise.all(workers.map((w) => w.terminate()))
  }
}
