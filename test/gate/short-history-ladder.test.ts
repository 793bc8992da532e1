import { describe, expect, it } from 'vitest'
import { DEFAULT_MAX_ROUNDS, lookAt, lookRounds } from '../../src/gate/ab-looks.js'
import { startsByRound } from '../../src/plan/ab-schedule.js'
import { compareToBaseline } from '../../src/gate/compare.js'
import { firstStep, nextStep, stepOptions, type LadderStep } from '../../src/gate/ladder.js'
import { mergeResults } from '../../src/gate/merge.js'
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

/** An exclusive A/B job of `rounds` rounds: each side's engine restarted around its slots (startsByRound). */
function abJob(seed: number, rounds: number, factorB: number): { a: ResultFile; b: ResultFile } {
  const ids = startsByRound(rounds, 'exclusive')
  const side = (s: 'A' | 'B', factor: number): ResultFile => {
    // Each start measures its rounds (one or two) as its repeats 1, 2; round r becomes repeat r + 1.
    const measured = new Map<number, { result: ResultFile; used: number }>()
    const slots = Array.from({ length: rounds }, (_, r) => {
      const id = ids[s][r]!
      let st = measured.get(id)
      if (st === undefined)
        measured.set(id, (st = { result: start(seed * 1000 + (s === 'A' ? 0 : 500) + id, ids[s].filter((x) => x === id).length, factor), used: 0 }))
      return { result: st.result, k: st.used++ }
    })
    const first = slots[0]!.result
    const pick = <T extends { repeat: number }>(of: (x: ResultFile) => readonly T[]): T[] =>
      slots.map(({ result, k }, r) => ({ ...of(result)[k]!, repeat: r + 1 }))
    return {
      ...first,
      config: { ...first.config, repeats: rounds },
      points: first.points.map((p, i) => ({ ...p, runs: pick((x) => x.points[i]!.runs) })),
      at_target: first.at_target.map((t, i) => ({ ...t, runs: pick((x) => x.at_target[i]!.runs) })),
    }
  }
  return { a: side('A', 1), b: side('B', factorB) }
}

/** The ladder as the Action climbs it with `confirm` and a reference command. */
function ladder(candidate: ResultFile, extra: ResultFile, job: { a: ResultFile; b: ResultFile }): { path: string[]; last: Verdict } {
  const climb = { hasReference: true, confirm: true, tolerance: 0.05 }
  let step: LadderStep = firstStep(true, 'ladder')
  let v = compareToBaseline(baseline, candidate, stepOptions(step, climb))
  const path = [`${step}:${v.verdict}`]
  for (;;) {
    const next = nextStep(v, { step, canConfirm: v.confirm !== null, hasReference: true, hostChanged: false })
    if (next === null) break
    if (next === 'confirm') v = compareToBaseline(baseline, mergeResults(candidate, extra), stepOptions(next, climb))
    else {
      let decided: Verdict | null = null
      for (const r of lookRounds(6, DEFAULT_MAX_ROUNDS)) {
        decided = lookAt(job.a, job.b, r, DEFAULT_MAX_ROUNDS, stepOptions('ab', climb), 'exclusive')
        if (decided !== null) break
      }
      v = decided!
    }
    step = next
    path.push(`${step}:${v.verdict}`)
  }
  return { path, last: v }
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

  it('is called a regression by the ladder', () => {
    const job = abJob(9, DEFAULT_MAX_ROUNDS, SLOWER)
    const { path, last } = ladder(slow, start(8, 6, SLOWER, 4), job)
    // The stored baseline's regression is confirmed side by side before the PR is blamed.
    expect(path).toEqual(['baseline:regression', 'ab:regression'])
    expect(last.verdict).toBe('regression')
    expect(last.reasons[0]).toMatch(/^B regressed: p95 ITL 64×16 c=1, /)
  })

  it('passes the unchanged engine through the ladder', () => {
    const job = abJob(11, DEFAULT_MAX_ROUNDS, 1)
    const { path, last } = ladder(start(12, 3, 1, 4), start(13, 6, 1, 4), job)
    expect(path).toEqual(['baseline:undecided', 'confirm:undecided', 'ab:pass'])
    expect(last.verdict).toBe('pass')
    expect(gateExit(last.verdict, DEFAULT_FAIL_ON)).toBe(0)
  })
})
