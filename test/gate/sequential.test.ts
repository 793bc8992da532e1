import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { boundaries, decideSequential, DEFAULT_CLIP, incrementsToDecide, logLikelihoodRatio, type SequentialDesign } from '../../src/gate/sequential.js'
import { checkedVariance, rowNoise, safetyFactor } from '../../src/gate/seq-noise.js'
import { estimateNoise } from '../../src/gate/noise.js'
import { DEFAULT_GATE_OPTIONS } from '../../src/gate/options.js'
import { varMedianFactor } from '../../src/gate/stats.js'
import { createRng } from '../../src/util/rng.js'

const DELTA = Math.log(1.1)
const design = (over: Partial<SequentialDesign> = {}): SequentialDesign => ({
  delta: DELTA,
  alpha: 0.01 / 4,
  beta: 0.1,
  shared: 0,
  tolerance: Math.log(1.05),
  clip: DEFAULT_CLIP,
  maxLooks: 32,
  ...over,
})
const inc = (x: number, v = 0.05 ** 2) => ({ x, v })

describe('the sequential test of one row', () => {
  it('uses the boundaries of Ville’s inequality: ln(1/α) to call a regression, ln β to pass', () => {
    expect(boundaries({ alpha: 0.0025, beta: 0.1 })).toEqual({ upper: Math.log(400), lower: Math.log(0.1) })
  })

  it('computes Λ = δ(T − δW/2)/(1 + τ²W) over the increments', () => {
    const incs = [inc(0.03, 0.0025), inc(0.05, 0.0016)]
    const w = 1 / 0.0025 + 1 / 0.0016
    const t = 0.03 / 0.0025 + 0.05 / 0.0016
    expect(logLikelihoodRatio(incs, { delta: DELTA, shared: 0, clip: Infinity }).llr).toBeCloseTo(DELTA * (t - (DELTA * w) / 2), 10)
    expect(logLikelihoodRatio(incs, { delta: DELTA, shared: 0.0004, clip: Infinity }).llr).toBeCloseTo((DELTA * (t - (DELTA * w) / 2)) / (1 + 0.0004 * w), 10)
  })

  it('stops at the first look whose evidence crosses a boundary, both ways', () => {
    // σ 5 %: each increment at +12 % adds δ(x − δ/2)/v ≈ 2.75 to Λ; ln(400) ≈ 6.0 is crossed at the third.
    const up = decideSequential([inc(0.12), inc(0.12), inc(0.12), inc(0.12)], design())
    expect(up).toMatchObject({ status: 'regression', look: 3 })
    // Unchanged increments at 0 add −δ²/(2v) ≈ −1.82: ln 0.1 ≈ −2.30 is crossed at the second.
    const down = decideSequential([inc(0), inc(0), inc(0), inc(0)], design())
    expect(down).toMatchObject({ status: 'pass', look: 2 })
    // Later increments do not revise a decision taken: the path stopped where it crossed.
    expect(decideSequential([inc(0), inc(0), inc(0.5), inc(0.5)], design())).toMatchObject({ status: 'pass', look: 2 })
  })

  it('keeps a row open between the boundaries, and calls it undecided at its last look', () => {
    const mid = [inc(0.048)]
    expect(decideSequential(mid, design()).status).toBe('continue')
    expect(decideSequential(mid, design(), true).status).toBe('undecided')
    expect(decideSequential(mid, design({ maxLooks: 1 })).status).toBe('undecided')
  })

  it('names an improvement only when the mirror test calls it and it beats the tolerance', () => {
    expect(decideSequential([inc(-0.2), inc(-0.2)], design())).toMatchObject({ status: 'improvement', look: 1 })
    expect(decideSequential([inc(-0.12), inc(-0.12)], design())).toMatchObject({ status: 'pass', look: 1 })
    expect(decideSequential([inc(-0.02), inc(-0.02)], design()).status).toBe('pass')
  })

  it('never calls a regression smaller than the tolerance, however sure the evidence', () => {
    // Tiny noise: Λ crosses ln(1/α) at once, but the change (+4 %) is within the 5 % tolerance.
    const tight = Array.from({ length: 6 }, () => inc(0.04, 1e-6))
    expect(decideSequential(tight, design({ delta: 0.05 })).status).not.toBe('regression')
  })

  it('clips a stray increment symmetrically about δ/2: a disturbed round moves Λ a bounded step either way', () => {
    const d = design()
    const c = DEFAULT_CLIP * 0.05
    const huge = logLikelihoodRatio([inc(0.9)], d).llr
    const atClip = logLikelihoodRatio([inc(DELTA / 2 + c)], d).llr
    expect(huge).toBeCloseTo(atClip, 10)
    expect(logLikelihoodRatio([inc(-0.9)], d).llr).toBeCloseTo(-atClip, 10)
  })

  it('keeps exp(Λ) a supermartingale under H0 with the clip, at every δ/σ a row can have and any clip width (numerical integral)', () => {
    // Per increment in σ units: z = (x − δ/2)/σ ~ N(−r/2, 1) under H0, clipped to ±c; E[exp(r·z)] ≤ 1.
    const phi = (z: number): number => Math.exp(-(z * z) / 2) / Math.sqrt(2 * Math.PI)
    for (const c of [0.25, 1, DEFAULT_CLIP, 4])
      for (const r of [0.25, 0.5, 1, 2, 3, 4, 6]) {
        let e = 0
        const h = 0.002
        for (let z = -12; z < 12; z += h) e += Math.exp(r * Math.min(c, Math.max(-c, z))) * phi(z + r / 2) * h
        expect(e).toBeLessThanOrEqual(1 + 1e-6)
      }
  })

  it('lets one single-run increment move Λ by its bound at most, however far out it lies', () => {
    const d = design()
    const alone = logLikelihoodRatio([{ x: 0.9, v: 0.02 ** 2, maxStep: 3 }], d).llr
    expect(alone).toBeCloseTo(3, 10)
    expect(decideSequential([{ x: 0.9, v: 0.02 ** 2, maxStep: 3 }], d).status).toBe('continue')
    // A second start that agrees completes the call.
    expect(
      decideSequential(
        [0.9, 0.9].map((x) => ({ x, v: 0.02 ** 2, maxStep: 3 })),
        d,
      ).status,
    ).toBe('regression')
  })

  it('calls a regression on three single-run starts of a third of the boundary each, which reach it only up to rounding', () => {
    // One gated row at 1 %, σ 5 %: three steps of ln(1/α)/3 sum to a rounding error short of ln(1/α).
    const d = design({ alpha: 0.01 })
    const third = boundaries(d).upper / 3
    const three = [0.7, 0.7, 0.7].map((x) => ({ x, v: 0.05 ** 2, maxStep: third }))
    expect(logLikelihoodRatio(three, d).llr).toBeLessThan(boundaries(d).upper)
    expect(decideSequential(three.slice(0, 2), d).status).toBe('continue')
    const out = decideSequential(three, d)
    expect(out.llr).toBeCloseTo(boundaries(d).upper, 9)
    expect(out.status).toBe('regression')
  })

  it('holds its false-alarm level and its power on Gaussian increments (seeded Monte Carlo, 4000 rows each)', () => {
    const rng = createRng(7)
    const sigma = 0.05
    const trial = (theta: number): string => {
      const incs = []
      for (let k = 0; k < 32; k++) {
        incs.push(inc(theta + sigma * rng.normal(), sigma ** 2))
        const r = decideSequential(incs, design({ alpha: 0.01 }))
        if (r.status !== 'continue') return r.status
      }
      return 'open'
    }
    const count = (theta: number, status: string): number => Array.from({ length: 4000 }, () => trial(theta)).filter((s) => s === status).length / 4000
    expect(count(0, 'regression')).toBeLessThanOrEqual(0.01)
    expect(count(DELTA, 'pass')).toBeLessThanOrEqual(0.1)
  })

  it('says how many increments a row needs, and that a shared variance too large leaves it blind', () => {
    const d = design()
    const v = 0.05 ** 2
    const { pass, regression } = incrementsToDecide(v, d)
    expect(pass).toBeCloseTo((Math.log(10) * v) / (DELTA ** 2 / 2), 10)
    expect(regression).toBeCloseTo((Math.log(400) * v) / (DELTA ** 2 / 2), 10)
    expect(incrementsToDecide(v, { ...d, shared: 0.05 ** 2 }).pass).toBe(Infinity)
    expect(incrementsToDecide(v, { ...d, shared: 0.04 ** 2 }).pass).toBeLessThan(Infinity)
  })

  it('property: Λ is monotone in every increment, so a worse candidate never looks better', () => {
    fc.assert(
      fc.property(
        fc.array(fc.double({ min: -0.5, max: 0.5, noNaN: true }), { minLength: 1, maxLength: 8 }),
        fc.double({ min: 0, max: 0.2, noNaN: true }),
        (xs, bump) => {
          const d = design()
          const a = logLikelihoodRatio(
            xs.map((x) => inc(x)),
            d,
          ).llr
          const b = logLikelihoodRatio(
            xs.map((x, i) => inc(i === 0 ? x + bump : x)),
            d,
          ).llr
          return b >= a - 1e-12
        },
      ),
    )
  })
})

