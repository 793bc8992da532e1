/** Small robust statistics for the gate (pure; inputs are plain arrays). */
import { median } from '../util/median.js'

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

/** ln Γ(x) for x > 0 (Lanczos, g = 7, n = 9): about 15 significant digits. */
function lnGamma(x: number): number {
  const c = [
    0.99999999999980993, 676.5203681218851, -1259.1392167224028, 771.32342877765313, -176.61502916214059, 12.507343278686905, -0.13857109526572012,
    9.9843695780195716e-6, 1.5056327351493116e-7,
  ]
  if (x < 0.5) return Math.log(Math.PI / Math.sin(Math.PI * x)) - lnGamma(1 - x)
  const z = x - 1
  let a = c[0]!
  const t = z + 7.5
  for (let i = 1; i < 9; i++) a += c[i]! / (z + i)
  return 0.5 * Math.log(2 * Math.PI) + (z + 0.5) * Math.log(t) - t + Math.log(a)
}

/** Continued fraction of the regularized incomplete beta (modified Lentz). */
function betaFraction(a: number, b: number, x: number): number {
  const tiny = 1e-300
  let c = 1
  let d = 1 - ((a + b) * x) / (a + 1)
  if (Math.abs(d) < tiny) d = tiny
  d = 1 / d
  let h = d
  for (let m = 1; m <= 300; m++) {
    const m2 = 2 * m
    let aa = (m * (b - m) * x) / ((a + m2 - 1) * (a + m2))
    d = 1 + aa * d
    if (Math.abs(d) < tiny) d = tiny
    c = 1 + aa / c
    if (Math.abs(c) < tiny) c = tiny
    d = 1 / d
    h *= d * c
    aa = (-(a + m) * (a + b + m) * x) / ((a + m2) * (a + m2 + 1))
    d = 1 + aa * d
    if (Math.abs(d) < tiny) d = tiny
    c = 1 + aa / c
    if (Math.abs(c) < tiny) c = tiny
    d = 1 / d
    const del = d * c
    h *= del
    if (Math.abs(del - 1) < 1e-14) break
  }
  return h
}

/** Regularized incomplete beta I_x(a, b). */
function incompleteBeta(x: number, a: number, b: number): number {
  if (x <= 0) return 0
  if (x >= 1) return 1
  const front = Math.exp(lnGamma(a + b) - lnGamma(a) - lnGamma(b) + a * Math.log(x) + b * Math.log(1 - x))
  return x < (a + 1) / (a + b + 2) ? (front * betaFraction(a, b, x)) / a : 1 - (front * betaFraction(b, a, 1 - x)) / b
}

/** P(T ≤ t) for Student's t with `df` degrees of freedom (any real df > 0; ∞ is the normal). */
export function tCdf(t: number, df: number): number {
  if (!Number.isFinite(df)) return normalCdf(t)
  const tail = 0.5 * incompleteBeta(df / (df + t * t), df / 2, 0.5)
  return t >= 0 ? 1 - tail : tail
}

/** Standard normal CDF, from erf(x) = P(1/2, x²) (exact in the tails, where the gate's critical values lie). */
function normalCdf(z: number): number {
  const x = Math.abs(z) / Math.SQRT2
  const p = regularizedGammaP(0.5, x * x)
  return z >= 0 ? 0.5 * (1 + p) : 0.5 * (1 - p)
}

/** Regularized lower incomplete gamma P(a, x) (series, then continued fraction). */
function regularizedGammaP(a: number, x: number): number {
  if (x <= 0) return 0
  const lnFront = -x + a * Math.log(x) - lnGamma(a)
  if (x < a + 1) {
    let sum = 1 / a
    let term = sum
    for (let n = 1; n < 500; n++) {
      term *= x / (a + n)
      sum += term
      if (Math.abs(term) < Math.abs(sum) * 1e-15) break
    }
    return sum * Math.exp(lnFront)
  }
  const tiny = 1e-300
  let b = x + 1 - a
  let c = 1 / tiny
  let d = 1 / b
  let h = d
  for (let i = 1; i < 500; i++) {
    const an = -i * (i - a)
    b += 2
    d = an * d + b
    if (Math.abs(d) < tiny) d = tiny
    c = b + an / c
    if (Math.abs(c) < tiny) c = tiny
    d = 1 / d
    const del = d * c
    h *= del
    if (Math.abs(del - 1) < 1e-15) break
  }
  return 1 - Math.exp(lnFront) * h
}

/**
 * Quantile of Student's t: the t with P(T ≤ t) = p, for 0 < p < 1 and real df > 0 (∞: the
 * normal). The gate's critical values for small samples: with 3 pairs, t(0.99, 2) = 6.96
 * where the normal says 2.33. Bisection on the CDF, to 1e-10 relative.
 */
export function tQuantile(p: number, df: number): number {
  if (!(p > 0 && p < 1)) throw new Error(`tQuantile: p = ${p} is not in (0, 1)`)
  if (!(df > 0)) throw new Error(`tQuantile: df = ${df} is not above 0`)
  if (p === 0.5) return 0
  if (p < 0.5) return -tQuantile(1 - p, df)
  // Degrees of freedom to 1/1000 (Satterthwaite's are real numbers): the gate asks for few distinct quantiles, often.
  const d = Number.isFinite(df) ? Math.round(df * 1000) / 1000 : Infinity
  const key = `${p}:${d}`
  const hit = T_QUANTILES.get(key)
  if (hit !== undefined) return hit
  const q = tQuantileUncached(p, Math.max(d, 1e-3))
  if (T_QUANTILES.size > 10_000) T_QUANTILES.clear()
  T_QUANTILES.set(key, q)
  return q
}

const T_QUANTILES = new Map<string, number>()

function tQuantileUncached(p: number, df: number): number {
  let lo = 0
  let hi = 1
  while (tCdf(hi, df) < p) {
    lo = hi
    hi *= 2
    if (hi > 1e12) return hi
  }
  for (let i = 0; i < 200 && hi - lo > 1e-10 * hi; i++) {
    const mid = (lo + hi) / 2
    if (tCdf(mid, df) < p) lo = mid
    else hi = mid
  }
  return (lo + hi) / 2
}
