/**
 * What `servegate run` does when nothing is given: a short demo sweep against
 * the built-in simulator that finishes in about a minute on 2 cores. The
 * arithmetic: 3 concurrencies × 3 repeats = 9 runs; each run is 12 waves of
 * measured requests (prompts-per-concurrency 12, closed loop) plus one warmup
 * wave (auto warmup = max(4, C) requests at concurrency C), so ~117 request
 * lifetimes back to back. The simulator's default profile steps every ~10 ms
 * (+0.1 ms per running sequence, +prefill), so 32 output tokens take
 * ~0.33–0.42 s a request: ~45 s in all. 64 tokens would double that.
 */
import type { Api, Shape, Target } from '../types.js'

/** Percentiles a target can name: the ones every run records (p50, p95, p99). */
export const TARGET_PERCENTILES = [50, 95, 99] as const

export const DEFAULTS: {
  readonly api: Api
  readonly target: Readonly<Target>
  readonly sweepName: string
  readonly shapes: readonly Readonly<Shape>[]
  readonly concurrency: readonly number[]
  readonly promptsPerConcurrency: number
  readonly warmup: 'auto'
  readonly repeats: number
  readonly hostRetries: number
  readonly seed: number
  readonly out: string
  readonly workers: 'auto'
  readonly idleTimeoutMs: number
  readonly readyTimeoutS: number
  readonly stopTimeoutS: number
  readonly burstiness: number
  readonly numPrompts: number
} = {
  api: 'completions',
  // METHODOLOGY: "fix a target, say 50 ms between tokens, and report the throughput achievable while holding it at p95".
  target: { metric: 'tpot', percentile: 95, thresholdMs: 50 },
  sweepName: 'default',
  shapes: [{ inputLen: 128, outputLen: 32 }],
  concurrency: [1, 4, 16],
  promptsPerConcurrency: 12,
  warmup: 'auto',
  repeats: 3,
  // A spoiled run stays invalid unless the sweep asks to measure it again (host_retries).
  hostRetries: 0,
  seed: 42,
  out: 'servegate-result.json',
  workers: 'auto',
  // A stream silent this long is dead. Generous: at high concurrency a real engine may queue a request
  // (no byte sent) for tens of seconds before its prefill is scheduled.
  idleTimeoutMs: 120_000,
  // A server servegate starts may load a large model for many minutes (weights, compilation, CUDA graphs).
  readyTimeoutS: 1800,
  // SIGTERM lets an engine free its GPUs and workers in order; then SIGKILL.
  stopTimeoutS: 30,
  // Open loop, as `vllm bench serve`: Poisson arrivals and 1000 prompts per point.
  burstiness: 1,
  numPrompts: 1000,
}

/** Most attempts a run the host spoiled may be measured again (sweep `host_retries`, `--host-retries`). */
export const MAX_HOST_RETRIES = 10

/** Longest request deadline accepted, s (7 days; a timer cannot wait much longer). */
export const MAX_REQUEST_TIMEOUT_S = 604_800

/**
 * The metric kinds a gated row can have: the keys `gate.design_pct` may name. The gate's own
 * list (MetricKind, records/baseline.ts) lies to the right of config; gate/settings.ts checks
 * at compile time that the two stay the same.
 */
export const METRIC_KIND_KEYS = ['itl_p95', 'tput_at_target', 'ttft_p95', 'tpot_p95', 'e2el_p95', 'req_tput', 'output_tput', 'goodput'] as const

/** One metric kind by its config key (`itl_p95`, `tput_at_target`, …). */
export type MetricKindKey = (typeof METRIC_KIND_KEYS)[number]

/**
 * Default total deadline of one request, s, for a shape (`--request-timeout`
 * and `server.request_timeout` override it):
 *
 *   120 s + input_len × 1 ms + output_len × 250 ms
 *
 * Generous for a slow real engine, because a request that misses it is a
 * failed request: 120 s is the idle timeout's allowance for a request queued
 * behind others before its prefill is scheduled (at high concurrency a real
 * engine can hold one tens of seconds); 1 ms a prompt token is prefill at
 * 1,000 tokens/s, slower than any GPU engine prefills even under load; 250 ms
 * an output token is 4 tokens/s, far below any usable decode speed. So 128 in /
 * 32 out gets 128 s, 4096 / 512 gets 252 s, 1024 / 8192 gets 2,169 s. What it
 * bounds is a stream that never ends: keep-alive comments, tokens past
 * max_tokens, or a byte just often enough to beat the idle timeout.
 */
export function defaultRequestTimeoutS(inputLen: number, outputLen: number): number {
  const tokens = (n: number): number => (Number.isFinite(n) && n > 0 ? n : 0)
  return Math.round((120 + tokens(inputLen) * 0.001 + tokens(outputLen) * 0.25) * 1000) / 1000
}

/** Warmup requests for one point when warmup is 'auto': one full wave at concurrency C, at least 4. */
export function autoWarmupRequests(concurrency: number): number {
  return Math.max(4, concurrency)
}

/**
 * Warmup requests for one open-loop point when warmup is 'auto': about one second of
 * arrivals at the point's rate (at least 4), never more than the cap on requests in
 * flight would fill for an unbounded rate (64 without a cap) nor than the point's requests.
 */
export function autoOpenLoopWarmupRequests(rate: number, maxConcurrency: number | null, numPrompts: number): number {
  const wave = Number.isFinite(rate) ? Math.ceil(rate) : (maxConcurrency ?? 64)
  return Math.min(numPrompts, 64, Math.max(4, wave))
}
