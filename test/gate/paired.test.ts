import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { compareAB } from '../../src/gate/ab-verdict.js'
import { DEFAULT_GATE_OPTIONS } from '../../src/gate/options.js'
import { decidePaired, pairUp, PRIOR_DF, sharedStartVariance } from '../../src/gate/paired.js'
import { MIN_AB_ROUNDS as MIN_ROUNDS, startsByRound } from '../../src/plan/ab-schedule.js'
import { tQuantile } from '../../src/gate/stats.js'
import { pipelineResult, wiggle } from './fixtures.js'
import { createRng } from '../../src/util/rng.js'

const OPTS = DEFAULT_GATE_OPTIONS
/** The √2 · withinFloor prior of σ_pair², log units. */
const PAIR_PRIOR2 = 2 * OPTS.withinFloor ** 2
/** Sample variance of the pair differences (log, B over A, latency) about D. */
const pairVar = (pairs: Array<[number, number]>, d: number): number => pairs.reduce((a, [x, y]) => a + (Math.log(y / x) - d) ** 2, 0) / (pairs.length - 1)
const latency = (pairs: Array<[number, number]>, rounds?: number[]) => decidePaired({ pairs, rounds, higherIsBetter: false, tolerance: 0.05 }, OPTS)

/**
 * Rounds of an A/B on a host whose speed is `host(slot)` (× on latency) at slot 0, 1, 2, …: even
 * rounds run A then B, odd rounds B then A; B's engine adds `engine(slot)` on top.
 */
function job(rounds: number, host: (slot: number) => number, engine: (slot: number) => number = () => 1): Array<[number, number]> {
  return Array.from({ length: rounds }, (_, r) => {
    const [slotA, slotB] = r % 2 === 0 ? [2 * r, 2 * r + 1] : [2 * r + 1, 2 * r]
    return [20 * host(slotA), 20 * host(slotB) * engine(slotB)]
  })
}

