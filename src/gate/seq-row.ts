/**
 * One gated row decided by the sequential test (./sequential.ts) as a
 * Decision the verdict's rows are built from (pure): the increments in the
 * order they were measured, the design the row's kind asks for (δ, its share
 * of the PR's α, β = 1 − power), the noise from the host's history
 * (./seq-noise.ts), checked against the job's own increments.
 */
import type { Decision } from './decide.js'
import { allowedDisagreements, noDecision } from './decide.js'
import { checkedVariance, type RowNoise } from './seq-noise.js'
import { decideSequential, DEFAULT_CLIP, incrementsToDecide, type Increment, type SequentialDesign } from './sequential.js'
import type { GateOptions } from './types.js'

/** The options one row's test reads. */
export type SequentialOptions = Pick<GateOptions, 'alpha' | 'alphaShare' | 'rows' | 'power' | 'look' | 'maxLooks'>

export interface SequentialRowInput {
  /** Oriented log changes (positive = worse), one per increment, in measurement order, each with its runs per start. */
  increments: ReadonlyArray<{ x: number; runs: number }>
  noise: RowNoise
  /** The change the row is designed to catch and its tolerance, fractions (0.10, 0.05). */
  design: number
  tolerance: number
  /** The reference's and the candidate's typical value, in the metric's unit (for the row's columns). */
  baseline: number | null
  candidate: number | null
  /** Which increments were measured on which look is the caller's: a note names the unit ("round", "start"). */
  unit: string
}

/** Decide one row sequentially; `undecided` in its status means "not yet" unless this is the last look. */
export function decideSequentialRow(input: SequentialRowInput, opts: SequentialOptions): Decision {
  const n = input.increments.length
  const out = noDecision(n, n, input.noise.refreshes)
  out.baseline = input.baseline
  out.candidate = input.candidate
  if (n === 0) {
    out.notes.push(`no ${input.unit} with a valid measurement on both sides`)
    return out
  }
  const alpha = (opts.alpha * opts.alphaShare) / Math.max(1, opts.rows)
  const xs = input.increments.map((i) => i.x)
  // The job's own increments against the design: a wider spread replaces it (never a narrower one).
  const runs = Math.round(input.increments.reduce((a, i) => a + i.runs, 0) / n)
  const check = input.noise.shared > 0 ? { v: input.noise.v(runs), wider: false, observed: NaN } : checkedVariance(xs, input.noise.v(runs))
  const scale = check.v / input.noise.v(runs)
  // A single run is one draw of the interference that lands 3 % of point-runs 8–20 % worse: alone it may
  // move Λ by a third of the regression boundary at most, so three starts must agree, and by the third
  // the job's own spread is checked against the design.
  const half = Math.log(1 / alpha) / 3
  // The median of three runs or more has shrugged off a disturbed run: no clip there.
  const incs: Increment[] = input.increments.map((i) => ({
    x: i.x,
    v: input.noise.v(i.runs) * scale,
    ...(i.runs <= 1 ? { maxStep: half } : {}),
    ...(i.runs >= 3 ? { clip: Infinity } : {}),
  }))
  // A row regresses only beyond its tolerance, so it is designed for at least twice that (the default 5 % → 10 %).
  const designed = Math.max(input.design, 2 * input.tolerance)
  const design: SequentialDesign = {
    delta: Math.log(1 + designed),
    alpha,
    beta: 1 - opts.power,
    shared: input.noise.shared,
    tolerance: Math.log(1 + input.tolerance),
    clip: DEFAULT_CLIP,
    maxLooks: opts.maxLooks,
  }
  const r = decideSequential(incs, design, opts.look === 'last')
  const vNow = incs.slice(0, r.look).reduce((a, i) => a + 1 / i.v, 0)
  // The boundaries as estimates: Λ = δ(W·m − δW/2)/(1 + τ²W) crosses ln(1/α) at m = δ/2 + ln(1/α)(1 + τ²W)/(δW).
  const at = (b: number): number => design.delta / 2 + (b * (1 + design.shared * vNow)) / (design.delta * vNow)
  const blind = !Number.isFinite(incrementsToDecide(check.v, design).pass)
  Object.assign(out, {
    d: r.mean,
    bar: at(r.upper),
    margin: at(r.upper) - at(r.lower),
    sigma: r.se,
    mdc: design.delta,
    blind,
    level: alpha,
    df: Infinity,
  })
  if (check.wider) {
    out.notes.push(
      `this job's ${input.unit}s spread wider (σ ${(Math.sqrt(check.observed) * 100).toFixed(1)} %) than the host's history allows (${(Math.sqrt(input.noise.v(runs)) * 100).toFixed(1)} %): decided with their own upper bound`,
    )
  }
  const where = `Λ ${r.llr.toFixed(2)} at ${input.unit} ${r.look}`
  if (r.status === 'regression') {
    out.notes.push(`${where} crossed the regression boundary ln(1/α) = ${r.upper.toFixed(2)}`)
    return { ...out, status: 'regression' }
  }
  if (r.status === 'pass' || r.status === 'improvement') {
    out.notes.push(`${where} crossed the pass boundary ln β = ${r.lower.toFixed(2)}: a change of ${(designed * 100).toFixed(0)} % is ruled out`)
    return { ...out, status: r.status }
  }
  if (blind) {
    out.notes.push(
      `blind: the reference's own uncertainty (σ ${(Math.sqrt(design.shared) * 100).toFixed(1)} %) leaves too little information to rule out ${(designed * 100).toFixed(0)} % however many ${input.unit}s follow; engine starts of both sides (a serve command) would give it power`,
    )
  } else if (r.status === 'undecided') {
    out.notes.push(`${where} is between the boundaries ${r.lower.toFixed(2)} and ${r.upper.toFixed(2)} after the last ${input.unit} allowed`)
  } else {
    out.notes.push(`${where} is between the boundaries ${r.lower.toFixed(2)} and ${r.upper.toFixed(2)}: more ${input.unit}s needed`)
  }
  return { ...out, status: 'undecided', blind }
}

/**
 * A row whose values are zero on some side (throughput at an unreachable target has no log):
 * decided by agreement, without statistics. Null when no value is zero.
 */
export function decideAtZeros(pairs: ReadonlyArray<readonly [number, number]>, higherIsBetter: boolean, history: number): Decision | null {
  const n = pairs.length
  const zerosA = pairs.filter(([a]) => !(a > 0)).length
  const zerosB = pairs.filter(([, b]) => !(b > 0)).length
  if (zerosA === 0 && zerosB === 0) return null
  const base = noDecision(n, n, history)
  base.baseline = zerosA === n ? 0 : null
  base.candidate = zerosB === n ? 0 : null
  if (zerosA === n && zerosB === n) {
    base.notes.push('zero on both sides (the target is unreachable for A and for B)')
    return { ...base, status: 'pass' }
  }
  const candidateZero = zerosB >= n - allowedDisagreements(n) && zerosA <= allowedDisagreements(n)
  const referenceZero = zerosA >= n - allowedDisagreements(n) && zerosB <= allowedDisagreements(n)
  if (candidateZero || referenceZero) {
    base.notes.push(candidateZero ? 'B dropped to zero' : 'B rose from zero')
    return { ...base, status: candidateZero === higherIsBetter ? 'regression' : 'improvement' }
  }
  base.notes.push(`zeros in ${zerosA} A and ${zerosB} B ${n === 1 ? 'pair' : 'pairs'} of ${n}`)
  return { ...base, status: 'undecided' }
}
