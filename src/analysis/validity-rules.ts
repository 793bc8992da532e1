/**
 * The validity rules, one function each: (run, context, thresholds) → an
 * issue with a plain-words detail carrying the numbers that tripped it, or
 * null. Thresholds are explained in validity-thresholds.ts.
 */
import type { Api, GpuSample, RunResult, ValidityIssue } from '../types.js'
import type { ValidityThresholds } from './validity-thresholds.js'

export interface RuleContext {
  /** Requested concurrency C. */
  concurrency: number
  /** Whether requests asked the server to ignore end-of-sequence (fixed output length). */
  ignoreEos: boolean
  /** Whether every prompt was meant to be unique (so the prefix cache must miss). */
  expectPrefixCacheMisses: boolean
  /**
   * The API the prompts went to. Chat prompts share the template's preamble
   * (role markers, a default system prompt) before their unique part;
   * completions prompts are token ids that differ from the first token.
   */
  api?: Api
  /**
   * How the chat prompts got their length (config.prompt_calibration): `none` when the server had
   * no /tokenize that counts chat messages, so servegate could not size them and the chat
   * template's tokens came on top of input_len words. Absent: not known (an older or imported run).
   */
  promptCalibration?: 'token_ids' | 'tokenize' | 'none'
}

export type Rule = (run: RunResult, ctx: RuleContext, t: ValidityThresholds) => ValidityIssue | null

const pct = (x: number): string => `${(x * 100).toFixed(1)}%`
const num = (x: number): string => (Number.isInteger(x) ? String(x) : x.toFixed(2))
const relDiff = (a: number, b: number): number => (a === b ? 0 : Math.abs(a - b) / Math.max(Math.abs(a), Math.abs(b)))

/** Output tokens the client believes it got: server usage when reported, else content chunks (0 when neither is known). */
export function clientOutputTokens(run: RunResult): number {
  return run.tokens.server_usage ?? run.tokens.client_chunks ?? 0
}

const clientSaturated: Rule = (run, ctx, t) => {
  const c = run.client
  // An imported run has no client figures: the check cannot be made (checks_not_run says so).
  if (c === null) return null
  const why: string[] = []
  const delayed = c.event_loop_delay_p99_ms > t.clientEventLoopDelayP99MaxMs
  const busy = c.event_loop_utilization >= t.clientEluMax
  if (delayed) {
    why.push(
      `event-loop delay p99 was ${num(c.event_loop_delay_p99_ms)} ms (limit ${num(t.clientEventLoopDelayP99MaxMs)} ms), so token timestamps were late by up to that much`,
    )
  }
  if (busy) {
    why.push(
      `event-loop utilisation reached ${pct(c.event_loop_utilization)} (limit ${pct(t.clientEluMax)}), so tokens arriving together queued behind each other`,
    )
  } else if (delayed) {
    // A late loop that was mostly idle was kept off the CPU: name the cause the figures point to.
    why.push(
      `the loop itself was busy only ${pct(c.event_loop_utilization)} of the time, so the CPU was shared (the server on the same host, or other processes)`,
    )
  }
  // Only meaningful while requests were queued for a slot, and only in a closed loop (an open loop's in-flight count is the server's doing).
  if (run.arrivals === undefined && run.num_prompts > ctx.concurrency && c.mean_in_flight < t.inFlightMinFraction * ctx.concurrency) {
    why.push(
      `only ${num(c.mean_in_flight)} of ${ctx.concurrency} requests were in flight on average while more were waiting (limit ${pct(t.inFlightMinFraction)})`,
    )
  }
  why.push(...behindSchedule(run, t))
  if (why.length === 0) return null
  const load = `${Math.round(c.events_per_second)} token events/s on ${c.workers} load thread${c.workers === 1 ? '' : 's'}, send lag p99 ${num(c.send_lag_p99_ms)} ms`
  return { code: 'client_saturated', detail: `The load generator could not keep up: ${why.join('; ')} (${load})${gpuNote(run.gpu, t)}.` }
}

/**
 * The open-loop rule: the client sent requests later than its arrival schedule
 * said (slot waits under a max concurrency excluded: they are the server's
 * queueing), or sent them at a lower rate than the schedule over the same
 * requests. With rate inf every request is due at once and there is no
 * schedule to keep.
 */
