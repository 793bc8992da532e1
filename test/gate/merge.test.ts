import { describe, expect, it } from 'vitest'
import { compareToBaseline } from '../../src/gate/compare.js'
import { mergeResults } from '../../src/gate/merge.js'
import { appendRefresh, baselineFromResult } from '../../src/gate/refresh.js'
import { makeResult, pipeDay } from './fixtures.js'

describe('mergeResults', () => {
  it('appends the extra runs per point and shifts their repeat numbers past the first result', () => {
    const first = makeResult({ itl: { 1: [10, 11, 12], 16: [20, 21, 22] }, tput: [900, 910, 920] })
    const extra = makeResult({ itl: { 1: [13, 14], 16: [23, 24] }, tput: [930, 940] })
    const m = mergeResults(first, extra)
    expect(m.points.map((p) => p.runs.map((r) => [r.repeat, r.itl_ms.p95]))).toEqual([
      [
        [0, 10],
        [1, 11],
        [2, 12],
        [3, 13],
        [4, 14],
      ],
      [
        [0, 20],
        [1, 21],
        [2, 22],
        [3, 23],
        [4, 24],
      ],
    ])
    expect(m.at_target[0]!.runs.map((r) => [r.repeat, r.throughput])).toEqual([
      [0, 900],
      [1, 910],
      [2, 920],
      [3, 930],
      [4, 940],
    ])
    // The inputs are left untouched.
    expect(first.points[0]!.runs).toHaveLength(3)
  })

  it('lets an invalid extra run still make its own throughput-at-target repeat invalid', () => {
    const first = makeResult({ itl: { 1: [10, 10, 10] } })
    const extra = makeResult({ itl: { 1: [10] }, run: () => ({ invalid: ['gpu_shared'] }) })
    // Three refreshes: one alone would leave the rows blind (MDC above 15 %), undecided whatever their runs.
    const baseline = appendRefresh(appendRefresh(baselineFromResult(first, 'b'), first, {}), first, {})
    const v = compareToBaseline(baseline, mergeResults(first, extra))
    const t = v.rows.find((r) => r.key === 'tput_at_target@4096x512')!
    // Three valid repeats of four remain: the row is decided on them and names the spoiled one.
    expect(t.status).toBe('pass')
    expect(t.n_candidate).toBe(3)
    expect(t.notes).toContain('run 3 invalid (gpu_shared)')
  })
})

describe('mergeResults and the fingerprint', () => {
  it('recounts tokens per chunk over the merged runs', () => {
    const first = pipeDay(0, 1, { repeats: 1, config: { repeats: 1 } })
    const extra = pipeDay(0, 1, { repeats: 1, config: { repeats: 1 }, run: () => ({ tokensPerChunk: 2 }) })
    const merged = mergeResults(first, extra)
    // 16 + 16 tokens over 16 + 8 chunks per request.
    expect(merged.fingerprint?.tokens_per_chunk['64x16@c1']).toBe(1.3)
    expect(first.fingerprint?.tokens_per_chunk['64x16@c1']).toBe(1)
  })

  it('plans every repeat both results planned, so invalid extra repeats count against completeness', () => {
    // 3 repeats of which 1 valid, then 6 more of which 1 valid: 2 valid runs of 9 planned.
    const spoiled = (valid: number) => ({ run: (_c: number, r: number) => ({ saturated: r >= valid }) })
    const first = pipeDay(5, 1, spoiled(1))
    const extra = pipeDay(5, 1, { repeats: 6, ...spoiled(1) })
    const merged = mergeResults(first, extra)
    expect(merged.config.repeats).toBe(9)
    let b = null
    for (const d of [0, 1, 2, 3, 4]) b = appendRefresh(b, pipeDay(d), { name: 'b' })
    const v = compareToBaseline(b!, merged)
    expect(v.verdict).toBe('unmeasured')
    expect(v.reasons[0]).toMatch(/^unmeasured: a busy host/)
  })
})
