import { describe, expect, it } from 'vitest'
import { firstRounds, lookAt, lookRounds, maxRoundsProblem, settled } from '../../src/gate/ab-looks.js'
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

const FRESH = { A: true, B: true }

describe('A/B in looks', () => {
  it('looks after the first rounds, then after every round, up to the most', () => {
    expect(lookRounds(2, 6)).toEqual([2, 3, 4, 5, 6])
    expect(lookRounds(6, 6)).toEqual([6])
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

  it('ends the job at the first look that passes every gated row, and keeps it open before', () => {
    const a = side(1, 16)
    const b = side(1, 16)
    const rounds = lookRounds(2, 16).map((r) => ({ r, look: lookAt(a, b, r, 16, {}, FRESH) }))
    const first = rounds.find((x) => x.look.done)!
    expect(first.look.verdict.verdict).toBe('pass')
    expect(first.r).toBeLessThan(16)
    for (const x of rounds.filter((y) => y.r < first.r)) expect(x.look.verdict.verdict).toBe('undecided')
    expect(first.look.verdict.rows.filter((r) => r.gated).every((r) => r.n_candidate === first.r)).toBe(true)
  })

  it('calls a 30 % slower B a regression at an early look, long before the last round', () => {
    const a = side(1, 16)
    const b = side(1.3, 16)
    const look = lookRounds(2, 16)
      .map((r) => ({ r, ...lookAt(a, b, r, 16, {}, FRESH) }))
      .find((x) => x.done)!
    expect(look.verdict.verdict).toBe('regression')
    expect(look.r).toBeLessThan(8)
  })

  it('does not hold a job open for a row that can never decide', () => {
    const v = lookAt(side(1, 4), side(1, 4), 1, 16, {}, FRESH).verdict
    expect(v.verdict).toBe('undecided')
    expect(settled(v)).toBe(false)
    expect(settled({ ...v, rows: v.rows.map((r) => ({ ...r, blind: true })) })).toBe(true)
  })
})
