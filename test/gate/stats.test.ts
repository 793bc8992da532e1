import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { chi2MedianRatio, chi2Ratio, clippedSd, robustSd, sampleVariance, tCdf, tQuantile, varMedianFactor } from '../../src/gate/stats.js'

describe('sampleVariance', () => {
  it('uses the n − 1 denominator', () => {
    expect(sampleVariance([1, 2, 3, 4])).toBeCloseTo(5 / 3, 12)
    expect(sampleVariance([7])).toBe(0)
  })
})

describe('robustSd', () => {
  it('is 1.4826 · MAD times the small-sample factor', () => {
    // median 2, |dev| = 1,0,1 → MAD 1; n = 3 factor 1.495.
    expect(robustSd([1, 2, 3])).toBeCloseTo(1.4826 * 1.495, 10)
    // n = 12 → factor 12 / 11.2.
    const xs = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12]
    expect(robustSd(xs)).toBeCloseTo(1.4826 * 3 * (12 / 11.2), 10)
  })

  it('ignores one wild value that the sample σ cannot', () => {
    expect(robustSd([10, 10.1, 9.9, 10.05, 1000])).toBeLessThan(0.5)
  })
})

describe('clippedSd', () => {
  it('equals the sample σ when nothing strays', () => {
    expect(clippedSd([1, 2, 3, 4])).toBeCloseTo(Math.sqrt(5 / 3), 12)
  })

  it('drops a value beyond three robust σ before taking the sample σ', () => {
    const xs = [1, 2, 3, 2, 1, 2, 3, 50]
    expect(clippedSd(xs)).toBeCloseTo(Math.sqrt(sampleVariance([1, 2, 3, 2, 1, 2, 3])), 12)
  })
})

describe('varMedianFactor', () => {
  it('is 1 for one value, 1/2 for two and tends to π/(2n)', () => {
    expect(varMedianFactor(1)).toBe(1)
    expect(varMedianFactor(2)).toBe(0.5)
    expect(varMedianFactor(3)).toBeCloseTo(0.4487, 4)
    expect(varMedianFactor(40)).toBeCloseTo(Math.PI / 80, 12)
  })

  it('never grows with more values', () => {
    fc.assert(fc.property(fc.integer({ min: 1, max: 200 }), (n) => varMedianFactor(n + 1) <= varMedianFactor(n)))
  })
})

describe('chi2Ratio', () => {
  it('matches the Wilson–Hilferty approximation of χ² quantiles', () => {
    // Median of χ²₂/2 is ln 2 = 0.693; WH gives (8/9)³.
    expect(chi2MedianRatio(2)).toBeCloseTo((8 / 9) ** 3, 12)
    // 95 % quantile of χ²₂/2 is 2.996.
    expect(chi2Ratio(2, 1.645)).toBeCloseTo(2.996, 1)
  })
})

describe('tQuantile', () => {
  it('matches the printed t table', () => {
    expect(tQuantile(0.975, 1)).toBeCloseTo(12.706, 3)
    expect(tQuantile(0.975, 5)).toBeCloseTo(2.571, 3)
    expect(tQuantile(0.995, 10)).toBeCloseTo(3.169, 3)
    expect(tQuantile(0.9975, 4)).toBeCloseTo(5.598, 3)
    expect(tQuantile(0.99, 2)).toBeCloseTo(6.965, 3)
  })

  it('tends to the normal quantile for large degrees of freedom, and is the normal at ∞', () => {
    expect(tQuantile(0.9975, Infinity)).toBeCloseTo(2.807, 3)
    expect(tQuantile(0.9975, 1e6)).toBeCloseTo(2.807, 3)
    expect(tQuantile(0.975, Infinity)).toBeCloseTo(1.96, 3)
  })

  it('is symmetric, 0 at the median, and refuses p outside (0, 1) or df ≤ 0', () => {
    expect(tQuantile(0.5, 3)).toBe(0)
    expect(tQuantile(0.025, 5)).toBeCloseTo(-tQuantile(0.975, 5), 12)
    expect(() => tQuantile(1, 5)).toThrow()
    expect(() => tQuantile(0, 5)).toThrow()
    expect(() => tQuantile(0.9, 0)).toThrow()
  })

  it('inverts tCdf and falls as the degrees of freedom grow', () => {
    // tQuantile caches by degrees of freedom rounded to 1/1000 (Satterthwaite's are real numbers):
    // it inverts tCdf exactly at those df, and answers any other df with the rounded one's quantile.
    fc.assert(
      fc.property(fc.double({ min: 0.51, max: 0.9999, noNaN: true }), fc.double({ min: 0.5, max: 200, noNaN: true }), (p, raw) => {
        const df = Math.round(raw * 1000) / 1000
        expect(tCdf(tQuantile(p, df), df)).toBeCloseTo(p, 8)
        expect(tQuantile(p, raw)).toBe(tQuantile(p, df))
        expect(tQuantile(p, df + 1)).toBeLessThanOrEqual(tQuantile(p, df))
      }),
      { numRuns: 200, seed: 3 },
    )
  })
})