describe('the design noise from the host’s history', () => {
  const opts = DEFAULT_GATE_OPTIONS
  // Ten refreshes of three runs: run noise 2 %, starts 3 % apart.
  const rng = createRng(3)
  const history = Array.from({ length: 10 }, () => {
    const start = 0.03 * rng.normal()
    return Array.from({ length: 3 }, () => Math.log(20) + start + 0.02 * rng.normal())
  })

  const est = estimateNoise(history, [], opts)
  const day2 = est.day2 * safetyFactor(est.dayDf)
  const within2 = est.within2 * safetyFactor(est.withinDf)

  it('takes each component at its upper 90 % bound: about ×1.1 on σ at 100 degrees of freedom, ×1.2 for a history that leans on the priors', () => {
    expect(Math.sqrt(safetyFactor(100))).toBeCloseTo(1.1, 1)
    expect(Math.sqrt(safetyFactor(6))).toBeCloseTo(1.2, 1)
    expect(safetyFactor(6)).toBe(safetyFactor(30))
    expect(safetyFactor(Infinity)).toBe(1)
  })

  it('gives an A/B round of fresh starts 2(σ²_day + σ²_w) at their bounds and nothing shared', () => {
    const n = rowNoise(history, { kind: 'ab', restarted: { A: true, B: true } }, opts)
    expect(n.shared).toBe(0)
    expect(n.v(1)).toBeCloseTo(2 * (day2 + within2), 12)
  })

  it('moves a never-restarted side’s start offset into the shared variance', () => {
    const n = rowNoise(history, { kind: 'ab', restarted: { A: false, B: false } }, opts)
    expect(n.shared).toBeCloseTo(2 * day2, 12)
    expect(n.v(1)).toBeCloseTo(2 * within2, 12)
  })

  it('gives a candidate start of n runs against the stored centre σ²_day + V(n)σ²_w, the centre’s variance shared', () => {
    const n = rowNoise(history, { kind: 'baseline' }, opts)
    expect(n.v(3)).toBeCloseTo(day2 + varMedianFactor(3) * within2, 12)
    expect(n.shared).toBeCloseTo(varMedianFactor(10) * (day2 + varMedianFactor(3) * within2), 12)
  })

  it('falls back to the priors with no history', () => {
    const n = rowNoise([], { kind: 'ab', restarted: { A: true, B: true } }, opts)
    expect(n.day2).toBeCloseTo(opts.dayFloor ** 2, 12)
    expect(n.within2).toBeCloseTo(opts.withinFloor ** 2, 12)
  })

  it('widens the design to the job’s own upper bound when its increments disagree, and never narrows it', () => {
    const wild = [0.2, -0.2, 0.25, -0.15, 0.3, -0.25]
    const c = checkedVariance(wild, 0.05 ** 2)
    expect(c.wider).toBe(true)
    expect(c.v).toBeGreaterThan(c.observed)
    const calm = checkedVariance([0.001, -0.001, 0.002, 0], 0.05 ** 2)
    expect(calm).toMatchObject({ wider: false, v: 0.05 ** 2 })
    expect(checkedVariance([0.3, -0.3], 0.0001)).toMatchObject({ wider: false, v: 0.0001 })
  })
})
