/**
 * The ordered run plan: shape → concurrency → repeat. Each point carries its
 * own recorded seed so one repeat's prompts never hit the prefix cache filled
 * by another (METHODOLOGY: "Reporting one run"; ARCHITECTURE: prefix_cache_contaminated).
 */
import { autoWarmupRequests } from '../config/defaults.js'
import { concurrencyFor } from '../config/placement.js'
import type { ResolvedConfig } from '../config/resolve.js'
import type { Shape } from '../types.js'
import { deriveUnusedSeed } from '../util/rng.js'

/** One run to perform: a shape at a concurrency, one repeat of it. */
export interface PlanPoint {
  /** Stable id, e.g. `4096x512@c16#r2`; used for resume and request ids. */
  key: string
  shape: Shape
  concurrency: number
  /** 1-based. */
  repeat: number
  /** Seed of this point's prompts (32-bit), recorded in the result. */
  seed: number
  /** Measured requests: concurrency × prompts-per-concurrency. */
  numPrompts: number
  /** Requests sent first and discarded. */
  warmupRequests: number
}

/** Stable key of a point: `{input}x{output}@c{C}#r{repeat}`. */
export function pointKey(shape: Shape, concurrency: number, repeat: number): string {
  return `${shape.inputLen}x${shape.outputLen}@c${concurrency}#r${repeat}`
}

/** Every point of the sweep in run order (shape → concurrency → repeat); seeds are distinct within the plan. */
export function buildPlan(cfg: Pick<ResolvedConfig, 'shapes' | 'concurrency' | 'repeats' | 'seed' | 'promptsPerConcurrency' | 'warmup' | 'bracket'>): PlanPoint[] {
  const points: PlanPoint[] = []
  const used = new Set<number>()
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
