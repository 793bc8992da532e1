/**
 * The one median of servegate, shared by every stage (metrics, analysis, gate,
 * report, github, formats): the middle value, or the mean of the middle two.
 */

/** Median of a non-empty list (mean of the middle two for an even count); throws on an empty list. */
export function median(xs: readonly number[]): number {
  if (xs.length === 0) throw new Error('median of an empty list')
  const s = [...xs].sort((a, b) => a - b)
  const mid = s.length >> 1
  return s.length % 2 === 1 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2
}

/** Median of the finite values among `values` (nulls, NaN and infinities left out); null when there are none. */
export function finiteMedian(values: readonly (number | null | undefined)[]): number | null {
  const xs = values.filter((v): v is number => typeof v === 'number' && Number.isFinite(v))
  return xs.length === 0 ? null : median(xs)
}
