import { describe, expect, it } from 'vitest'
import { DEFAULT_MAX_ROUNDS, lookAt, lookRounds } from '../../src/gate/ab-looks.js'
import { compareToBaseline } from '../../src/gate/compare.js'
import { firstStep, nextStep, stepOptions, type LadderStep } from '../../src/gate/ladder.js'
import { compareStarts } from '../../src/gate/seq-baseline.js'
import { DEFAULT_FAIL_ON, gateExit } from '../../src/gate/outcome.js'
import type { Baseline, Verdict } from '../../src/gate/types.js'
import { appendRefresh } from '../../src/gate/refresh.js'
import type { ResultFile } from '../../src/types.js'
import { createRng } from '../../src/util/rng.js'
import { pipelineResult } from './fixtures.js'

// The short-history case of the decision rule: a baseline of three refreshes with 2 % run noise,
// and an engine slowed so that every p95 ITL row measures about 12 % worse. Every result is built
// by the pipeline's summarizer; the noise comes from a seeded generator, so the verdicts are exact.
const ITL: Record<number, number> = { 1: 10, 4: 14, 16: 28 }
const CONCURRENCY = [1, 4, 16]
const RUN_CV = 0.02
const START_CV = 0.01

/** One engine start: `repeats` runs, p95 ITL × `factor` × the start's offset × run noise. */
function start(seed: number, repeats: number, factor: number, day = 0): ResultFile {
  const rng = createRng(seed)
  const offset = Math.exp(START_CV * rng.normal())
  const noise = CONCURRENCY.map(() => Array.from({ length: repeats }, () => Math.exp(RUN_CV * rng.normal())))
  const r = pipelineResult({
    concurrency: CONCURRENCY,
    repeats,
    itl: (c, rep) => ITL[c]! * factor * offset * noise[CONCURRENCY.indexOf(c)]![rep]!,
    env: (e) => void (e.finished_at = new Date(Date.UTC(2025, 0, 1 + day)).toISOString()),
  })
  for (const p of r.points) for (const x of p.runs) x.repeat += 1
  for (const s of r.at_target) for (const x of s.runs) x.repeat += 1
  return r
}

const baseline = [1, 2, 3].reduce<Baseline | null>((b, day) => appendRefresh(b, start(100 + day, 3, 1, day), { name: 'short' }), null)!
const SLOWER = 1.12

/** An exclusive A/B job of `rounds` rounds: each side's engine started afresh for every slot, one run per point. */
function abJob(seed: number, rounds: number, factorB: number): { a: ResultFile; b: ResultFile } {
  const side = (s: 'A' | 'B', factor: number): ResultFile => {
    const slots = Array.from({ length: rounds }, (_, r) => start(seed * 1000 + (s === 'A' ? 0 : 500) + r, 1, factor))
    const first = slots[0]!
    const pick = <T extends { repeat: number }>(of: (x: ResultFile) => readonly T[]): T[] => slots.map((slot, r) => ({ ...of(slot)[0]!, repeat: r + 1 }))
    return {
      ...first,
      config: { ...first.config, repeats: rounds },
      points: first.points.map((p, i) => ({ ...p, runs: pick((x) => x.points[i]!.runs) })),
      at_target: first.at_target.map((t, i) => ({ ...t, runs: pick((x) => x.at_target[i]!.runs) })),
    }
  }
  return { a: side('A', 1), b: side('B', factorB) }
}

/** The ladder as the Action climbs it with a reference command: the first sweep against the baseline, then A/B. */
function ladder(candidate: ResultFile, job: { a: ResultFile; b: ResultFile }): { path: string[]; last: Verdict; rounds: number | null } {
  const climb = { hasReference: true, canRestart: false, maxStarts: 1 }
  let step: LadderStep = firstStep(true, 'ladder')
  let v = compareStarts(baseline, candidate, stepOptions(step, climb), () => 0)
  const path = [`${step}:${v.verdict}`]
  let rounds: number | null = null
  for (;;) {
    const next = nextStep(v, { step, canRestart: false, hasReference: true, hostChanged: false })
    if (next === null) break
    for (const r of lookRounds(2, DEFAULT_MAX_ROUNDS)) {
      const look = lookAt(job.a, job.b, r, DEFAULT_MAX_ROUNDS, stepOptions('ab', climb), { A: true, B: true }, baseline)
      if (look.done) {
        v = look.verdict
        rounds = r
        break
      }
    }
    step = next
    path.push(`${step}:${v.verdict}`)
  }
  return { path, last: v, rounds }
}

