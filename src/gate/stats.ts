/** Small robust statistics for the gate (pure; inputs are plain arrays). */

/** Median of a non-empty list (mean of the middle two for an even count). */
export function median(xs: readonly number[]): number {
  if (xs.length === 0) throw new Error('median of an empty list')
  const s = [...xs].sort((a, b) => a - b)
  const mid = s.length >> 1
  return s.length % 2 === 1 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2
}

/** Unbiased sample variance (n − 1 denominator); 0 for fewer than two values. */
export function sampleVariance(xs: readonly number[]): number {
  if (xs.length < 2) return 0
  const mean = xs.reduce((a, b) => a + b, 0) / xs.length
  return xs.reduce((a, x) => a + (x - mean) ** 2, 0) / (xs.length - 1)
}

// Small-sample factors that make 1.4826 · MAD an unbiased estimate of a normal σ
// (Croux & Rousseeuw 1992; re-derived by simulation for n = 2..9). Beyond 9, n/(n − 0.8).
const MAD_CORRECTION = [NaN, NaN, 1.196, 1.495, 1.363, 1.206, 1.2, 1.14, 1.129, 1.107]

/** Robust σ of a list: 1.4826 · MAD with the small-sample correction; 0 for fewer than two values. */
export function robustSd(xs: readonly number[]): number {
  const n = xs.length
  if (n < 2) return 0
  const m = median(xs)
  const mad = median(xs.map((x) => Math.abs(x - m)))
  return 1.4826 * mad * (n < MAD_CORRECTION.length ? MAD_CORRECTION[n]! : n / (n - 0.8))
}

/**
 * σ of values that mostly share one normal spread but may contain a few strays: a robust
 * start (corrected MAD), values beyond `clip` of those σ from the median dropped, then
 * the classical sample σ of the rest — nearly the efficiency of the sample σ, without
 * letting one disturbed refresh set the noise. 0 for fewer than two values.
 */
export function clippedSd(xs: readonly number[], clip = 3): number {
  if (xs.length < 2) return 0
  const s0 = robustSd(xs)
  const m = median(xs)
  const kept = s0 > 0 ? xs.filter((x) => Math.abs(x - m) <= clip * s0) : xs
  return Math.sqrt(sampleVariance(kept.length >= 2 ? kept : xs))
}

// Var(median of n iid N(0,1)), n = 1..12, by simulation (4·10^5 draws each); beyond 12 the
// asymptotic π/(2n), which overstates small n (π/6 = 0.52 vs 0.449 at n = 3), capped so
// the factor never grows with n.
const VAR_MEDIAN = [NaN, 1, 0.5, 0.4487, 0.2982, 0.2868, 0.2147, 0.2104, 0.1682, 0.1661, 0.1383, 0.1374, 0.1173]

/** Variance of the median of n normal draws, in units of one draw's variance. */
export function varMedianFactor(n: number): number {
  if (n < 1) return Infinity
  return n < VAR_MEDIAN.length ? VAR_MEDIAN[n]! : Math.min(VAR_MEDIAN[VAR_MEDIAN.length - 1]!, Math.PI / (2 * n))
}

/** Quantile of χ²_df / df at normal deviate z (Wilson–Hilferty): how far a sample variance strays from the true one. */
export function chi2Ratio(df: number, z: number): number {
  if (df <= 0) return 1
  const a = 2 / (9 * df)
  return Math.max(0, 1 - a + z * Math.sqrt(a)) ** 3
}

/** Median of χ²_df / df: the typical ratio of a sample variance to the true one. */
export function chi2MedianRatio(df: number): number {
  return chi2Ratio(df, 0)
}
