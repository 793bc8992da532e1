import { describe, expect, it } from 'vitest'
import { spread } from '../../src/analysis/spread.js'

describe('spread', () => {
  it('gives median, min, max, mean and CV with the sample standard deviation', () => {
    const s = spread([110, 100, 120])
    expect(s).toMatchObject({ n: 3, median: 110, min: 100, max: 120, mean: 110 })
    expect(s?.cv).toBeCloseTo(10 / 110, 12) // sample sd of 100,110,120 is 10
  })

  it('takes the mean of the middle two for an even count', () => {
    expect(spread([4, 1, 3, 2])?.median).toBe(2.5)
  })

  it('reports CV 0 for one value and for all zeros', () => {
    expect(spread([42])).toEqual({ n: 1, median: 42, min: 42, max: 42, mean: 42, cv: 0 })
    expect(spread([0, 0])?.cv).toBe(0)
  })

  it('is null for no values and rejects non-finite ones', () => {
    expect(spread([])).toBeNull()
    expect(() => spread([1, Number.NaN])).toThrow(RangeError)
  })
})
