import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { compareAB } from '../../src/gate/ab-verdict.js'
import { DEFAULT_GATE_OPTIONS } from '../../src/gate/options.js'
import { decidePaired, pairUp } from '../../src/gate/paired.js'
import { pipelineResult, wiggle } from './fixtures.js'

const FRESH = { A: true, B: true }
/** The options of a job's look: `last` at its last round (maxLooks), else an interim look. */
const look = (rounds: number, maxLooks = rounds) => ({ ...DEFAULT_GATE_OPTIONS, maxLooks, look: rounds >= maxLooks ? ('last' as const) : ('screen' as const) })
const latency = (pairs: Array<[number, number]>, maxLooks = pairs.length, restarted = FRESH) =>
  decidePaired({ pairs, restarted, history: [], higherIsBetter: false, tolerance: 0.05, design: 0.1 }, look(pairs.length, maxLooks))

describe('decidePaired: one metric from A/B rounds, decided sequentially', () => {
  it('calls a 10 % slower B a regression, naming the boundary and the round it crossed', () => {
    const d = latency(Array.from({ length: 8 }, (_, r): [number, number] => [20 * (1 + 0.01 * (r % 3)), 22 * (1 + 0.01 * ((r + 1) % 3))]))
    expect(d.status).toBe('regression')
    expect(d.notes.join(' ')).toMatch(/^Λ \d+\.\d\d at round \d crossed the regression boundary ln\(1\/α\) = 4\.61$/)
    expect(d.d!).toBeCloseTo(Math.log(1.1), 1)
  })

  it('passes B = A up to run noise at the first round that rules out 10 %', () => {
    const d = latency([
      [20, 20.2],
      [20.4, 20.1],
      [19.8, 19.9],
      [20.1, 20.3],
      [20.3, 20.2],
      [19.9, 20],
    ])
    expect(d.status).toBe('pass')
    expect(d.notes[0]).toMatch(/^Λ -?\d+\.\d\d at round 2 crossed the pass boundary ln β = -2\.30: a change of 10 % is ruled out$/)
  })

  it('keeps a row open between the boundaries at an interim look, and undecided at the last', () => {
    const pairs: Array<[number, number]> = [[20, 21]]
    expect(latency(pairs, 8).status).toBe('undecided')
    expect(latency(pairs, 8).notes[0]).toMatch(/more rounds needed$/)
    expect(latency(pairs, 1).notes[0]).toMatch(/after the last round allowed$/)
  })

  it('treats a stray round alike whichever side it slowed: B 40 % slower in 2 of 6 rounds is never a pass', () => {
    // Symmetric clipping about δ/2: the stray rounds count, bounded, as a B-worse round of that size would.
    const rounds = (slowB: boolean): Array<[number, number]> =>
      Array.from({ length: 6 }, (_, r) => {
        const stray = r === 1 || r === 4
        const a = 20 * (1 + 0.005 * (r % 2))
        return stray ? (slowB ? [a, a * 1.4] : [a * 1.4, a]) : [a, a * 1.002]
      })
    const slow = latency(rounds(true))
    expect(slow.status).toBe('undecided')
    expect(slow.d!).toBeGreaterThan(Math.log(1.1))
    // Spread evenly, the same mean slowdown is a regression.
    const even = latency(Array.from({ length: 6 }, (_, r): [number, number] => [20 * (1 + 0.005 * (r % 2)), 20 * (1 + 0.005 * (r % 2)) * Math.exp(slow.d!)]))
    expect(even.status).toBe('regression')
  })

  it('orients throughput: lower B is worse', () => {
    const pairs = Array.from({ length: 6 }, (_, r): [number, number] => [100 * (1 + 0.01 * (r % 2)), 80 * (1 + 0.01 * (r % 2))])
    expect(decidePaired({ pairs, restarted: FRESH, history: [], higherIsBetter: true, tolerance: 0.05, design: 0.15 }, look(6)).status).toBe('regression')
  })

  it('is blind when neither side is restarted on a host whose starts scatter: their offsets never average away, and a serve command would help', () => {
    const pairs = Array.from({ length: 16 }, (_, r): [number, number] => [20 * (1 + 0.002 * (r % 3)), 20.1 * (1 + 0.002 * (r % 2))])
    // Ten refreshes whose starts scatter by 4 % (alternating), with 1 % run noise.
    const history = Array.from({ length: 10 }, (_, i) => [0, 1, 2].map((k) => Math.log(20) + (i % 2 === 0 ? 0.04 : -0.04) + 0.01 * (k - 1)))
    const d = decidePaired({ pairs, restarted: { A: false, B: false }, history, higherIsBetter: false, tolerance: 0.05, design: 0.1 }, look(16))
    expect(d).toMatchObject({ status: 'undecided', blind: true })
    expect(d.notes[0]).toMatch(/^blind: .*a serve command\) would give it power$/)
    // The same rounds with fresh starts on both sides decide.
    expect(decidePaired({ pairs, restarted: FRESH, history, higherIsBetter: false, tolerance: 0.05, design: 0.1 }, look(16)).status).toBe('pass')
  })

  it('decides zeros by agreement and never prints a non-finite figure', () => {
    const zeros = (a: number, b: number, n = 4): Array<[number, number]> => Array.from({ length: n }, () => [a, b])
    expect(decidePaired({ pairs: zeros(0, 0), restarted: FRESH, history: [], higherIsBetter: true, tolerance: 0.05, design: 0.15 }, look(4)).status).toBe(
      'pass',
    )
    expect(decidePaired({ pairs: zeros(100, 0), restarted: FRESH, history: [], higherIsBetter: true, tolerance: 0.05, design: 0.15 }, look(4)).status).toBe(
      'regression',
    )
    expect(decidePaired({ pairs: zeros(0, 100), restarted: FRESH, history: [], higherIsBetter: true, tolerance: 0.05, design: 0.15 }, look(4)).status).toBe(
      'improvement',
    )
  })

  it('property: B no worse than A in every round is never a regression', () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.double({ min: 1, max: 1000, noNaN: true }), fc.double({ min: 0.5, max: 1, noNaN: true })), { minLength: 1, maxLength: 12 }),
        (xs) => {
          const d = latency(xs.map(([a, f]) => [a, a * f]))
          return d.status !== 'regression' && [d.d, d.bar, d.sigma].every((x) => x === null || Number.isFinite(x))
        },
      ),
      { numRuns: 200 },
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
  const drift = [1, 1.04, 0.97, 1.05, 1.01, 0.96, 1.03, 0.99, 1.02, 0.98, 1.04, 1]

  it('finds a 10 % slowdown of B in 12 rounds under 5 % round-to-round host drift', () => {
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
      repeats: 12,
      itl: (c) => (({ 1: 10, 4: 20, 16: 80 }) as Record<number, number>)[c]!,
      run: () => ({ failed: 3 }),
    })
    expect(compareAB(side(1, drift), broken).verdict).toBe('broken')
  })

  it('calls the verdict unmeasured and names A when the reference fails its requests, whatever B did', () => {
    const brokenA = pipelineResult({
      concurrency: [1, 4, 16],
      repeats: 12,
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
