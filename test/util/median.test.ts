import { describe, expect, it } from 'vitest'
import { finiteMedian, median } from '../../src/util/median.js'

describe('median', () => {
  it('takes the middle value, or the mean of the middle two', () => {
    expect(median([3, 1, 2])).toBe(2)
    expect(median([4, 1, 3, 2])).toBe(2.5)
    expect(() => median([])).toThrow()
  })
})

describe('finiteMedian', () => {
  it('handles even counts and ignores nulls', () => {
    expect(finiteMedian([4, null, 1, 3, 2])).toBe(2.5)
    expect(finiteMedian([null])).toBeNull()
  })
})
