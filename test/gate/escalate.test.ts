import { describe, expect, it } from 'vitest'
import { lookAt } from '../../src/gate/ab-looks.js'
import { compareAB } from '../../src/gate/ab-verdict.js'
import {
  crossingMeasured,
  curveBlock,
  dropPartialCurves,
  keepPlanned,
  notePlanned,
  openPoints,
  pointRepeats,
  replayEscalating,
} from '../../src/gate/escalate.js'
import type { Verdict } from '../../src/gate/types.js'
import type { ResultFile } from '../../src/types.js'
import { pipelineResult, wiggle } from './fixtures.js'

// Rows, not sweeps: an A/B job whose look leaves some rows open measures only their points in the
// rounds that follow. Sides built by the pipeline's summarizer, slot r = repeat r as servegate ab
// writes them: p95 ITL 10 / 20 / 80 ms at c = 1 / 4 / 16, run noise of about 1 %, B's rounds
// drawn on other days than A's.
const ITL: Record<number, number> = { 1: 10, 4: 20, 16: 80 }
const side = (factor: (c: number) => number, rounds: number, shift: number): ResultFile => {
  const r = pipelineResult({ concurrency: [1, 4, 16], repeats: rounds, itl: (c, rep) => wiggle(ITL[c]!, (rep + shift) % 7, rep + shift) * factor(c) })
  for (const p of r.points) for (const x of p.runs) x.repeat += 1
  for (const s of r.at_target) for (const x of s.runs) x.repeat += 1
  return r
}
const FRESH = { A: true, B: true }
const job = (factor: (c: number) => number) => {
  const a = side(() => 1, 16, 0)
  const b = side(factor, 16, 3)
  const looks: Verdict[] = []
  const out = replayEscalating(a, b, 2, 16, (x, y, r) => {
    const l = lookAt(x, y, r, 16, {}, FRESH)
    looks.push(l.verdict)
    return l
  })
  return { a, b, looks, ...out }
}
const statuses = (v: Verdict): Record<string, string> => Object.fromEntries(v.rows.filter((r) => r.gated).map((r) => [r.key, `${r.status}/${r.n_candidate}`]))