function behindSchedule(run: RunResult, t: ValidityThresholds): string[] {
  const a = run.arrivals
  if (a === undefined || a.requested_rate === 'inf') return []
  const why: string[] = []
  const lateP95 = a.send_lateness_ms.p95
  if (lateP95 !== null && lateP95 > t.openLoopLatenessP95MaxMs) {
    why.push(
      `requests went out late against their arrival schedule, p95 ${num(lateP95)} ms after they were due (limit ${num(t.openLoopLatenessP95MaxMs)} ms), so the server saw another arrival process than the one asked for`,
    )
  }
  // Slot waits stretch the sends legitimately: judge the rate only where none happened.
  const queued = a.max_concurrency !== null && (a.queue_ms.mean ?? 0) > 0
  if (!queued && a.rate !== null && a.scheduled_rate !== null && a.rate < t.openLoopRateMinFraction * a.scheduled_rate) {
    why.push(
      `requests went out at ${num(a.rate)}/s while the schedule asked for ${num(a.scheduled_rate)}/s over the same requests (${pct(a.rate / a.scheduled_rate)}, limit ${pct(t.openLoopRateMinFraction)}; requested rate ${num(a.requested_rate)}/s)`,
    )
  }
  return why
}

/** What the GPU did while the client was saturated: low utilisation means the harness, not the engine, was the limit. */
function gpuNote(samples: readonly GpuSample[] | null, t: ValidityThresholds): string {
  const util = meanUtilization(samples)
  if (util === null) return ''
  if (util < t.gpuBusyUtilizationPct) return `; GPU utilisation averaged only ${num(util)}% meanwhile, so the harness, not the engine, was the limit`
  return `; GPU utilisation averaged ${num(util)}% meanwhile`
}

const tokenCountMismatch: Rule = (run, _ctx, t) => {
  const k = run.tokens
  const why: string[] = []
  if (k.server_usage !== null && k.client_chunks !== null && k.server_usage < k.client_chunks * (1 - t.tokenCountTolerance)) {
    why.push(
      `the server's usage reports ${k.server_usage} output tokens but the client received ${k.client_chunks} content chunks, and every chunk carries at least one token`,
    )
  }
  if (k.server_usage !== null && k.expected !== null && k.server_usage > k.expected * (1 + t.tokenCountTolerance)) {
    why.push(`the server's usage reports ${k.server_usage} output tokens, more than the ${k.expected} that max_tokens allows`)
  }
  const reference = clientOutputTokens(run)
  if (k.retokenized !== null && relDiff(k.retokenized, reference) > t.retokenizedTolerance) {
    const what = k.server_usage !== null ? "the server's usage" : 'the client chunk count'
    why.push(
      `re-tokenising the text gives ${k.retokenized} tokens, ${what} says ${reference} (${pct(relDiff(k.retokenized, reference))} apart, tolerance ${pct(t.retokenizedTolerance)})`,
    )
  }
  const gen = run.server_side?.generation_tokens ?? null
  if (gen !== null) {
    // Failed requests generate tokens the client never counts, so then only "fewer" is impossible.
    const off = run.failed === 0 ? relDiff(gen, reference) > t.tokenCountTolerance : gen < reference * (1 - t.tokenCountTolerance)
    if (off) why.push(`the server's /metrics counted ${gen} generated tokens during the run, the client ${reference}`)
  }
  if (why.length === 0) return null
  return { code: 'token_count_mismatch', detail: `Output tokens counted two ways disagree: ${why.join('; ')}.` }
}

const outputLenMismatch: Rule = (run, ctx, t) => {
  const k = run.tokens
  if (!ctx.ignoreEos || run.completed === 0 || k.expected === null || k.expected === 0) return null
  const produced = Math.max(k.server_usage ?? 0, k.client_chunks ?? 0)
  if (produced >= k.expected * (1 - t.outputShortfallTolerance)) return null
  const how = k.server_usage === null ? ' (counted as content chunks: the server sent no usage)' : ''
  return {
    code: 'output_len_mismatch',
    detail: `Completed requests produced ${produced} output tokens${how}, ${pct(produced / k.expected)} of the ${k.expected} asked for with ignore_eos: the server stopped early, so its speed is not comparable.`,
  }
}

