/**
 * One run's records → the result file's RunResult (docs/methodology.md,
 * "Definitions", matching `vllm bench serve`):
 * - latencies (TTFT, per-chunk ITL, per-token ITL, TPOT, E2EL) from completed
 *   requests only, through LatencyHistogram (numpy-linear percentiles);
 * - throughputs over the measured duration RawRun.endMs − startMs;
 * - tok_s_per_user: median over requests of 1000 / TPOT_ms (exact, not binned);
 * - open loop: arrivals and latencies from the scheduled send time (arrivals.ts);
 * - with --goodput: the share and rate of requests meeting every SLO (goodput.ts);
 * - validity starts valid; analysis/validity.ts judges it once server-side,
 *   GPU and re-tokenised figures are filled in by the caller.
 */
import { median } from '../util/median.js'
import type { ClientStats, GoodputSlo, RawRun, RunResult, TokenCounts } from '../types.js'
import { fromSchedule, summarizeArrivals } from './arrivals.js'
import { goodputOf } from './goodput.js'
import { LatencyHistogram } from './histogram.js'
import { isCompleted, requestFigures } from './per-request.js'
import { steadyState } from './steady-state.js'

export interface SummarizeContext {
  repeat: number
  seed: number
  numPrompts: number
  /** --goodput: the SLOs a good request meets; absent or null: no goodput figures. */
  goodput?: GoodputSlo | null
}

/** Summarise one measured run (pure; durations in s, latencies in ms, throughputs per s). */
export function summarizeRun(raw: RawRun, ctx: SummarizeContext): RunResult {
  const ttft = new LatencyHistogram()
  const tpot = new LatencyHistogram()
  const itl = new LatencyHistogram()
  const itlPerToken = new LatencyHistogram()
  const e2el = new LatencyHistogram()
  const tokSPerUser: number[] = []
  const errors: Record<string, number> = {}
  let completed = 0
  let failed = 0
  let outputTokens = 0
  let promptTokens = 0
  let expected = 0
  let clientChunks = 0
  let usageSum = 0
  let sawUsage = false
  let promptExpected = 0
  let promptUsageSum = 0
  let sawPromptUsage = false
  let cachedSum = 0
  let sawCached = false

  for (const rec of raw.records) {
    if (!isCompleted(rec)) {
      failed++
      const kind = rec.error?.kind ?? 'unknown'
      errors[kind] = (errors[kind] ?? 0) + 1
      continue
    }
    completed++
    const f = requestFigures(rec)
    if (f.ttftMs !== null) ttft.record(f.ttftMs)
    if (f.e2elMs !== null) e2el.record(f.e2elMs)
    if (f.tpotMs !== null) {
      tpot.record(f.tpotMs)
      if (f.tpotMs > 0) tokSPerUser.push(1000 / f.tpotMs)
    }
    for (const gap of f.itlMs) {
      itl.record(gap)
      itlPerToken.record(gap / f.tokensPerChunk)
    }
    outputTokens += f.outputTokens
    promptTokens += f.promptTokens
    expected += rec.maxTokens
    clientChunks += rec.contentChunks
    if (rec.usageCompletionTokens !== null) {
      sawUsage = true
      usageSum += rec.usageCompletionTokens
    }
    promptExpected += rec.promptTokens
    if (rec.usagePromptTokens !== null) {
      sawPromptUsage = true
      promptUsageSum += rec.usagePromptTokens
    }
    if (rec.usageCachedTokens !== undefined) {
      sawCached = true
      cachedSum += rec.usageCachedTokens
    }
  }

  const durationS = (raw.endMs - raw.startMs) / 1000
  const perS = (n: number): number => (durationS > 0 ? n / durationS : 0)
  // A completed request without usage counts 0 here, so a server that reports
  // usage only sometimes shows up as a token-count disagreement, not as silence.
  const serverUsage = sawUsage ? usageSum : null
  const tokens: TokenCounts = {
    expected,
    server_usage: serverUsage,
    client_chunks: clientChunks,
    retokenized: null,
    tokens_per_chunk: serverUsage !== null && clientChunks > 0 ? serverUsage / clientChunks : null,
    // As with output usage, a completed request without prompt usage counts 0 once any request had it.
    prompt_expected: promptExpected,
    prompt_server_usage: sawPromptUsage ? promptUsageSum : null,
    ...(sawCached ? { prompt_cached_usage: cachedSum } : {}),
  }

  return {
    repeat: ctx.repeat,
    seed: ctx.seed,
    warmup_requests: raw.warmupRequests,
    num_prompts: ctx.numPrompts,
    completed,
    failed,
    duration_s: durationS,
    output_throughput: perS(outputTokens),
    total_token_throughput: perS(outputTokens + promptTokens),
    request_throughput: perS(completed),
    tok_s_per_user: tokSPerUser.length > 0 ? median(tokSPerUser) : null,
    ttft_ms: ttft.toStats(),
    tpot_ms: tpot.toStats(),
    itl_ms: itl.toStats(),
    e2el_ms: e2el.toStats(),
    validity: { valid: true, issues: [] },
    started_at: raw.startedAt,
    finished_at: raw.finishedAt,
    itl_per_token_ms: itlPerToken.toStats(),
    tokens,
    errors,
    // All C slots busy is a closed loop's steady state; an open loop has no slots to fill.
    steady_state: raw.openLoop ? null : steadyState(raw),
    server_side: null,
    client: clientFigures(raw.client),
    gpu: null,
    ...(raw.openLoop ? { arrivals: summarizeArrivals(raw.records, raw.openLoop), from_schedule: fromSchedule(raw.records) } : {}),
    ...(ctx.goodput ? { goodput: goodputOf(raw.records, ctx.goodput, durationS) } : {}),
  }
}

/** The client's self-measurements under the result file's snake_case names. */
function clientFigures(c: ClientStats): RunResult['client'] {
  return {
    workers: c.workers,
    event_loop_utilization: c.eventLoopUtilization,
    event_loop_delay_p99_ms: c.eventLoopDelayP99Ms,
    send_lag_p50_ms: c.sendLagP50Ms,
    send_lag_p99_ms: c.sendLagP99Ms,
    mean_in_flight: c.meanInFlight,
    events_per_second: c.eventsPerSecond,
  }
}
