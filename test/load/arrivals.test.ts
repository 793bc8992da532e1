import { describe, expect, it } from 'vitest'
import { arrivalScheduleMs, gammaSample } from '../../src/load/arrivals.js'
import { meanAndCv } from '../../src/metrics/arrivals.js'
import { createRng } from '../../src/util/rng.js'

const gapsOf = (t: number[]): number[] => t.slice(1).map((x, i) => x - (t[i] as number))

describe('gammaSample', () => {
  // 20,000 draws: the sample mean's relative sd is CV/√n ≤ 1.42/141 = 1.0%, the sample CV's
  // relative sd about 1/√(2n)·√(1 + …) ≤ 1.5% for these shapes; 5% is over 3σ for every case.
  for (const shape of [0.5, 1, 2, 4]) {
    it(`draws mean shape × scale and CV 1/√shape at shape ${shape}`, () => {
      const rng = createRng(11)
      const xs = Array.from({ length: 20_000 }, () => gammaSample(rng, shape, 10))
      const { mean, cv } = meanAndCv(xs)
      expect(mean! / (shape * 10)).toBeCloseTo(1, 1)
      expect(Math.abs(mean! / (shape * 10) - 1)).toBeLessThan(0.05)
      expect(Math.abs(cv! * Math.sqrt(shape) - 1)).toBeLessThan(0.05)
      expect(xs.every((x) => x > 0 && Number.isFinite(x))).toBe(true)
    })
  }

  it('refuses a shape or scale that is not above 0', () => {
    expect(() => gammaSample(createRng(1), 0, 1)).toThrow(/above 0/)
    expect(() => gammaSample(createRng(1), 1, -1)).toThrow(/above 0/)
  })
})

describe('arrivalScheduleMs', () => {
  it('starts at 0 and has mean gap 1000/rate with CV 1/√burstiness', () => {
    for (const b of [0.5, 1, 4]) {
      const { mean, cv } = meanAndCv(gapsOf(arrivalScheduleMs(20_001, 20, b, 3)))
      expect(Math.abs(mean! / 50 - 1)).toBeLessThan(0.05)
      expect(Math.abs(cv! * Math.sqrt(b) - 1)).toBeLessThan(0.05)
    }
    expect(arrivalScheduleMs(5, 20, 1, 3)[0]).toBe(0)
  })

  it('is the same schedule for the same seed and another for another seed', () => {
    expect(arrivalScheduleMs(50, 10, 1, 42)).toEqual(arrivalScheduleMs(50, 10, 1, 42))
    expect(arrivalScheduleMs(50, 10, 1, 42)).not.toEqual(arrivalScheduleMs(50, 10, 1, 43))
  })

  it('sends every request at once at rate inf', () => {
    expect(arrivalScheduleMs(4, Infinity, 1, 1)).toEqual([0, 0, 0, 0])
  })

  it('is sorted (gaps are never negative)', () => {
    expect(gapsOf(arrivalScheduleMs(1000, 100, 0.3, 9)).every((g) => g >= 0)).toBe(true)
  })
})