describe('escalate rows, not sweeps', () => {
  it('measures only the open row’s point after the look that decided the others, and blames it at the same round', () => {
    // c = 1 is 8 % slower (beyond the 5 % tolerance): its row needs six rounds, the others pass at the first look.
    const j = job((c) => (c === 1 ? 1.08 : 1))
    expect(j.rounds).toBe(6)
    expect(j.planned).toEqual({ '64x16@c1': 6, '64x16@c4': 2, '64x16@c16': 2 })
    // 2 sides × (3 points × 2 rounds + 1 point × 4 rounds), against 2 × 3 × 6 = 36 for whole sweeps.
    expect(j.pointRuns).toBe(20)
    expect(j.verdict.verdict).toBe('regression')
    expect(statuses(j.verdict)).toEqual({
      'itl_p95@64x16@c1': 'regression/6',
      'itl_p95@64x16@c4': 'pass/2',
      'itl_p95@64x16@c16': 'pass/2',
      'tput_at_target@64x16': 'pass/2',
    })
    // The same job measuring whole sweeps decides the same rows at the same round.
    const whole = lookAt(j.a, j.b, 6, 16, {}, FRESH).verdict
    expect(whole.verdict).toBe('regression')
    expect(whole.regressions).toEqual(j.verdict.regressions)
    // Points left out are complete with the rounds they were planned for: no row incomplete or unmeasured.
    expect(j.verdict.reasons.join('\n')).not.toMatch(/incomplete|unmeasured/)
  })

  it("measures the points around a curve's crossing while its throughput-at-target row is open", () => {
    // c = 4 and 16 are 6 % slower: the throughput row stays open after round 2. Its curve crosses
    // the 50 ms target between c = 4 and 16 (about c = 10), so later rounds measure those two and
    // plan the round for the curve (its shape label); c = 1, whose ITL row passed, is left out.
    const j = job((c) => (c >= 4 ? 1.06 : 1))
    expect(statuses(j.looks[0]!)['tput_at_target@64x16']).toBe('undecided/2')
    expect(statuses(j.looks[0]!)['itl_p95@64x16@c1']).toBe('pass/2')
    expect(curveBlock(j.a, '64x16')).toEqual([4, 16])
    expect(openPoints(j.looks[0]!, j.a)).toEqual(new Set(['64x16', '64x16@c4', '64x16@c16']))
    expect(j.planned['64x16@c1']).toBe(2)
    expect(j.planned['64x16@c4']).toBe(j.rounds)
    // Every round the curve was planned for drew its figure through c = 4 and 16: one increment each,
    // until the row passed (the look after round 5); its ITL rows kept c = 4 and 16 open after that.
    const afterTput = j.looks.findIndex((v) => statuses(v)['tput_at_target@64x16']!.startsWith('pass'))
    expect(afterTput).toBe(3)
    expect(statuses(j.verdict)['tput_at_target@64x16']).toBe('pass/5')
    expect(openPoints(j.looks[afterTput]!, j.a)).toEqual(new Set(['64x16@c4', '64x16@c16']))
    expect(j.verdict.reasons.join('\n')).not.toMatch(/incomplete|unmeasured/)
    // 2 sides × (3 points × 2 rounds + 2 points for each later round).
    expect(j.pointRuns).toBe(2 * (3 * 2 + 2 * (j.rounds - 2)))
  })

  it('keeps a run drawn through part of a curve only where its crossing lies between measured neighbours', () => {
    const all = [1, 4, 16, 64]
    const at = (concurrency: number | null, bound: 'interpolated' | 'exact' | 'lower_bound' | 'unreachable' = 'interpolated') => ({ bound, concurrency })
    expect(crossingMeasured(at(10), new Set([4, 16]), all)).toBe(true)
    expect(crossingMeasured(at(3), new Set([4, 16]), all)).toBe(false)
    expect(crossingMeasured(at(20), new Set([4, 16]), all)).toBe(false)
    expect(crossingMeasured(at(10), new Set([1, 16]), all)).toBe(false)
    expect(crossingMeasured(at(16, 'exact'), new Set([4, 16, 64]), all)).toBe(true)
    expect(crossingMeasured(at(16, 'exact'), new Set([4, 16]), all)).toBe(false)
    expect(crossingMeasured(at(64, 'lower_bound'), new Set([16, 64]), all)).toBe(true)
    expect(crossingMeasured(at(16, 'lower_bound'), new Set([4, 16]), all)).toBe(false)
    expect(crossingMeasured(at(null, 'unreachable'), new Set([1, 4]), all)).toBe(true)
    expect(crossingMeasured(at(null, 'unreachable'), new Set([4, 16]), all)).toBe(false)
    expect(crossingMeasured(at(null, 'unreachable'), new Set(all), all)).toBe(true)
  })

  it('records the rounds each point was planned for, and a file cut to fewer rounds keeps them up to its rounds', () => {
    const a = side(() => 1, 6, 0)
    const kept = keepPlanned(a, { '64x16@c1': 6, '64x16@c4': 2, '64x16@c16': 2 })
    expect(kept.points.map((p) => p.runs.length)).toEqual([6, 2, 2])
    // The throughput at target of rounds 3–6 was drawn through c = 1 alone: not the sweep's figure.
    expect(kept.at_target[0]!.runs.map((r) => r.repeat)).toEqual([1, 2])
    expect(pointRepeats(kept)).toEqual({ '64x16@c1': 6, '64x16@c4': 2, '64x16@c16': 2 })
    // notePlanned grows the rounds of the points a round measured, and only those.
    const next = notePlanned(kept, new Set(['64x16@c1']), 7)
    expect(pointRepeats(next)).toEqual({ '64x16@c1': 7, '64x16@c4': 2, '64x16@c16': 2 })
    // Without a record every point planned the file's repeats.
    expect(pointRepeats(a)).toBeNull()
  })

  it("drops a slot's throughput at target where the slot measured part of the curve", () => {
    const all = side(() => 1, 1, 0)
    expect(all.at_target[0]!.runs).toHaveLength(1)
    expect(dropPartialCurves(all, null, all).at_target[0]!.runs).toHaveLength(1)
    expect(dropPartialCurves(all, new Set(['64x16@c1', '64x16@c4', '64x16@c16']), all).at_target).toHaveLength(1)
    expect(dropPartialCurves(all, new Set(['64x16@c1']), all).at_target).toEqual([])
    // A round planned for the curve (its shape label) keeps a crossing drawn between measured neighbours, and only that.
    expect(all.at_target[0]!.runs[0]!.concurrency).toBeGreaterThan(4)
    expect(dropPartialCurves(all, new Set(['64x16', '64x16@c4', '64x16@c16']), all).at_target[0]!.runs).toHaveLength(1)
    expect(dropPartialCurves(all, new Set(['64x16@c4', '64x16@c16']), all).at_target).toEqual([])
    expect(dropPartialCurves(all, new Set(['64x16', '64x16@c1', '64x16@c4']), all).at_target).toEqual([])
  })

  it('still calls a point the job planned but did not measure incomplete', () => {
    // The record says c = 16 was planned for four rounds, yet B holds two of them.
    const planned = { '64x16@c1': 2, '64x16@c4': 2, '64x16@c16': 4 }
    const a = keepPlanned(
      side(() => 1, 4, 0),
      planned,
    )
    const b = keepPlanned(
      side(() => 1, 4, 3),
      planned,
    )
    const short: ResultFile = { ...b, points: b.points.map((p) => (p.concurrency === 16 ? { ...p, runs: p.runs.filter((r) => r.repeat <= 2) } : p)) }
    const v = compareAB(a, short, { maxLooks: 4, look: 'last' }, FRESH)
    expect(v.verdict).toBe('incomplete')
    expect(v.reasons.join('\n')).toContain('64x16@c16: the candidate has 2 of the 4 repeats it planned')
  })
})

