import { describe, expect, it } from 'vitest'
import fc from 'fast-check'
import { LatencyHistogram, latencyStats } from '../../src/metrics/histogram.js'

/** numpy-style linear percentile over an exact sorted copy. */
function exactPercentile(values: number[], p: number): number {
  const xs = [...values].sort((a, b) => a - b)
  const h = ((xs.length - 1) * p) / 100
  const lo = xs[Math.floor(h)] as number
  const hi = xs[Math.ceil(h)] as number
  return lo + (h - Math.floor(h)) * (hi - lo)
}

/** The documented bound: µs rounding plus half a bucket (≤ value·2^-18). */
const bound = (v: number) => 0.0005 + Math.abs(v) * 2 ** -18 + 1e-9

describe('LatencyHistogram', () => {
  it('returns nulls for every figure when empty', () => {
    expect(new LatencyHistogram().toStats()).toEqual({ mean: null, p50: null, p95: null, p99: null })
  })

  it('interpolates linearly between ranks like numpy (hand-computed)', () => {
    // 1,2,3,4 ms: p50 → h=1.5 → 2.5; p95 → h=2.85 → 3.85; p99 → h=2.97 → 3.97
    const s = latencyStats([4, 1, 3, 2])
    expect(s.mean).toBeCloseTo(2.5, 9)
    expect(s.p50).toBeCloseTo(2.5, 9)
    expect(s.p95).toBeCloseTo(3.85, 9)
    expect(s.p99).toBeCloseTo(3.97, 9)
  })

  it('keeps 0.01 ms resolution for ITL-sized values', () => {
    const h = new LatencyHistogram().recordAll([20.01, 20.02, 20.03])
    expect(h.percentileMs(50)).toBeCloseTo(20.02, 6)
    expect(h.percentileMs(0)).toBeCloseTo(20.01, 6)
    expect(h.percentileMs(100)).toBeCloseTo(20.03, 6)
  })

  it('keeps a one-minute E2EL within 0.25 ms', () => {
    const h = new LatencyHistogram().recordAll([60_000.123, 61_000.456, 59_999.999])
    expect(Math.abs((h.percentileMs(50) as number) - 60_000.123)).toBeLessThan(0.25)
    expect(h.percentileMs(100)).toBeCloseTo(61_000.456, 2) // clamped to the exact max
  })

  it('rejects negative and non-finite latencies', () => {
    const h = new LatencyHistogram()
    expect(() => h.record(-1)).toThrow(RangeError)
    expect(() => h.record(Number.NaN)).toThrow(RangeError)
    expect(() => h.percentileMs(101)).toThrow(RangeError)
  })

  it('matches an exact sorted-array computation within the stated resolution', () => {
    fc.assert(
      fc.property(
        fc.array(fc.double({ min: 0, max: 600_000, noNaN: true }), { minLength: 1, maxLength: 300 }),
        fc.constantFrom(0, 1, 25, 50, 90, 95, 99, 99.9, 100),
        (values, p) => {
          const h = new LatencyHistogram().recordAll(values)
          const exact = exactPercentile(values, p)
          expect(Math.abs((h.percentileMs(p) as number) - exact)).toBeLessThanOrEqual(bound(exact))
          const mean = values.reduce((a, b) => a + b, 0) / values.length
          expect(Math.abs((h.meanMs() as number) - mean)).toBeLessThanOrEqual(0.0005 + 1e-9)
        },
      ),
      { numRuns: 300 },
    )
  })

  it('matches exactly on small ITL-like values (sub-2 s range)', () => {
    fc.assert(
      fc.property(fc.array(fc.double({ min: 0, max: 2000, noNaN: true }), { minLength: 1, maxLength: 200 }), (values) => {
        const s = latencyStats(values)
        for (const [p, got] of [
          [50, s.p50],
          [95, s.p95],
          [99, s.p99],
        ] as const) {
          expect(Math.abs((got as number) - exactPercentile(values, p))).toBeLessThanOrEqual(0.005)
        }
      }),
      { numRuns: 200 },
    )
  })

  it('merges losslessly: merged equals recording everything into one', () => {
    fc.assert(
      fc.property(
        fc.array(fc.double({ min: 0, max: 600_000, noNaN: true }), { maxLength: 100 }),
        fc.array(fc.double({ min: 0, max: 1_000, noNaN: true }), { maxLength: 100 }),
        (a, b) => {
          const merged = new LatencyHistogram().recordAll(a).merge(new LatencyHistogram().recordAll(b))
          const whole = new LatencyHistogram().recordAll([...a, ...b])
          expect(merged.toStats()).toEqual(whole.toStats())
          expect(merged.toSnapshot()).toEqual(whole.toSnapshot())
        },
      ),
      { numRuns: 200 },
    )
  })

  it('round-trips through a plain snapshot', () => {
    const h = new LatencyHistogram().recordAll([0, 1.5, 20.004, 300_000])
    const back = LatencyHistogram.fromSnapshot(JSON.parse(JSON.stringify(h.toSnapshot())))
    expect(back.toStats()).toEqual(h.toStats())
    expect(back.count).toBe(4)
  })

  it('keeps every count when tens of thousands of distinct values are recorded', () => {
    // Every µs from 1.000 to 40.999 ms, ten times over: 40,000 distinct values, the
    // shape of a high-concurrency ITL distribution. A packed counts array lost counts here.
    const values: number[] = []
    for (let r = 0; r < 10; r++) for (let us = 1000; us < 41_000; us++) values.push(us / 1000)
    const h = new LatencyHistogram().recordAll(values)
    expect(h.count).toBe(400_000)
    for (const p of [1, 50, 95, 99, 99.9]) {
      const exact = exactPercentile(values, p)
      expect(Math.abs((h.percentileMs(p) as number) - exact)).toBeLessThanOrEqual(bound(exact))
    }
    expect(h.toSnapshot().buckets.reduce((n, [, c]) => n + c, 0)).toBe(400_000)
  })

  it('matches an exact sort on large, dense random samples', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 2 ** 31 - 1 }), (seed) => {
        let x = seed
        const next = () => (x = (Math.imul(x, 48271) >>> 0) % 2147483647) / 2147483647
        const values = Array.from({ length: 60_000 }, () => 5 + 95 * next() ** 3)
        const s = latencyStats(values)
        for (const [p, got] of [
          [50, s.p50],
          [95, s.p95],
          [99, s.p99],
        ] as const) {
          const exact = exactPercentile(values, p)
          expect(Math.abs((got as number) - exact)).toBeLessThanOrEqual(bound(exact))
        }
      }),
      { numRuns: 5 },
    )
  })

  it('sizes memory by the largest value, not by how many values were recorded', () => {
    const footprint = (h: LatencyHistogram) => (h as unknown as { hist: { estimatedFootprintInBytes: number } }).hist.estimatedFootprintInBytes
    const few = new LatencyHistogram().recordAll([20, 25, 30])
    const many = new LatencyHistogram()
    for (let i = 0; i < 200_000; i++) many.record(20 + 10 * Math.abs(Math.sin(i)))
    expect(footprint(many)).toBe(footprint(few))
    expect(footprint(many)).toBeLessThan(1_200_000)
    const minute = new LatencyHistogram().recordAll([60_000])
    expect(footprint(minute)).toBeLessThan(6_000_000)
  })

  it('reads percentiles of minute-long values by visiting only occupied blocks, not every slot', () => {
    const h = new LatencyHistogram()
    for (let i = 0; i < 10_000; i++) h.record(30_000 + (i % 1000) * 30)
    const hist = (h as unknown as { hist: { getCountAtIndex(i: number): number; countsArrayLength: number } }).hist
    const read = hist.getCountAtIndex.bind(hist)
    let reads = 0
    hist.getCountAtIndex = (i: number) => {
      reads++
      return read(i)
    }
    expect(h.toStats().p50).toBeCloseTo(44_985, -1)
    // 1,000 distinct values → at most 1,000 blocks of 8 slots; a full walk would read ~1.3 M slots.
    expect(hist.countsArrayLength).toBeGreaterThan(1_000_000)
    expect(reads).toBeLessThanOrEqual(8_000)
  })
})