describe('a 12 % slower engine against three refreshes', () => {
  const slow = start(7, 3, SLOWER, 4)

  it('is red from compare alone: the rows that can see call it, the one that cannot is blind', () => {
    const v = compareToBaseline(baseline, slow)
    expect(v.verdict).toBe('regression')
    expect(gateExit(v.verdict, DEFAULT_FAIL_ON)).toBe(1)
    expect(v.regressions).toEqual(['p95 ITL 64×16 c=1', 'p95 ITL 64×16 c=4'])
    expect(v.blind).toContain('p95 ITL 64×16 c=16')
  })

  it('is called a regression by the ladder, side by side, in a few rounds', () => {
    const job = abJob(9, DEFAULT_MAX_ROUNDS, SLOWER)
    const { path, last, rounds } = ladder(slow, job)
    // The stored baseline's regression is confirmed side by side before the PR is blamed.
    expect(path).toEqual(['baseline:regression', 'ab:regression'])
    expect(rounds).toBeLessThanOrEqual(12)
    expect(last.verdict).toBe('regression')
    // The first look where a row crosses its boundary stops the job: the rows that crossed by then are
    // named (c=1 by three single-run steps of a third of its boundary each, which reach it exactly).
    expect(last.reasons[0]).toBe('B regressed: p95 ITL 64×16 c=1, p95 ITL 64×16 c=4 (B is worse than A beyond the bar)')
  })

  it('passes the unchanged engine through the ladder', () => {
    const job = abJob(11, DEFAULT_MAX_ROUNDS, 1)
    const { path, last } = ladder(start(12, 3, 1, 4), job)
    expect(path).toEqual(['baseline:undecided', 'ab:pass'])
    expect(last.verdict).toBe('pass')
    expect(gateExit(last.verdict, DEFAULT_FAIL_ON)).toBe(0)
  })
})

describe('more candidate starts against a stored baseline of one refresh', () => {
  it('keep every row measured: the stored centre is held to its own runs, not to the candidate’s growing plan', async () => {
    const { mergeResults } = await import('../../src/gate/merge.js')
    const one = appendRefresh(null, start(201, 3, 1, 1), { name: 'one' })
    // The first sweep (3 repeats, start 0), then two fresh starts of one run each (repeats 4 and 5).
    const candidate = [start(301, 1, 1), start(302, 1, 1)].reduce((c, s) => mergeResults(c, s), start(300, 3, 1))
    expect(candidate.config.repeats).toBe(5)
    const v = compareStarts(one, candidate, { look: 'last', maxLooks: 8 }, (r) => Math.max(0, r - 3))
    const gated = v.rows.filter((r) => r.gated)
    // Before, a centre of 3 runs against 5 planned read as "no valid measurement on one side".
    expect(gated.map((r) => r.status).filter((s) => s === 'unmeasured' || s === 'invalid')).toEqual([])
    // One refresh leaves its centre too uncertain to rule 10 % out: undecided (red), never unmeasured.
    expect(v.verdict).toBe('undecided')
    expect(gated.every((r) => r.n_baseline === 3 && r.n_candidate === 5)).toBe(true)
  })
})

describe('a stored refresh the host spoiled in part', () => {
  it('leaves a row whose centre kept 1 valid run of the 3 it planned unmeasured', () => {
    // The refresh's c = 16 runs 0 and 1 were client_saturated: one valid run remains of the three it planned.
    const spoiled = pipelineResult({
      concurrency: CONCURRENCY,
      repeats: 3,
      itl: (c) => ITL[c]!,
      run: (c, rep) => (c === 16 && rep < 2 ? { saturated: true } : {}),
      env: (e) => void (e.finished_at = new Date(Date.UTC(2025, 0, 1)).toISOString()),
    })
    const one = appendRefresh(null, spoiled, { name: 'spoiled' })
    const v = compareStarts(one, start(400, 3, 1), { look: 'last', maxLooks: 8 }, () => 0)
    const status = Object.fromEntries(v.rows.filter((r) => r.gated).map((r) => [r.key, r.status]))
    expect(status['itl_p95@64x16@c16']).toBe('unmeasured')
    expect(status['itl_p95@64x16@c1']).toBe('pass')
    expect(v.verdict).toBe('unmeasured')
  })

  it('names the shortfall of a centre that kept 3 valid runs of the 6 its refreshes planned, and why the others went', () => {
    // Three refreshes of 2 repeats, each with its first c = 16 run client_saturated: 3 valid of 6 planned.
    const refresh = (day: number): ResultFile =>
      pipelineResult({
        concurrency: CONCURRENCY,
        repeats: 2,
        itl: (c) => ITL[c]!,
        run: (c, rep) => (c === 16 && rep === 0 ? { saturated: true } : {}),
        env: (e) => void (e.finished_at = new Date(Date.UTC(2025, 0, 1 + day)).toISOString()),
      })
    const three = [1, 2, 3].reduce<Baseline | null>((b, day) => appendRefresh(b, refresh(day), { name: 'thin' }), null)!
    const v = compareStarts(three, start(500, 2, 1), { look: 'last', maxLooks: 8 }, () => 0)
    const row = v.rows.find((r) => r.key === 'itl_p95@64x16@c16')!
    expect(row.status).toBe('unmeasured')
    const shortfall =
      'the baseline has 3 usable runs of the 6 its refreshes planned (the others were invalid: client_saturated; refresh it), and a measured row needs at least 1 and two thirds of those planned'
    // The row says so before its decision's note, and the verdict's cause names it instead of a bare "no valid measurement".
    expect(row.notes[0]).toBe(shortfall)
    expect(v.verdict).toBe('unmeasured')
    // Throughput at target is short alike: each refresh's curve with a saturated c = 16 run gave no figure.
    expect(v.reasons[0]).toBe(`unmeasured: p95 ITL 64×16 c=16: ${shortfall}; throughput at target 64×16: ${shortfall}`)
  })
})