describe('decidePaired: one metric from A/B slot pairs', () => {
  it('calls a 10 % slower B a regression when every pair agrees', () => {
    const pairs: Array<[number, number]> = [
      [20, 22.1],
      [20.4, 22.3],
      [19.8, 21.9],
      [20.1, 22.0],
    ]
    const d = latency(pairs)
    expect(d.status).toBe('regression')
    expect(d.d!).toBeCloseTo(Math.log(1.0975), 2)
    expect(d.bar!).toBeGreaterThanOrEqual(Math.log(1.05))
  })

  it('passes B = A up to run noise', () => {
    expect(
      latency([
        [20, 20.2],
        [20.4, 20.1],
        [19.8, 19.9],
        [20.1, 20.3],
      ]).status,
    ).toBe('pass')
  })

  it('does not call a regression when two pairs of nine disagree, however large the others', () => {
    // Nine pairs tolerate one dissenter; two are too many, however far the other seven are.
    // (With four pairs no dissenter is tolerated, but one dissenting pair among three at +50 % spreads
    // the pairs so widely that D, +35 %, stays below the t bar at 3 df, +60 %: blind, so undecided.
    // Spread so far above the prior, the prior's 4 df have faded to 4 · (prior² / s²)², about 0.001.)
    const four: Array<[number, number]> = [
      [20, 30],
      [20, 19.8],
      [20, 30],
      [20, 30],
    ]
    const wide = latency(four)
    expect(wide).toMatchObject({ status: 'undecided', blind: true })
    expect(wide.df).toBeCloseTo(3 + PRIOR_DF * (PAIR_PRIOR2 / pairVar(four, wide.d!)) ** 2, 12)
    expect(wide.df! - 3).toBeLessThan(0.002)
    const d = latency(Array.from({ length: 9 }, (_, i): [number, number] => [20, i === 2 || i === 5 ? 19.9 : 30]))
    expect(d.d!).toBeGreaterThan(d.bar!)
    expect(d.status).toBe('undecided')
    expect(d.notes).toEqual(['only 7 of 9 pairs have B worse than A'])
    // Ten pairs tolerate two: the same seven-to-two split plus one more agreeing pair is a regression.
    expect(latency(Array.from({ length: 10 }, (_, i): [number, number] => [20, i === 2 || i === 5 ? 19.9 : 30])).status).toBe('regression')
  })

  it('orients throughput: lower B is worse', () => {
    const d = decidePaired(
      {
        pairs: [
          [1000, 880],
          [990, 870],
          [1010, 890],
        ],
        higherIsBetter: true,
        tolerance: 0.05,
      },
      OPTS,
    )
    expect(d.status).toBe('regression')
    expect(
      decidePaired(
        {
          pairs: [
            [1000, 1200],
            [990, 1190],
            [1010, 1215],
          ],
          higherIsBetter: true,
          tolerance: 0.05,
        },
        OPTS,
      ).status,
    ).toBe('improvement')
  })

  it('cancels a host that drifts linearly over the job: A and B both +1 %/slot, B unchanged, pass', () => {
    for (const rounds of [4, 6, 8]) {
      const d = latency(job(rounds, (slot) => 1 + 0.01 * slot))
      expect(d.status).toBe('pass')
      // AB rounds see B one slot later (+1 %), BA rounds one slot earlier: equal weights cancel them.
      expect(Math.abs(d.d!)).toBeLessThan(1e-3)
    }
  })

  it('cancels a step of the host halfway through the job: B unchanged, pass', () => {
    for (const rounds of [4, 6, 8]) {
      const d = latency(job(rounds, (slot) => (slot >= rounds ? 1.1 : 1)))
      expect(d.status).toBe('pass')
      expect(d.d).toBe(0)
    }
  })

  it('keeps D unbiased under linear drift when a round drops out, given the rounds the pairs came from', () => {
    const full = job(8, (slot) => 1 + 0.01 * slot)
    for (const drop of [1, 2, 3, 6]) {
      const kept = full.filter((_, i) => i !== drop)
      const rounds = full.map((_, i) => i).filter((i) => i !== drop)
      const withRounds = latency(kept, rounds)
      const withoutRounds = latency(kept)
      expect(withRounds.status).toBe('pass')
      // With its rounds each pair keeps its order (AB or BA) and the orders weigh equally: D stays at the
      // ~0 of the full job. Numbered 0, 1, 2, … instead, the pairs after the gap change order and D drifts.
      expect(Math.abs(withRounds.d!)).toBeLessThan(2e-4)
      expect(Math.abs(withoutRounds.d!)).toBeGreaterThan(5 * Math.abs(withRounds.d!))
    }
  })

  it('finds B drifting away from A (worse by 1 % more each slot): the mean gap is what it decides', () => {
    // Not a host drift, which moves A and B alike and cancels, but B's own degradation (a leak, a
    // growing cache): D is B's mean excess over the job, about 0.5 % per slot × the mean slot.
    // Four rounds (slots 0–7): mean gap +3.5 %, inside the 5 % tolerance — pass.
    const four = latency(
      job(
        4,
        (slot) => 1 + 0.01 * slot,
        (slot) => 1 + 0.01 * slot,
      ),
    )
    expect(four.status).toBe('pass')
    expect(four.d!).toBeCloseTo(0.0343, 3)
    // Eight rounds (slots 0–15): mean gap +7.4 %, every pair B worse — regression.
    const eight = latency(
      job(
        8,
        (slot) => 1 + 0.01 * slot,
        (slot) => 1 + 0.01 * slot,
      ),
    )
    expect(eight.status).toBe('regression')
    expect(eight.d!).toBeCloseTo(0.0715, 3)
  })

  it('judges fewer than MIN_ROUNDS pairs on the prior: one pair is blind, two or three decide', () => {
    expect(MIN_ROUNDS).toBe(4)
    const unchanged = (n: number) => latency(Array.from({ length: n }, (_, i): [number, number] => [20, 20 * (1 + 0.002 * i)]))
    const slower = (n: number) => latency(Array.from({ length: n }, (): [number, number] => [20, 24]))
    // One pair: no spread of its own, the √2 · 2 % prior at 4 df gives an MDC of 16.1 %: blind, undecided.
    expect(unchanged(1)).toMatchObject({ status: 'undecided', blind: true, df: PRIOR_DF })
    expect(unchanged(1).notes).toEqual([
      'blind: the smallest change one pair would catch 90 % of the time is 16.1 %, more than 15 %; more rounds would give it power',
    ])
    // A +20 % B clears even that bar, with every pair agreeing.
    expect(slower(1).status).toBe('regression')
    for (const n of [2, 3]) {
      expect(unchanged(n)).toMatchObject({ status: 'pass', blind: false, df: n - 1 + PRIOR_DF })
      expect(slower(n).status).toBe('regression')
    }
  })

  it("sets the bar from t at the pairs' degrees of freedom: n − 1, plus the prior's, whose share fades once the pairs spread more than it", () => {
    // B 3 % slower in seven pairs (inside the 5 % tolerance) and 12 % in one: that slot widens the
    // spread just past the prior, yet stays within 3 × the prior pair noise of the others, so it is
    // no stray and stays in (a 25 % one would be left out: see below). Above the prior its 4 df are
    // not dropped at once but fade with (prior² / s²)².
    const pairs = Array.from({ length: 8 }, (_, i): [number, number] => [20, 20 * (i === 3 ? 1.12 : 1.03)])
    const disturbed = latency(pairs)
    expect(disturbed.status).toBe('pass')
    expect(disturbed.notes).toEqual([])
    const s2 = pairVar(pairs, disturbed.d!)
    expect(s2).toBeGreaterThan(PAIR_PRIOR2)
    expect(disturbed.df).toBeCloseTo(7 + PRIOR_DF * (PAIR_PRIOR2 / s2) ** 2, 12)
    expect(disturbed.df!).toBeGreaterThan(7)
    expect(disturbed.df!).toBeLessThan(7 + PRIOR_DF)
    expect(disturbed.bar).toBeCloseTo(Math.max(Math.log(1.05), tQuantile(1 - 0.01, disturbed.df!) * disturbed.sigma!), 12)
    // Pairs quieter than the prior borrow its 4 df.
    const quiet = latency([
      [20, 20.2],
      [20.4, 20.1],
      [19.8, 19.9],
      [20.1, 20.3],
    ])
    expect(quiet.df).toBe(3 + PRIOR_DF)
  })

  it("has no step in the degrees of freedom or the bar where the pairs' spread crosses the prior", () => {
    // Four pairs B/A = e^{±a}, alternating with the rounds: D = 0 and s² = 4a²/3, set just below and just above the prior.
    const at = (ratio: number) => {
      const a = Math.sqrt((3 / 4) * PAIR_PRIOR2 * ratio)
      return latency([0, 1, 2, 3].map((i): [number, number] => [20, 20 * Math.exp(i % 2 === 0 ? a : -a)]))
    }
    const below = at(0.999)
    const above = at(1.001)
    expect(below.d).toBeCloseTo(0, 12)
    expect(below.df).toBe(3 + PRIOR_DF)
    expect(above.df).toBeCloseTo(3 + PRIOR_DF / 1.001 ** 2, 12)
    expect(below.df! - above.df!).toBeLessThan(0.01)
    expect(Math.abs(above.bar! - below.bar!) / below.bar!).toBeLessThan(0.002)
  })

  it('from five pairs on, leaves a pair beyond 3 robust σ of the others out of D, the spread and the agreement count', () => {
    // Seven pairs B 3 % slower, wiggling ±0.3 %, and one slot on a disturbed node at +25 %.
    const w = [1, 1.003, 0.998, 1.002, 0.997, 1.001, 0.999, 1.0025]
    const pairs = w.map((x, i): [number, number] => [20, 20 * (i === 3 ? 1.25 : 1.03 * x)])
    const d = latency(pairs)
    expect(d.notes).toEqual(['1 of 8 pairs left out as outliers (beyond 3 robust σ of the others)'])
    // D is the seven kept pairs' (+3 %), and their spread, quieter than the prior, borrows its 4 df: 6 + 4.
    expect(Math.exp(d.d!) - 1).toBeCloseTo(0.03, 3)
    expect(d.df).toBe(6 + PRIOR_DF)
    expect(d).toMatchObject({ status: 'pass', blind: false })
    // Below five pairs nothing is left out: the same slot among four pairs spreads them past the prior, blind.
    const few = latency(pairs.slice(0, 4))
    expect(few.notes.some((n) => n.includes('left out'))).toBe(false)
    expect(few).toMatchObject({ status: 'undecided', blind: true })
    // A far dissenter the other way (B much better in one slot: A's slot was the disturbed one) is kept:
    // it only makes a regression harder to call, so four of five pairs at +12 % stay undecided, blind.
    const dissent = latency(w.slice(0, 5).map((x, i): [number, number] => [20, 20 * (i === 2 ? 0.7 : 1.12 * x)]))
    expect(dissent.notes.some((n) => n.includes('left out'))).toBe(false)
    expect(dissent).toMatchObject({ status: 'undecided', blind: true })
  })

  it('decides zeros by agreement and never prints a non-finite figure', () => {
    const tput = (pairs: Array<[number, number]>) => decidePaired({ pairs, higherIsBetter: true, tolerance: 0.05 }, OPTS)
    expect(
      tput([
        [0, 0],
        [0, 0],
        [0, 0],
      ]).status,
    ).toBe('pass')
    expect(
      tput([
        [100, 0],
        [100, 0],
        [100, 0],
      ]).status,
    ).toBe('regression')
    expect(
      tput([
        [0, 100],
        [0, 100],
        [0, 100],
      ]).status,
    ).toBe('improvement')
    expect(
      tput([
        [100, 0],
        [100, 100],
        [0, 100],
      ]).status,
    ).toBe('undecided')
    expect(tput([]).status).toBe('missing')
  })

  it('property: any finite positive pairs give a finite decision and never a regression when B ≤ A everywhere', () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.double({ min: 0.1, max: 1e4, noNaN: true }), fc.double({ min: 0.1, max: 1e4, noNaN: true })), { minLength: 1, maxLength: 12 }),
        (raw) => {
          const d = latency(raw.map(([a, b]) => [a, b]))
          for (const x of [d.d, d.bar, d.sigma, d.mdc, d.baseline, d.candidate]) expect(x === null || Number.isFinite(x)).toBe(true)
          const better = latency(raw.map(([a, b]) => [Math.max(a, b), Math.min(a, b)]))
          expect(better.status).not.toBe('regression')
        },
      ),
      { numRuns: 300 },
    )
  })
})

