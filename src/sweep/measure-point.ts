import { runPoint } from '../load/run-point.js'
import { scrapeMetrics } from '../client/endpoints.js'
import { tokenizeCount } from '../client/tokenize.js'
import { summarizeRun } from '../metrics/summarize.js'
import { serverSideFigures } from '../metrics/prometheus.js'
import { assessValidity } from '../analysis/validity.js'
import { buildRequests, type PromptWordCounts } from '../plan/prompts.js'
import type { PlanPoint } from '../plan/plan.js'
import type { Api, GoodputSlo, GpuSample, RawRun, RequestRecord, RunResult } from '../types.js'

/** Everything measuring one point needs from outside. */
export interface MeasureContext {
  root: string
  model: string
  api: Api
  apiKey: string | null
  /** How the chat prompts got their length (sweep/calibrate-prompts.ts); absent: not known. */
  promptCalibration?: 'token_ids' | 'tokenize' | 'none'
  /** A tokenizer of the client's own (--tokenizer): re-counts output without asking the server. Absent: the server's /tokenize. */
  countText?: (text: string) => number
  /** Fields joining every request's body (--extra-body); absent: none. */
  extraBody?: Readonly<Record<string, unknown>>
  workers: number | 'auto'
  idleTimeoutMs: number
  /** Total deadline of each request of this point, ms (absent: the shape's default). */
  deadlineMs?: number
  /** Starts sampling the GPU; stop() returns the samples (empty without nvidia-smi). */
  sampleGpu: () => GpuSampling
  /** Chat prompts' calibrated word counts by serial (sweep/calibrate-prompts.ts); absent: input_len words. */
  promptWords?: PromptWordCounts | null
  /** Cancels the point: runPoint cuts the load and rejects with LoadAborted (nothing of the point is kept). */
  signal?: AbortSignal
  /** --goodput SLOs; absent or null: no goodput figures. */
  goodput?: GoodputSlo | null
  /**
   * Called when no measured request of the point completed, with the error of the first one
   * sent (`HTTP 400: <the server's message>`): the result file keeps only counts by kind, and a
   * point that failed whole is best explained by the server's own words.
   */
  onEveryRequestFailed?: (firstError: string) => void
  /**
   * One shard of a sharded sweep: the measured requests wait for the slot's measure instant, the
   * server-side figures are left to the merge (the server's counters hold every shard's traffic),
   * and the run's raw material goes to the records file.
   */
  shard?: ShardHooks
}

/** What measuring one shard's run needs from its schedule and records file (sweep/shard-run.ts). */
export interface ShardHooks {
  /** Resolves at the instant the measured requests start on every shard. */
  untilMeasure: () => Promise<void>
  /** Receives the run's records and scrapes for the records file. */
  keep: (raw: RawRun, extra: { epochUnixMs: number; warmupDoneUnixMs: number; metricsBefore: string | null; metricsAfter: string | null }) => void
}

/** A running GPU sampler: stop() returns its samples. */
export interface GpuSampling {
  stop(): Promise<GpuSample[]> | GpuSample[]
}

/**
 * Run one (shape, concurrency, repeat) point: warmup, measured requests, the
 * server's /metrics before and after, GPU samples, then the run's summary
 * and validity. Never throws for server faults: they are in the records.
 */
