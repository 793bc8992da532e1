/**
 * Why a gated metric went unmeasured, in words a reader can act on: the advice
 * line of an `unmeasured` verdict names the cause (a busy host, a streaming
 * change, an empty baseline, …) rather than only the rows. Pure.
 */
import type { Problem } from './invariants.js'

/** What each validity code that spoils a run says about its cause, and what to do. */
const CAUSES: Record<string, string> = {
  client_saturated: "a busy host: servegate's client could not keep up with the load it was asked for (client_saturated); run on a quieter runner",
  gpu_shared: 'another process shared the GPU (gpu_shared); give the benchmark the GPU to itself',
  gpu_throttled: 'the GPU throttled its clocks (gpu_throttled); check cooling and power limits',
  too_few_requests:
    'too few measurable requests or gaps per run (too_few_requests): a change in how the server streams (fewer, larger chunks) or a sweep too short for its concurrency',
  ramp_dominated: 'the runs were mostly ramp-up (ramp_dominated); raise prompts_per_concurrency',
  prefix_cache_contaminated: 'the prefix cache served prompts the harness re-sent (prefix_cache_contaminated)',
  shards_unaligned:
    "the shards of a sharded sweep did not line up in time (shards_unaligned): lengthen --slot, or give every shard --time-server so hosts' clocks are compared",
}

/**
 * Whether `valid` runs out of `planned` are enough to call a metric measured: at least `min`
 * (2 for a stored baseline's one look, whose spread comes from them; 1 for a sequential row,
 * whose increments each carry the host's design noise), and at least two thirds of the planned
 * repeats. `planned` null: unknown.
 */
export function enoughValidRuns(valid: number, planned: number | null, min = 2): boolean {
  if (valid < min) return false
  return planned === null || valid * 3 >= planned * 2
}

/** One sentence of causes for unmeasured rows, from their problems (host codes) and extra causes (baseline side). */
export function unmeasuredCause(problems: readonly Problem[], extra: readonly string[] = []): string {
  const codes = new Set(problems.flatMap((p) => p.codes ?? []))
  const parts = [...extra]
  for (const [code, text] of Object.entries(CAUSES)) if (codes.has(code)) parts.push(text)
  for (const code of codes) if (!(code in CAUSES)) parts.push(`runs invalid (${code})`)
  if (parts.length === 0) return 'a gated metric has no valid measurement on one side'
  return parts.join('; ')
}
