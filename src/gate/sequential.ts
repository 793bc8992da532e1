/**
 * The gate's decision for one gated row: a one-sided sequential probability
 * ratio test (SPRT) on increments, stopping both ways (pure; docs/gate.md,
 * "The sequential decision").
 *
 * Data. Each increment x_k is one engine start's measurement of the row,
 * oriented so positive is worse, on the log scale: ln(B/A) of one A/B round,
 * or the candidate's start against the stored baseline's centre. Its noise has
 * two parts, both known from the host's history (./seq-noise.ts):
 *   x_k = θ + e_k + u,   e_k ~ N(0, v_k) independent,   u ~ N(0, τ²) shared,
 * where u is the reference's own error that every increment shares (the
 * stored centre's, or the start offsets of sides that are never restarted);
 * τ² = 0 when every increment has fresh starts on both sides.
 *
 * Test. H0: θ = 0 (unchanged) against H1: θ = δ, the change the row is
 * designed to catch (ln 1.10 for p95 ITL, ln 1.15 for throughput at target by
 * default). With W = Σ 1/v_k and T = Σ x_k/v_k over the first n increments,
 * the log likelihood ratio of the whole sequence under that covariance is
 *   Λ_n = δ · (T − δ·W/2) / (1 + τ²·W).
 * The row stops
 *   - `regression` at the first n with Λ_n ≥ ln(1/α) and the estimate T/W above
 *     the row's tolerance;
 *   - `pass` at the first n with Λ_n ≤ ln β (a change of δ is ruled out), named
 *     `improvement` when the estimate is clearly better beyond the tolerance;
 *   - `undecided` when the last look allowed comes first.
 * Guarantees, exact and free of any approximation of overshoot or of the
 * number of looks: exp(Λ_n) is a martingale under H0, so by Ville's inequality
 * P(Λ ever ≥ ln 1/α | θ ≤ 0) ≤ α; and exp(−Λ_n) is one under H1, so
 * P(Λ ever ≤ ln β | θ ≥ δ) ≤ β. Stopping early, looking after every increment
 * and truncating change neither bound. α is the PR's false-alarm rate split
 * over its gated rows (Bonferroni), so the PR's rate is at most the sum.
 *
 * Robustness. An increment is clipped to δ/2 ± c·√(v_k + τ²) (Huber's clip,
 * symmetric about the midpoint of the two hypotheses, c = 2.5): one disturbed
 * start moves Λ by a bounded step in either direction, and since the clip is
 * symmetric it favours neither side (docs/gate.md shows that exp(Λ) under the
 * clip is still a supermartingale under H0 at the designs used). The clip is
 * for increments of one or two runs, where one disturbed run is the whole
 * figure; an increment that is the median of three runs or more has shrugged
 * that run off already and is not clipped. A single-run increment is
 * clipped tighter still, so that it alone moves Λ by at most a third of the
 * regression boundary: three starts must agree before a single-run sequence
 * blames anyone (3 % of point-runs land 8–20 % worse), and by then the job's
 * own spread is checked against the design.
 */

/** The design of one row's test. Log units throughout. */
export interface SequentialDesign {
  /** The change the row is designed to catch, δ > 0 (ln 1.10 = 0.0953). */
  delta: number
  /** One-sided false-alarm level of this row (the PR's α over its gated rows). */
  alpha: number
  /** Largest probability of passing a change of δ. */
  beta: number
  /** Variance every increment shares (the reference's own error), τ². */
  shared: number
  /** The row's tolerance as a log change: a regression must also beat it. */
  tolerance: number
  /** Huber's clip in σ units (Infinity: none). */
  clip: number
  /** Increments after which the row must be decided: past it the row is `undecided`. */
  maxLooks: number
}

/**
 * One engine start's measurement: the oriented log change and its own variance; `maxStep`, where
 * set, bounds the step one increment alone may move Λ (a start of one run, whose one disturbed
 * run would otherwise be a whole verdict).
 */
export interface Increment {
  x: number
  v: number
  maxStep?: number
  /** Huber's clip of this increment in σ units, where it differs from the design's (Infinity: none). */
  clip?: number
}

export type SequentialStatus = 'regression' | 'pass' | 'improvement' | 'continue' | 'undecided'