export async function measurePoint(point: PlanPoint, ctx: MeasureContext): Promise<RunResult> {
  const { warmup, measured } = buildRequests(
    point,
    { root: ctx.root, model: ctx.model, api: ctx.api, apiKey: ctx.apiKey, ...(ctx.extraBody ? { extraBody: ctx.extraBody } : {}) },
    ctx.promptWords ?? null,
  )
  // METHODOLOGY: warmup requests run at the point's concurrency and are then
  // discarded; /metrics is scraped only after them (at the barrier between
  // warmup and measurement), so the server-side figures cover exactly the
  // measured requests, like the client's. Both phases run in the same load
  // threads, so the measured requests find warm connection pools and a heap
  // already collected (load/share.ts).
  // Filled at the barrier, inside runPoint.
  const atStart: { metrics: string | null; sampler: GpuSampling | null; warmDoneUnixMs: number } = { metrics: null, sampler: null, warmDoneUnixMs: 0 }
  let raw: Awaited<ReturnType<typeof runPoint>>
  // The run's epoch on the monotonic clock and on the wall clock, read together: a shard's records
  // are placed on the common clock from it.
  const epochNs = process.hrtime.bigint()
  const epochUnixMs = performance.timeOrigin + performance.now()
  try {
    raw = await runPoint({
      epochNs,
      concurrency: point.concurrency,
      workers: ctx.workers,
      // Open loop: the point's seed draws its prompts and its arrival schedule (recorded as run.seed).
      ...(point.openLoop ? { openLoop: { ...point.openLoop, seed: point.seed } } : {}),
      idleTimeoutMs: ctx.idleTimeoutMs,
      ...(ctx.deadlineMs !== undefined ? { deadlineMs: ctx.deadlineMs } : {}),
      warmup,
      measured,
      ...(ctx.signal ? { signal: ctx.signal } : {}),
      beforeMeasure: async () => {
        atStart.warmDoneUnixMs = performance.timeOrigin + performance.now()
        atStart.metrics = await scrapeMetrics(ctx.root, ctx.apiKey)
        atStart.sampler = ctx.sampleGpu()
        // A shard scrapes once its own warmup is done and then waits for the instant every shard
        // starts at, so nothing between that instant and its first request can make it late (a
        // scrape and a sampler start took up to 140 ms on a loaded host); the merge reads the
        // server-side figures from the last shard's scrape, taken after every warmup.
        await ctx.shard?.untilMeasure()
      },
    })
  } catch (err) {
    // A cancelled or failed point still stops the GPU sampler the barrier may have started.
    await atStart.sampler?.stop()
    throw err
  }
  const gpu = atStart.sampler === null ? [] : await atStart.sampler.stop()
  const after = await scrapeMetrics(ctx.root, ctx.apiKey)

  const first = everyRequestFailed(raw.records)
  if (first !== null) ctx.onEveryRequestFailed?.(first)
  const run = summarizeRun(raw, { repeat: point.repeat, seed: point.seed, numPrompts: point.numPrompts, goodput: ctx.goodput ?? null })
  // A shard's scrapes hold every shard's traffic: its server-side figures come from the merge.
  run.server_side = ctx.shard === undefined && atStart.metrics !== null && after !== null ? serverSideFigures(atStart.metrics, after) : null
  ctx.shard?.keep(raw, { epochUnixMs, warmupDoneUnixMs: atStart.warmDoneUnixMs, metricsBefore: atStart.metrics, metricsAfter: after })
  run.gpu = gpu.length > 0 ? gpu : null
  run.tokens.retokenized = await retokenize(raw.records, ctx)
  run.validity = assessValidity(run, {
    concurrency: point.concurrency,
    ignoreEos: true,
    expectPrefixCacheMisses: true,
    api: ctx.api,
    ...(ctx.promptCalibration ? { promptCalibration: ctx.promptCalibration } : {}),
  })
  return run
}

/** Re-tokenise every completed request's text with the server's /tokenize; null when unavailable. */
async function retokenize(records: readonly RequestRecord[], ctx: MeasureContext): Promise<number | null> {
  const done = records.filter((r) => r.error === null)
  if (done.length === 0) return null
  if (ctx.countText !== undefined) return done.reduce((n, r) => n + ctx.countText!(r.text), 0)
  let total = 0
  let next = 0
  let unavailable = false
  const worker = async (): Promise<void> => {
    while (!unavailable && next < done.length) {
      const rec = done[next++]!
      const n = await tokenizeCount(ctx.root, ctx.model, rec.text, ctx.apiKey)
      if (n === null) unavailable = true
      else total += n
    }
  }
  await Promise.all(Array.from({ length: 8 }, worker))
  return unavailable ? null : total
}

/**
 * The error of the first request sent when every record failed (`HTTP 400: <message>`, other
 * kinds as `kind: detail`); null when one completed or there were none.
 */
function everyRequestFailed(records: readonly RequestRecord[]): string | null {
  let first: RequestRecord | null = null
  for (const r of records) {
    if (r.error === null) return null
    if (first === null || r.startMs < first.startMs) first = r
  }
  const e = first?.error ?? null
  if (e === null) return null
  return e.kind === 'http_status' ? e.detail : `${e.kind}: ${e.detail}`
}
