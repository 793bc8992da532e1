/**
 * Placement of a PR sweep's points. `fixed` runs every concurrency of the list;
 * `bracket` runs, per shape, only the two concurrencies of the list around the
 * baseline's crossing of the interactivity target, plus the concurrencies whose
 * p95 ITL the gate keeps (src/gate/bracket.ts finds the bracket). This file holds
 * the plain data the plan and the result record; it decides nothing.
 */
import type { Shape } from '../types.js'

export type Placement = 'fixed' | 'bracket'

/** One shape's points under bracketing. */
export interface ShapePlacement {
  /** Concurrencies this shape runs, ascending. */
  concurrency: number[]
  /** The baseline's last concurrency holding the target, and its first missing it; null when the shape fell back to the whole list. */
  below: number | null
  above: number | null
  /** Why the shape runs the whole list instead (no bracket in the baseline). */
  fallback?: string
}

/** The bracket in force for a sweep. */
export interface BracketPlacement {
  /** Name of the baseline the bracket came from. */
  baseline: string
  /** How many of its newest refreshes the crossing was found from. */
  refreshes: number
  /** Concurrencies whose p95 ITL the gate keeps, ascending. */
  itlConcurrency: number[]
  /** By shape label `INxOUT`. */
  shapes: Record<string, ShapePlacement>
}

/** The concurrencies `shape` runs: the bracket's when one is in force, else the whole list. */
export function concurrencyFor(cfg: { concurrency: readonly number[]; bracket?: BracketPlacement | null }, shape: Shape): number[] {
  const placed = cfg.bracket?.shapes[`${shape.inputLen}x${shape.outputLen}`]
  return placed ? [...placed.concurrency] : [...cfg.concurrency]
}

/** How many runs the sweep plans (shapes × their concurrencies, or request rates in open loop, × repeats). */
export function plannedRunCount(cfg: {
  shapes: readonly Shape[]
  concurrency: readonly number[]
  repeats: number
  bracket?: BracketPlacement | null
  openLoop?: { rates: readonly unknown[] } | null
}): number {
  if (cfg.openLoop) return cfg.shapes.length * cfg.openLoop.rates.length * cfg.repeats
  return cfg.shapes.reduce((n, s) => n + concurrencyFor(cfg, s).length, 0) * cfg.repeats
}

/** The bracket as the result's config records it (`config.placement`, snake_case). */
export function bracketForResult(b: BracketPlacement): Record<string, unknown> {
  return {
    mode: 'bracket',
    baseline: b.baseline,
    refreshes: b.refreshes,
    itl_concurrency: [...b.itlConcurrency],
    shapes: Object.fromEntries(
      Object.entries(b.shapes).map(([k, s]) => [
        k,
        { concurrency: [...s.concurrency], below: s.below, above: s.above, ...(s.fallback === undefined ? {} : { fallback: s.fallback }) },
      ]),
    ),
  }
}