export interface SequentialOutcome {
  status: SequentialStatus
  /** Increments the decision used (the look at which a boundary was crossed, else all). */
  look: number
  /** Λ at that look, and the two boundaries ln(1/α) and ln β. */
  llr: number
  upper: number
  lower: number
  /** The estimate of θ (the increments' weighted mean, unclipped) and its standard error √(1/W + τ²), at that look. */
  mean: number
  se: number
}

/** Rounding slack of a boundary comparison (Λ units): far below any step that moves a decision. */
const TIE = 1e-9

/** Huber's clip of c σ for the row's default design: one stray start moves Λ by a bounded step. */
export const DEFAULT_CLIP = 2.5

/** Λ_n for the first n increments (clipped as the design says); W, T and the unclipped estimate of θ beside it. */
export function logLikelihoodRatio(
  incs: readonly Increment[],
  d: Pick<SequentialDesign, 'delta' | 'shared' | 'clip'>,
): { llr: number; w: number; t: number; mean: number } {
  let w = 0
  let t = 0
  let raw = 0
  for (const { x, v, maxStep, clip } of incs) {
    const half = d.delta / 2
    // Λ's step is δ(x − δ/2)/v (τ = 0): a bound on the step is a bound on |x − δ/2| of maxStep·v/δ.
    const c = Math.min((clip ?? d.clip) * Math.sqrt(v + d.shared), maxStep === undefined ? Infinity : (maxStep * v) / d.delta)
    const clipped = half + Math.min(c, Math.max(-c, x - half))
    w += 1 / v
    t += clipped / v
    raw += x / v
  }
  return { llr: (d.delta * (t - (d.delta * w) / 2)) / (1 + d.shared * w), w, t, mean: raw / w }
}

/** The boundaries ln(1/α) (regression) and ln β (pass). */
export function boundaries(d: Pick<SequentialDesign, 'alpha' | 'beta'>): { upper: number; lower: number } {
  return { upper: Math.log(1 / d.alpha), lower: Math.log(d.beta) }
}

/**
 * Walk the increments in the order they were measured and stop at the first boundary crossed.
 * `final`: no further increment will come (the job's last look, a cap reached), so a row still
 * between the boundaries is `undecided`; otherwise it is `continue` until `maxLooks`.
 */
export function decideSequential(incs: readonly Increment[], d: SequentialDesign, final = false): SequentialOutcome {
  const { upper, lower } = boundaries(d)
  let out: SequentialOutcome = { status: 'continue', look: 0, llr: 0, upper, lower, mean: 0, se: Infinity }
  for (let n = 1; n <= incs.length; n++) {
    // The estimate is the increments' own weighted mean: the clip bounds Λ's steps, not what was measured.
    const { llr, w, mean } = logLikelihoodRatio(incs.slice(0, n), d)
    out = { status: 'continue', look: n, llr, upper, lower, mean, se: Math.sqrt(1 / w + d.shared) }
    // TIE absorbs rounding: three single-run steps of a third of the boundary each reach it exactly.
    if (llr >= upper - TIE && mean > d.tolerance) return { ...out, status: 'regression' }
    if (llr <= lower + TIE) {
      // A pass whose estimate lies beyond the tolerance the other way by √(2 ln 1/α) standard errors
      // (the regression boundary's own width) is named an improvement: a label, never gated.
      const better = -mean > d.tolerance && -mean > Math.sqrt(2 * upper) * out.se
      return { ...out, status: better ? 'improvement' : 'pass' }
    }
    if (n >= d.maxLooks) return { ...out, status: 'undecided' }
  }
  return final && incs.length > 0 ? { ...out, status: 'undecided' } : out
}

/**
 * Increments a row would need, at its design, for Λ to drift from 0 to the pass boundary when
 * θ = 0 (and to the regression boundary when θ = δ): the expected cost of deciding it, in
 * increments of variance v. Infinity when the shared variance leaves too little information
 * (the row can never decide however many starts it gets: it is blind).
 */
export function incrementsToDecide(v: number, d: Pick<SequentialDesign, 'delta' | 'alpha' | 'beta' | 'shared'>): { pass: number; regression: number } {
  const { upper, lower } = boundaries(d)
  // E[Λ_n] = ±(δ²/2)·(n/v) / (1 + τ²·n/v): solve for n at each boundary.
  const need = (b: number): number => {
    const denom = (d.delta * d.delta) / 2 - b * d.shared
    return denom <= 0 ? Infinity : (b * v) / denom
  }
  return { pass: need(-lower), regression: need(upper) }
}