describe('pairUp', () => {
  it('pairs the repeats valid on both sides, in repeat order', () => {
    const run = (repeat: number, value: number | null, valid = true) => ({ repeat, value, valid, codes: [], failedShare: 0, failed: 0, completed: 12 })
    expect(pairUp([run(1, 10), run(2, 11), run(3, 12, false)], [run(3, 13), run(2, 14), run(1, null)])).toEqual({ pairs: [[11, 14]], rounds: [2] })
    // The rounds are the repeats, so a dropped round keeps the order of those after it.
    expect(pairUp([run(0, 10), run(1, 11), run(2, 12), run(3, 13)], [run(3, 23), run(0, 20), run(2, 22)])).toEqual({
      pairs: [
        [10, 20],
        [12, 22],
        [13, 23],
      ],
      rounds: [0, 2, 3],
    })
  })
})

describe('compareAB on results built by the pipeline', () => {
  // Slot r of A and of B are repeat r of each side's result; the host differs by `day` drift
  // from one round to the next but the same for A and B within a round.
  const side = (factor: number, roundDrift: number[]) =>
    pipelineResult({
      concurrency: [1, 4, 16],
      repeats: roundDrift.length,
      itl: (c, r) => wiggle(({ 1: 10, 4: 20, 16: 80 } as Record<number, number>)[c]!, 0, r) * roundDrift[r]! * factor,
    })
  const drift = [1, 1.04, 0.97, 1.05]

  it('finds a 10 % slowdown of B under 5 % round-to-round host drift', () => {
    const v = compareAB(side(1, drift), side(1.1, drift))
    expect(v.verdict).toBe('regression')
    expect(v.regressions).toEqual(expect.arrayContaining([expect.stringMatching(/^p95 ITL /)]))
  })

  it('passes A = B under the same drift', () => {
    expect(compareAB(side(1, drift), side(1, drift)).verdict).toBe('pass')
  })

  it('keeps the blame rules of the baseline gate: a B with failed requests beyond the budget is broken', () => {
    const broken = pipelineResult({
      concurrency: [1, 4, 16],
      repeats: 4,
      itl: (c) => (({ 1: 10, 4: 20, 16: 80 }) as Record<number, number>)[c]!,
      run: () => ({ failed: 3 }),
    })
    expect(compareAB(side(1, drift), broken).verdict).toBe('broken')
  })

  it('calls the verdict unmeasured and names A when the reference fails its requests, whatever B did', () => {
    const brokenA = pipelineResult({
      concurrency: [1, 4, 16],
      repeats: 4,
      itl: (c) => (({ 1: 10, 4: 20, 16: 80 }) as Record<number, number>)[c]!,
      run: () => ({ failed: 3 }),
    })
    const v = compareAB(brokenA, side(1.5, drift))
    expect(v.verdict).toBe('unmeasured')
    expect(v.reasons[0]).toMatch(
      /^unmeasured: the reference A broke or was spoiled, so B could not be measured against it: A's run 0 at 64x16@c1: 3 requests failed \(http_status ×3\), requests_failed/,
    )
    expect(v.regressions).toEqual([])
  })
})

