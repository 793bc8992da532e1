/**
 * The ordered run plan: shape → concurrency → repeat. Each point carries its
 * own recorded seed so one repeat's prompts never hit the prefix cache filled
 * by another (METHODOLOGY: "Fresh prompts for every run"; docs/validity.md:
 * prefix_cache_contaminated).
 */
import { autoOpenLoopWarmupRequests, autoWarmupRequests } from '../config/defaults.js'
import { concurrencyFor } from '../config/placement.js'
import type { ResolvedConfig } from '../config/resolve.js'
import type { OpenLoopSettings, Shape } from '../types.js'
import { deriveUnusedSeed } from '../util/rng.js'

/** One run to perform: a shape at a concurrency, one repeat of it. */
export interface PlanPoint {
  /** Stable id, e.g. `4096x512@c16#r2` (open loop: `4096x512@rate20#r2`); used for resume and request ids. */
  key: string
  shape: Shape
  /** Closed loop: requests in flight. Open loop: the cap on them (max concurrency, else numPrompts). */
  concurrency: number
  /** Open loop only: the arrival process; the point is labelled by its rate. */
  openLoop?: OpenLoopSettings
  /** 1-based. */
  repeat: number
  /** Seed of this point's prompts (32-bit), recorded in the result. */
  seed: number
  /** Measured requests: concurrency × prompts-per-concurrency. */
  numPrompts: number
  /** Requests sent first and discarded. */
  warmupRequests: number
  /** One shard's part of the point in a sharded sweep (plan/shard.ts); absent: the whole point. */
  shard?: ShardOfPoint
}

/** What a planned run of one shard carries about the whole point it is part of (plan/shard.ts). */
export interface ShardOfPoint {
  index: number
  count: number
  /** The point's total concurrency C. */
  totalConcurrency: number
  /** The plan's seed for the whole point (the merged run records it). */
  pointSeed: number
  /** The run's slot in the schedule (0-based over the whole plan). */
  slotIndex: number
}

/** Stable key of a point: `{input}x{output}@c{C}#r{repeat}`. */
export function pointKey(shape: Shape, concurrency: number, repeat: number): string {
  return `${shape.inputLen}x${shape.outputLen}@c${concurrency}#r${repeat}`
}

/** A request rate as recorded and labelled: the number, or "inf" for every request at once. */
export function rateLabel(rate: number): number | 'inf' {
  return rate === Infinity ? 'inf' : rate
}

/** Stable key of an open-loop point: `{input}x{output}@rate{R}#r{repeat}` (R may be `inf`). */
function openPointKey(shape: Shape, rate: number, repeat: number): string {
  return `${shape.inputLen}x${shape.outputLen}@rate${rateLabel(rate)}#r${repeat}`
}

/** Every point of the sweep in run order (shape → concurrency → repeat); seeds are distinct within the plan. */
export function buildPlan(
  cfg: Pick<ResolvedConfig, 'shapes' | 'concurrency' | 'repeats' | 'seed' | 'promptsPerConcurrency' | 'warmup' | 'openLoop' | 'bracket'>,
): PlanPoint[] {
  const points: PlanPoint[] = []
  const used = new Set<number>()
  const open = cfg.openLoop
  if (open) {
    // Open loop counts requests, not slots: every point sends numPrompts requests at its rate.
    for (const shape of cfg.shapes) {
      for (const rate of open.rates) {
        for (let repeat = 1; repeat <= cfg.repeats; repeat++) {
          const key = openPointKey(shape, rate, repeat)
          points.push({
            key,
            shape: { ...shape },
            concurrency: open.maxConcurrency ?? open.numPrompts,
            openLoop: { rate, burstiness: open.burstiness, maxConcurrency: open.maxConcurrency },
            repeat,
            // The same seed draws the point's prompts and (in load/) its arrival schedule.
            seed: deriveUnusedSeed(used, cfg.seed, key),
            numPrompts: open.numPrompts,
            warmupRequests: cfg.warmup === 'auto' ? autoOpenLoopWarmupRequests(rate, open.maxConcurrency, open.numPrompts) : cfg.warmup,
          })
        }
      }
    }
    return points
  }
  for (const shape of cfg.shapes) {
    // A bracketed sweep runs each shape at its own concurrencies (config/placement.ts).
    for (const concurrency of concurrencyFor(cfg, shape)) {
      for (let repeat = 1; repeat <= cfg.repeats; repeat++) {
        const key = pointKey(shape, concurrency, repeat)
        // Prompts start with the point seed, so distinct seeds mean distinct prompts across the
        // whole sweep; a (very unlikely) 32-bit collision is salted away, deterministically.
        const seed = deriveUnusedSeed(used, cfg.seed, key)
        points.push({
          key,
          shape: { ...shape },
          concurrency,
          repeat,
          seed,
          numPrompts: concurrency * cfg.promptsPerConcurrency,
          warmupRequests: cfg.warmup === 'auto' ? autoWarmupRequests(concurrency) : cfg.warmup,
        })
      }
    }
  }
  return points
}
