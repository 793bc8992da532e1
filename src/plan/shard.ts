/**
 * Shards of one sweep (`servegate run --shard I/N`): when one load host cannot carry a point's
 * token traffic, N hosts each run shard I of the same plan, and `servegate merge` re-summarises
 * the union of their records (docs/run.md, "Sharded sweeps"). This file is the plan's side of it:
 * each point's share of the concurrency, prompts and warmup, the shard's own seed, and the
 * schedule every shard follows. Pure.
 *
 * The schedule: run k of the plan (every shard counts the same runs, in the same order, including
 * those where its share is 0) owns the slot [start_at + k × slot, start_at + (k + 1) × slot) on the
 * common clock. A shard starts the run's warmup at the slot's start and its measured requests at
 * the end of the slot's warmup window, its first WARMUP_SHARE; so every shard's measured window
 * begins at the same instant, whatever its share of the warmup took.
 */
import { autoWarmupRequests } from '../config/defaults.js'
import { deriveSeed } from '../util/rng.js'
import type { ShardSpec } from '../config/shard.js'
import type { PlanPoint, ShardOfPoint } from './plan.js'

/** The share of each slot given to the warmup: measured requests start a quarter of the way into it. */
export const WARMUP_SHARE = 0.25

/**
 * Shard `index`'s part of `total` split over `count` shards as evenly as possible: every shard
 * gets ⌊total / count⌋ and the first total mod count shards one more. The parts sum to total.
 */
export function shareOf(total: number, spec: ShardSpec): number {
  const base = Math.floor(total / spec.count)
  return base + (spec.index < total % spec.count ? 1 : 0)
}

/** The split of `total` over every shard, by index: `[3, 3, 2]` for 8 over 3. */
export function splitOf(total: number, count: number): number[] {
  return Array.from({ length: count }, (_, index) => shareOf(total, { index, count }))
}

/** The seed of shard `index`'s prompts at a point: its own, so no two shards send the same prompt. */
export function shardSeed(pointSeed: number, spec: ShardSpec): number {
  return deriveSeed(pointSeed, 'shard', spec.index, spec.count)
}

/** A run of a shard's plan: the point as this shard sends it, or null where its share of C is 0. */
export interface ShardRun {
  slotIndex: number
  point: (PlanPoint & { shard: ShardOfPoint }) | null
}

/**
 * The shard's plan: every run of the whole plan, in order, each with its slot; where the shard's
 * share of C is positive, the point as this shard sends it: its share of C, share × prompts per
 * concurrency measured requests (C × prompts per concurrency in all), its share of the point's
 * warmup (the whole point's, auto or a count, split in proportion and rounded up, so the warmup
 * takes as many rounds as on one client), and prompts from its own seed. Closed loop only (config time refuses open loop with --shard).
 */
export function shardPlan(plan: readonly PlanPoint[], spec: ShardSpec, warmup: number | 'auto'): ShardRun[] {
  return plan.map((p, slotIndex) => {
    const share = shareOf(p.concurrency, spec)
    if (share === 0) return { slotIndex, point: null }
    const perSlot = p.numPrompts / p.concurrency
    return {
      slotIndex,
      point: {
        ...p,
        key: `${p.key}/s${spec.index}of${spec.count}`,
        concurrency: share,
        numPrompts: share * perSlot,
        warmupRequests: Math.ceil(((warmup === 'auto' ? autoWarmupRequests(p.concurrency) : warmup) * share) / p.concurrency),
        seed: shardSeed(p.seed, spec),
        shard: { index: spec.index, count: spec.count, totalConcurrency: p.concurrency, pointSeed: p.seed, slotIndex },
      },
    }
  })
}

/**
 * The prompts' seed of a sharded sweep whose seed is not pinned: every shard must plan from the same
 * one, and no two launches should share it (a server's prefix cache keeps an earlier launch's
 * prompts), so it is drawn from what every shard of one launch shares and the next launch does not:
 * its start time.
 */
export function scheduleSeed(startAt: string, count: number): number {
  return deriveSeed(0x5eed, 'start-at', startAt, count)
}

/** When slot `k` starts on the common clock, ms since 1970. */
export function slotStartMs(startAtMs: number, slotS: number, k: number): number {
  return startAtMs + k * slotS * 1000
}

/** When slot `k`'s measured requests start on the common clock, ms since 1970: the end of its warmup window. */
export function measureAtMs(startAtMs: number, slotS: number, k: number): number {
  return slotStartMs(startAtMs, slotS, k) + slotS * 1000 * WARMUP_SHARE
}