describe('engine starts shared by neighbouring slots (an exclusive job)', () => {
  // 12 rounds, each side restarted around its slots (A B B A A B …): startsByRound says which start
  // measured each round. Every start draws an offset; every slot a little run noise.
  const rounds = 12
  const ids = startsByRound(rounds, 'exclusive')
  const starts = Array.from({ length: rounds }, (_, r) => [ids.A[r]!, ids.B[r]!] as const)
  const slotNoise = [
    0.004, -0.003, 0.002, -0.004, 0.003, -0.002, 0.001, -0.001, 0.004, -0.004, 0.002, -0.002, 0.003, -0.003, 0.001, -0.001, 0.002, -0.002, 0.004, -0.004, 0.001,
    -0.003, 0.003, -0.001,
  ]
  const offsetsA = [0.03, -0.035, 0.04, -0.03, 0.025, -0.04, 0.035]
  const offsetsB = [-0.03, 0.035, -0.025, 0.04, -0.035, 0.03, 0.02]
  const pairsWith = (scale: number): Array<[number, number]> =>
    Array.from({ length: rounds }, (_, r) => [
      20 * Math.exp(scale * offsetsA[ids.A[r]!]! + slotNoise[2 * r]!),
      20 * Math.exp(scale * offsetsB[ids.B[r]!]! + slotNoise[2 * r + 1]!),
    ])
  const decide = (pairs: Array<[number, number]>, withStarts: boolean) =>
    decidePaired({ pairs, rounds: pairs.map((_, r) => r + 1), ...(withStarts ? { starts } : {}), higherIsBetter: false, tolerance: 0.05 }, OPTS)

  it('maps rounds to starts: A starts for slot 1, then for slots 4–5, …; B for slots 2–3, …', () => {
    expect(ids.A.slice(0, 5)).toEqual([0, 1, 1, 2, 2])
    expect(ids.B.slice(0, 5)).toEqual([0, 0, 1, 1, 2])
    expect(startsByRound(4, 'resident')).toEqual({ A: [0, 0, 0, 0], B: [0, 0, 0, 0] })
  })

  it('widens σ to the spread D really has when starts scatter 3 % (the pairs alone understate it), with the same D', () => {
    // 400 seeded jobs: offsets N(0, 3 %) per start, run noise N(0, 2 %) per slot, B = A.
    const rng = createRng(7)
    let d2 = 0
    let plain2 = 0
    let shared2 = 0
    const jobs = 400
    for (let t = 0; t < jobs; t++) {
      const oA = Array.from({ length: 8 }, () => 0.03 * rng.normal())
      const oB = Array.from({ length: 8 }, () => 0.03 * rng.normal())
      const pairs = Array.from(
        { length: rounds },
        (_, r) => [20 * Math.exp(oA[ids.A[r]!]! + 0.02 * rng.normal()), 20 * Math.exp(oB[ids.B[r]!]! + 0.02 * rng.normal())] as [number, number],
      )
      const plain = decide(pairs, false)
      const shared = decide(pairs, true)
      expect(shared.d).toBeCloseTo(plain.d!, 12)
      expect(shared.df!).toBeLessThanOrEqual(plain.df! + 1e-9)
      d2 += plain.d! ** 2
      plain2 += plain.sigma! ** 2
      shared2 += shared.sigma! ** 2
    }
    const actual = Math.sqrt(d2 / jobs)
    expect(Math.sqrt(plain2 / jobs)).toBeLessThan(0.8 * actual)
    expect(Math.sqrt(shared2 / jobs)).toBeGreaterThan(0.85 * actual)
  })

  it('adds nothing without start offsets: only run noise, σ as the pairs show it', () => {
    const pairs = pairsWith(0)
    const v = decide(pairs, true)
    const extra = sharedStartVariance(
      pairs.map((_, i) => i),
      pairs.map(([a, b]) => Math.log(b / a)),
      starts,
      pairs.map((_, r) => r + 1),
      1,
    )!
    expect(extra.sigmaU2).toBeLessThan(1e-4)
    expect(v.sigma!).toBeCloseTo(decide(pairs, false).sigma!, 2)
  })

  it("is null for a resident job (one start a side): nothing separates the engines' offsets from B's change", () => {
    const resident = Array.from({ length: rounds }, () => [0, 0] as const)
    expect(sharedStartVariance([0, 1, 2, 3], [0.01, 0.02, 0, 0.01], resident, [1, 2, 3, 4], 1)).toBeNull()
  })

  it('property: never narrows σ, and keeps it within the pair variance on every shared pair', () => {
    fc.assert(
      fc.property(fc.array(fc.double({ min: -0.05, max: 0.05, noNaN: true }), { minLength: rounds * 2, maxLength: rounds * 2 }), (noise) => {
        const pairs = Array.from({ length: rounds }, (_, r) => [20 * Math.exp(noise[2 * r]!), 20 * Math.exp(noise[2 * r + 1]!)] as [number, number])
        const a = decide(pairs, false)
        const b = decide(pairs, true)
        expect(b.sigma!).toBeGreaterThanOrEqual(a.sigma! - 1e-12)
        expect(Number.isFinite(b.bar!)).toBe(true)
      }),
      { numRuns: 200 },
    )
  })
})
