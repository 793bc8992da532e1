import { describe, expect, it } from 'vitest'
import { firstRounds, lookAt, lookRounds, maxRoundsProblem, stopsEarly } from '../../src/gate/ab-looks.js'
import { compareAB } from '../../src/gate/ab-verdict.js'
import type { ResultFile } from '../../src/types.js'
import { pipelineResult, wiggle } from './fixtures.js'

// One side of an A/B job of `rounds` rounds, built by the pipeline's summarizer: slot r is repeat r
// (1-based, as servegate ab writes them), p95 ITL 10 / 20 / 80 ms × `factor`, a little run noise.
const side = (factor: number, rounds: number): ResultFile => {
  const r = pipelineResult({
    concurrency: [1, 4, 16],
    repeats: rounds,
    itl: (c, rep) => wiggle(({ 1: 10, 4: 20, 16: 80 } as Record<number, number>)[c]!, rep % 7, rep) * factor,
  })
  for (const p of r.points) for (const x of p.runs) x.repeat += 1
  for (const s of r.at_target) for (const x of s.runs) x.repeat += 1
  return r
}

describe('A/B in looks', () => {
  it('looks after the first rounds, then every two rounds, and always at the most', () => {
    expect(lookRounds(6, 24)).toEqual([6, 8, 10, 12, 14, 16, 18, 20, 22, 24])
    expect(lookRounds(6, 6)).toEqual([6])
    expect(lookRounds(4, 9)).toEqual([4, 6, 8, 9])
    expect(maxRoundsProblem(6, 24)).toBeNull()
    expect(maxRoundsProblem(6, 4)).toBe("expected a whole number of rounds no smaller than the first look's 6")
    expect(maxRoundsProblem(6, 7.5)).not.toBeNull()
  })

  it('cuts a side to its first rounds, planned as that many', () => {
    const cut = firstRounds(side(1, 8), 4)
    expect(cut.config.repeats).toBe(4)
    expect(cut.points.map((p) => p.runs.map((r) => r.repeat))).toEqual([
      [1, 2, 3, 4],
      [1, 2, 3, 4],
      [1, 2, 3, 4],
    ])
    expect(cut.at_target.every((s) => s.runs.every((r) => r.repeat <= 4))).toBe(true)
  })

  it('ends the job at an early look when B = A passes every gated row with power to spare', () => {
    const a = side(1, 8)
    const b = side(1, 8)
    const v = lookAt(a, b, 4, 8, {}, 'exclusive')
    expect(v?.verdict).toBe('pass')
    expect(stopsEarly(v!)).toBe(true)
    expect(v!.rows.filter((r) => r.gated).every((r) => r.n_candidate === 4)).toBe(true)
  })

  it('never calls a regression at an early look: a 30 % slower B measures every round, and the last look calls it', () => {
    const a = side(1, 8)
    const b = side(1.3, 8)
    // The early look alone would see it, yet it only decides whether to stop on a pass.
    expect(compareAB(firstRounds(a, 4), firstRounds(b, 4)).verdict).toBe('regression')
    expect(lookAt(a, b, 4, 8, {}, 'exclusive')).toBeNull()
    expect(lookAt(a, b, 6, 8, {}, 'exclusive')).toBeNull()
    const last = lookAt(a, b, 8, 8, {}, 'exclusive')
    expect(last?.verdict).toBe('regression')
    expect(last!.rows.filter((r) => r.gated).every((r) => r.n_candidate === 8)).toBe(true)
  })

  it('does not stop on a pass of a row that could not see twice its tolerance', () => {
    const v = compareAB(firstRounds(side(1, 8), 4), firstRounds(side(1, 8), 4), { maxMdcPct: 1000, look: 'screen', screenMdc: 0.001 })
    expect(v.verdict).toBe('undecided')
    expect(stopsEarly(v)).toBe(false)
  })
})