describe('a crossing that leaves the points measured around it', () => {
  // B's c = 4 misses the 50 ms target from round `from` on (60 ms): its crossing falls below c = 4,
  // outside the points c = 4 and 16 that rounds 3–6 measured for the curve.
  const planned = { '64x16@c1': 2, '64x16@c4': 6, '64x16@c16': 6 }
  const curves = { '64x16': 6 }
  const bFrom = (from: number): ResultFile => {
    const b = side(() => 1, 6, 3)
    const slow = pipelineResult({
      concurrency: [1, 4, 16],
      repeats: 6,
      itl: (c, rep) => (c === 4 && rep + 1 >= from ? 60 : wiggle(ITL[c]!, (rep + 3) % 7, rep + 3)),
    })
    for (const p of slow.points) for (const x of p.runs) x.repeat += 1
    for (const s of slow.at_target) for (const x of s.runs) x.repeat += 1
    return from > 6 ? b : slow
  }
  const tputRow = (v: Verdict) => v.rows.find((r) => r.key === 'tput_at_target@64x16')!

  it('gives no increment for those rounds, and no blame while enough rounds drew their figure', () => {
    const a = keepPlanned(
      side(() => 1, 6, 0),
      planned,
      curves,
    )
    const b = keepPlanned(bFrom(6), planned, curves)
    expect(b.at_target[0]!.runs.map((r) => r.repeat)).toEqual([1, 2, 3, 4, 5])
    const row = tputRow(compareAB(a, b, { maxLooks: 6, look: 'last' }, FRESH))
    expect(row.n_candidate).toBe(5)
    expect(row.notes.join('\n')).not.toMatch(/crossing left/)
  })

  it('calls the row incomplete, naming the rounds, once too few drew their figure', () => {
    const a = keepPlanned(
      side(() => 1, 6, 0),
      planned,
      curves,
    )
    const b = keepPlanned(bFrom(3), planned, curves)
    expect(b.at_target[0]!.runs.map((r) => r.repeat)).toEqual([1, 2])
    const v = compareAB(a, b, { maxLooks: 6, look: 'last' }, FRESH)
    expect(tputRow(v).status).toBe('incomplete')
    expect(tputRow(v).notes.join('\n')).toContain(
      'repeat 3, 4, 5, 6: the crossing left the points measured around it, so 2 of the 6 repeats it planned drew a figure; the whole curve would be needed to measure it',
    )
  })
})
