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
  readonly seed: number
  readonly out: string
  readonly workers: 'auto'
  readonly idleTimeoutMs: number
  readonly readyTimeoutS: number
  readonly stopTimeoutS: number
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
}

/** Warmup requests for one point when warmup is 'auto': one full wave at concurrency C, at least 4. */
export function autoWarmupRequests(concurrency: number): number {
  return Math.max(4, concurrency)
}
