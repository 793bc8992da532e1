import { describe, expect, it } from 'vitest'
import { fmtInt, fmtMs, fmtPct, fmtPctRange, fmtPctShort, fmtRange, fmtRate, summarize, withSpread } from '../../src/report/format.js'

describe('withSpread', () => {
  it('shows the median and half the min–max range as a share of it', () => {
    // median 412, range 400–420 → ±10 / 412 = ±2.4%
    expect(withSpread([420, 400, 412], fmtMs)).toBe('412 (±2.4%)')
  })

  it('takes the mean of the middle two for an even count and skips missing values', () => {
    // [10, 12] → median 11, ±1/11 = ±9.1%
    expect(withSpread([12, null, 10], fmtMs)).toBe('11.0 (±9.1%)')
  })

  it('shows a single run without a spread and nothing as n/a', () => {
    expect(withSpread([20.126], fmtMs)).toBe('20.1')
    expect(withSpread([7.126], fmtMs)).toBe('7.13')
    expect(withSpread([null], fmtMs)).toBe('n/a')
  })

  it('falls back to the range when the median is zero', () => {
    expect(withSpread([0, 0, 1], fmtRate)).toBe('0.0 (0.0–1.0)')
  })
})

describe('number formats', () => {
  it.each([
    [3.14159, '3.14'],
    [20.04, '20.0'],
    [412.4, '412'],
    [1234.5, '1,235'],
  ])('writes %s ms as %s', (x, s) => expect(fmtMs(x)).toBe(s))

  it('writes rates with separators above 100 and one decimal below', () => {
    expect(fmtRate(12345.6)).toBe('12,346')
    expect(fmtRate(49.96)).toBe('50.0')
  })

  it('summarizes n, median, min and max', () => {
    expect(summarize([3, 1, 2, Number.NaN])).toEqual({ n: 3, median: 2, min: 1, max: 3 })
  })

  it('writes CVs with one fixed decimal, limits and ramps without a trailing .0', () => {
    expect(fmtPct(0.01)).toBe('1.0%')
    expect(fmtPct(0.0164)).toBe('1.6%')
    expect(fmtPctShort(0.25)).toBe('25%')
    expect(fmtPctShort(0.034)).toBe('3.4%')
    expect(fmtPctRange([0.12, 0.03, 0.08])).toBe('3–12%')
    expect(fmtPctRange([0.05, 0.0501])).toBe('5%')
  })

  it('writes a range as lo–hi, or one value when both ends print the same', () => {
    expect(fmtRange([16, 4, 8], fmtInt)).toBe('4–16')
    expect(fmtRange([4, 4], fmtInt)).toBe('4')
  })
})