const inputLenMismatch: Rule = (run, ctx, t) => {
  const k = run.tokens
  // No usage.prompt_tokens, nothing completed, or a result written before prompts were counted: no evidence.
  if (k.prompt_server_usage === null || k.prompt_expected === null || k.prompt_expected === 0 || run.completed === 0) return null
  if (relDiff(k.prompt_server_usage, k.prompt_expected) <= t.inputLenTolerance) return null
  const perRequest = k.prompt_server_usage / run.completed
  const inputLen = k.prompt_expected / run.completed
  const fewer = perRequest < inputLen
  const off = `${pct(Math.abs(perRequest - inputLen) / inputLen)} ${fewer ? 'fewer' : 'more'}, tolerance ${pct(t.inputLenTolerance)}`
  // Chat prompts servegate could not size (no /tokenize that counts chat messages): the template's
  // tokens on top are servegate's gap, not the server's fault.
  if (!fewer && ctx.api === 'chat' && ctx.promptCalibration === 'none') {
    return {
      code: 'prompt_uncalibrated',
      detail: `The server's usage counts ${num(perRequest)} prompt tokens per completed request (${k.prompt_server_usage} in all), but the shape says ${num(inputLen)} (${off}): servegate could not size these chat prompts, because the server has no /tokenize that counts chat messages, so the chat template's tokens came on top of input_len words. This is servegate's gap, not the server's: give servegate the model's tokenizer (--tokenizer DIR or a Hugging Face model id), or measure this server with --api completions (exact token ids).`,
    }
  }
  const why = fewer
    ? 'the server ignored part of each prompt (it truncated them), so it did less prefill work than the shape says'
    : "the server prefilled more than the shape says (with chat, the model's template and tokenizer add tokens; servegate calibrates chat prompts with the server's /tokenize when it offers one)"
  return {
    code: 'input_len_mismatch',
    detail: `The server's usage counts ${num(perRequest)} prompt tokens per completed request (${k.prompt_server_usage} in all), but each prompt was sent as ${num(inputLen)} tokens (${off}): ${why}.`,
  }
}

const prefixCacheContaminated: Rule = (run, ctx, t) => {
  if (!ctx.expectPrefixCacheMisses) return null
  // The engine's cache counters where its metrics have them; else its usage's cached_tokens (any engine that reports it).
  const s = run.server_side
  const fromMetrics = s !== null && s.prefix_cache_hits !== null
  const hits = fromMetrics ? s.prefix_cache_hits : (run.tokens.prompt_cached_usage ?? null)
  if (hits === null || hits <= 0) return null
  const q = fromMetrics ? s.prefix_cache_queries : run.tokens.prompt_server_usage
  if (q !== null && q > 0 && hits / q <= t.prefixCacheMaxHitFraction) return null
  // The chat template's shared preamble, or the head of the completions prompts' unique code, may be
  // served from a token-level cache for every request; only hits beyond it are reuse.
  const requests = run.completed + run.failed
  // A prompt shorter than the code shares at most all but its last token with another (a result
  // written before prompts were counted is taken to hold prompts longer than the code).
  const expected = run.tokens.prompt_expected
  const promptLen = expected !== null && expected !== undefined && run.completed > 0 ? expected / run.completed : Number.POSITIVE_INFINITY
  const codeHead = Math.min(t.promptCodeSharedTokens, Math.max(0, promptLen - 1))
  if (hits <= (ctx.api === 'chat' ? t.chatPreambleTokens : codeHead) * requests) return null
  const share = q !== null && q > 0 ? ` of ${q} ${fromMetrics ? 'queried' : 'prompt tokens'} (${pct(hits / q)})` : ''
  const source = fromMetrics ? "The server's prefix cache served" : "The server's usage (prompt_tokens_details.cached_tokens) says its prefix cache served"
  return {
    code: 'prefix_cache_contaminated',
    detail: `${source} ${hits} prompt tokens${share} during a run whose prompts were meant to be unique, so prefill was skipped and TTFT is flattered. The same --seed run earlier against this server sends the same prompts: pick another --seed or clear the server's cache (restart it).`,
  }
}

const rampDominated: Rule = (run, ctx, t) => {
  // An open loop has no slots to fill: its load is the arrival rate (arrivals, client_saturated).
  if (ctx.concurrency <= 1 || run.completed === 0 || run.arrivals !== undefined) return null
  const ss = run.steady_state
  if (ss === null) {
    return {
      code: 'ramp_dominated',
      detail: `At no moment were all ${ctx.concurrency} requests in flight at once, so no figure describes the engine at that concurrency.`,
    }
  }
  if (ss.ramp_fraction <= t.rampFractionMax) return null
  return {
    code: 'ramp_dominated',
    detail: `${pct(ss.ramp_fraction)} of the run was ramp-up or drain outside the window in which all ${ctx.concurrency} slots were busy (limit ${pct(t.rampFractionMax)}); use more prompts per concurrency.`,
  }
}

export const requestsFailed: Rule = (run) => {
  if (run.failed === 0) return null
  const kinds = Object.entries(run.errors)
    .sort((a, b) => b[1] - a[1])
    .map(([kind, n]) => `${kind} ×${n}`)
    .join(', ')
  return { code: 'requests_failed', detail: `${run.failed} of ${run.completed + run.failed} requests failed (${kinds || 'unknown'}).` }
}

