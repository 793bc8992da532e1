/**
 * Spread of one figure across repeats (METHODOLOGY: run each point three
 * times and report the spread).
 */
import { max, mean, min, sampleStandardDeviation } from 'simple-statistics'
import { median } from '../util/median.js'

export interface Spread {
  n: number
  median: number
  min: number
  max: number
  mean: number
  /**
   * Coefficient of variation: sample standard deviation (n − 1) / mean.
   * 0 for a single value (no spread can be measured from one run — read n
   * before trusting it) and when every value is 0.
   */
  cv: number
}

/** Median, min, max, mean and CV of `values` (any unit); null for an empty list. */
export function spread(values: readonly number[]): Spread | null {
  if (values.length === 0) return null
  for (const v of values) {
    if (!Number.isFinite(v)) throw new RangeError(`spread: values must be finite numbers, got ${v}`)
  }
  const xs = [...values]
  const m = mean(xs)
  const sd = xs.length > 1 ? sampleStandardDeviation(xs) : 0
  return {
    n: xs.length,
    median: median(xs),
    min: min(xs),
    max: max(xs),
    mean: m,
    cv: sd === 0 ? 0 : sd / Math.abs(m),
  }
}
