import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { compareAB } from '../../src/ab/verdict.js'
import { DEFAULT_GATE_OPTIONS } from '../../src/gate/options.js'
import { decidePaired, MIN_PAIRS_FOR_K, pairUp } from '../../src/gate/paired.js'
import { pipelineResult, wiggle } from './fixtures.js'

const OPTS = DEFAULT_GATE_OPTIONS
const latency = (pairs: Array<[number, number]>) => decidePaired({ pairs, higherIsBetter: false, tolerance: 0.05 }, OPTS)

describe('decidePaired: one metric from A/B slot pairs', () => {
  it('calls a 10 % slower B a regression when every pair agrees', () => {
    const pairs: Array<[number, number]> = [[20, 22.1], [20.4, 22.3], [19.8, 21.9], [20.1, 22.0]]
    const d = latency(pairs)
    expect(d.status).toBe('regression')
    expect(d.d!).toBeCloseTo(Math.log(1.0975), 2)
    expect(d.bar!).toBeGreaterThanOrEqual(Math.log(1.05))
  })

  it('passes B = A up to run noise', () => {
    expect(latency([[20, 20.2], [20.4, 20.1], [19.8, 19.9], [20.1, 20.3]]).status).toBe('pass')
  })

  it('does not call a regression when one pair of four disagrees, however large the others', () => {
    const d = latency([[20, 30], [20, 19.8], [20, 30], [20, 30]])
    expect(d.d!).toBeGreaterThan(d.bar!)
    expect(d.status).toBe('undecided')
    expect(d.notes.join(' ')).toMatch(/pairs have B worse/)
  })

  it('orients throughput: lower B is worse', () => {
    const d = decidePaired({ pairs: [[1000, 880], [990, 870], [1010, 890]], higherIsBetter: true, tolerance: 0.05 }, OPTS)
    expect(d.status).toBe('regression')
    expect(decidePaired({ pairs: [[1000, 1200], [990, 1190], [1010, 1215]], higherIsBetter: true, tolerance: 0.05 }, OPTS).status).toBe('improvement')
  })

  it('cancels a host that drifts over the job: counterbalanced pairs of an unchanged engine pass', () => {
    // The host slows 1 % per slot; slots run A B, B A, A B, B A.
    const order: Array<'A' | 'B'> = ['A', 'B', 'B', 'A', 'A', 'B', 'B', 'A']
    const at = (who: 'A' | 'B', round: number): number => 20 * (1 + 0.01 * order.findIndex((x, i) => x === who && Math.floor(i / 2) === round))
    const pairs = [0, 1, 2, 3].map((r): [number, number] => [at('A', r), at('B', r)])
    expect(latency(pairs).status).toBe('pass')
  })

  it('does not call one disturbed slot among eight a regression: the early bar holds until ten pairs', () => {
    // B 3 % slower in seven pairs (inside the 5 % tolerance) and 25 % in one: the mean
    // crosses the tolerance only through the disturbed slot.
    const pairs = Array.from({ length: 8 }, (_, i): [number, number] => [20, 20 * (i === 3 ? 1.25 : 1.03)])
    const d = latency(pairs)
    expect(d.status).not.toBe('regression')
    expect(d.bar).toBeCloseTo(OPTS.earlyK * d.sigma!, 12)
    // A spread wide enough that the noise sets the bar: earlyK up to nine pairs, k from ten.
    const noisy = (n: number) => latency(Array.from({ length: n }, (_, i): [number, number] => [20, 20 * (i % 2 === 0 ? 1.12 : 0.92)]))
    expect(noisy(MIN_PAIRS_FOR_K - 1).bar).toBeCloseTo(OPTS.earlyK * noisy(MIN_PAIRS_FOR_K - 1).sigma!, 12)
    expect(noisy(MIN_PAIRS_FOR_K).bar).toBeCloseTo(OPTS.k * noisy(MIN_PAIRS_FOR_K).sigma!, 12)
  })

  it('decides zeros by agreement and never prints a non-finite figure', () => {
    const tput = (pairs: Array<[number, number]>) => decidePaired({ pairs, higherIsBetter: true, tolerance: 0.05 }, OPTS)
    expect(tput([[0, 0], [0, 0], [0, 0]]).status).toBe('pass')
    expect(tput([[100, 0], [100, 0], [100, 0]]).status).toBe('regression')
    expect(tput([[0, 100], [0, 100], [0, 100]]).status).toBe('improvement')
    expect(tput([[100, 0], [100, 100], [0, 100]]).status).toBe('undecided')
    expect(tput([]).status).toBe('missing')
  })

  it('property: any finite positive pairs give a finite decision and never a regression when B ≤ A everywhere', () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.double({ min: 0.1, max: 1e4, noNaN: true }), fc.double({ min: 0.1, max: 1e4, noNaN: true })), { minLength: 1, maxLength: 12 }), (raw) => {
        const d = latency(raw.map(([a, b]) => [a, b]))
        for (const x of [d.d, d.bar, d.sigma, d.mdc, d.baseline, d.candidate]) expect(x === null || Number.isFinite(x)).toBe(true)
        const better = latency(raw.map(([a, b]) => [Math.max(a, b), Math.min(a, b)]))
        expect(better.status).not.toBe('regression')
      }),
      { numRuns: 300 },
    )
  })
})

describe('pairUp', () => {
  it('pairs the repeats valid on both sides, in repeat order', () => {
    const run = (repeat: number, value: number | null, valid = true) => ({ repeat, value, valid, codes: [], failedShare: 0, failed: 0, completed: 12 })
    expect(pairUp([run(1, 10), run(2, 11), run(3, 12, false)], [run(3, 13), run(2, 14), run(1, null)])).toEqual([[11, 14]])
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
    const broken = pipelineResult({ concurrency: [1, 4, 16], repeats: 4, itl: (c) => ({ 1: 10, 4: 20, 16: 80 } as Record<number, number>)[c]!, run: () => ({ failed: 3 }) })
    expect(compareAB(side(1, drift), broken).verdict).toBe('broken')
  })

  it('calls the verdict unmeasured and names A when the reference fails its requests, whatever B did', () => {
    const brokenA = pipelineResult({ concurrency: [1, 4, 16], repeats: 4, itl: (c) => ({ 1: 10, 4: 20, 16: 80 } as Record<number, number>)[c]!, run: () => ({ failed: 3 }) })
    const v = compareAB(brokenA, side(1.5, drift))
    expect(v.verdict).toBe('unmeasured')
    expect(v.reasons[0]).toMatch(/^unmeasured: the reference A broke or was spoiled, so B could not be measured against it: A's run 0 at 64x16@c1: 3 requests failed \(http_status ×3\), requests_failed/)
    expect(v.regressions).toEqual([])
  })
})