export const tooFewRequests: Rule = (run, _ctx, t) => {
  const why: string[] = []
  if (run.completed < t.minCompletedRequests) {
    why.push(`only ${run.completed} requests completed (at least ${t.minCompletedRequests} are needed)`)
  }
  // Each request gives one ITL sample per gap between its chunks.
  const itlSamples = run.tokens.client_chunks === null ? null : Math.max(0, run.tokens.client_chunks - run.completed)
  if (run.completed > 0 && itlSamples !== null && itlSamples < t.minItlSamples) {
    why.push(`only ${itlSamples} inter-token gaps were measured (at least ${t.minItlSamples} are needed for a p99)`)
  }
  if (why.length === 0) return null
  return { code: 'too_few_requests', detail: `Too little data for the percentiles reported: ${why.join('; ')}.` }
}

const normaliseReason = (r: string): string =>
  r
    .trim()
    .toLowerCase()
    .replace(/^clocks_(throttle|event)_reasons\./, '')
    .replace(/[\s-]+/g, '_')

const gpuThrottled: Rule = (run, _ctx, t) => {
  if (run.gpu === null) return null
  const benign = new Set(t.benignThrottleReasons.map(normaliseReason))
  const clockBound = new Set(t.clockBoundThrottleReasons.map(normaliseReason))
  const isSlow = (s: GpuSample): boolean =>
    s.utilization_pct !== null &&
    s.utilization_pct >= t.gpuBusyUtilizationPct &&
    s.sm_clock_mhz !== null &&
    s.max_sm_clock_mhz !== null &&
    s.max_sm_clock_mhz > 0 &&
    s.sm_clock_mhz < t.smClockMinFraction * s.max_sm_clock_mhz
  const why: string[] = []
  for (const [index, samples] of byGpu(run.gpu)) {
    const name = samples[0]?.name ?? 'GPU'
    const reasons = new Map<string, number>()
    for (const s of samples) {
      for (const r of new Set(s.throttle_reasons.map(normaliseReason))) {
        if (benign.has(r) || (clockBound.has(r) && !isSlow(s))) continue
        reasons.set(r, (reasons.get(r) ?? 0) + 1)
      }
    }
    for (const [r, n] of reasons) why.push(`GPU ${index} (${name}) reported ${r} in ${n} of ${samples.length} samples`)
    const slow = samples.filter(isSlow)
    const worst = slow.sort((a, b) => (a.sm_clock_mhz as number) - (b.sm_clock_mhz as number))[0]
    if (worst !== undefined) {
      why.push(
        `GPU ${index} (${name}) ran its SM clock at ${worst.sm_clock_mhz} of ${worst.max_sm_clock_mhz} MHz under load (limit ${pct(t.smClockMinFraction)}) in ${slow.length} samples`,
      )
    }
  }
  if (why.length === 0) return null
  return { code: 'gpu_throttled', detail: `The GPU was throttled during the run: ${why.join('; ')}.` }
}

export const gpuShared: Rule = (run) => {
  if (run.gpu === null) return null
  const why: string[] = []
  for (const [index, samples] of byGpu(run.gpu)) {
    const most = Math.max(0, ...samples.map((s) => s.foreign_processes ?? 0))
    if (most > 0) why.push(`GPU ${index} (${samples[0]?.name ?? 'GPU'}) had up to ${most} other process${most === 1 ? '' : 'es'}`)
  }
  if (why.length === 0) return null
  return { code: 'gpu_shared', detail: `Something else was using the GPU during the run: ${why.join('; ')}.` }
}

function byGpu(samples: readonly GpuSample[]): Map<number, GpuSample[]> {
  const out = new Map<number, GpuSample[]>()
  for (const s of samples) out.set(s.index, [...(out.get(s.index) ?? []), s])
  return new Map([...out.entries()].sort((a, b) => a[0] - b[0]))
}

function meanUtilization(samples: readonly GpuSample[] | null): number | null {
  const xs = (samples ?? []).map((s) => s.utilization_pct).filter((u): u is number => u !== null)
  return xs.length === 0 ? null : xs.reduce((a, b) => a + b, 0) / xs.length
}

/** All rules in the order issues are listed. */
export const RULES: readonly Rule[] = [
  requestsFailed,
  tooFewRequests,
  clientSaturated,
  tokenCountMismatch,
  outputLenMismatch,
  inputLenMismatch,
  prefixCacheContaminated,
  rampDominated,
  gpuThrottled,
  gpuShared,
]
