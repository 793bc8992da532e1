import { describe, expect, it } from 'vitest'
import { compareToBaseline } from '../../src/gate/compare.js'
import type { Baseline, Verdict } from '../../src/gate/types.js'
import { appendRefresh } from '../../src/gate/refresh.js'
import { pipeDay, pipelineResult } from './fixtures.js'

/** Five refreshes built through the summarizer (C = 1, 4, 16; 3 repeats). */
function history(days = 5, over: Parameters<typeof pipeDay>[2] = {}): Baseline {
  let b: Baseline | null = null
  for (let d = 0; d < days; d++) b = appendRefresh(b, pipeDay(d, 1, over), { name: 'gate' })
  return b!
}
const base = history()
const row = (v: Verdict, key: string) => v.rows.find((r) => r.key === key)!

describe('the verdict by blame', () => {
  it('passes a clean candidate built the way a sweep builds it', () => {
    const cand = pipeDay(7)
    expect(cand.points.flatMap((p) => p.runs).every((r) => r.validity.valid)).toBe(true)
    const v = compareToBaseline(base, cand)
    expect(v.verdict, v.reasons.join('\n')).toBe('pass')
  })

  it('calls a clear speed-up an improvement', () => {
    const v = compareToBaseline(base, pipeDay(7, 1 / 1.3))
    expect(v.verdict).toBe('improvement')
    expect(v.regressions).toEqual([])
  })

  it('keeps a run whose failed requests stay within the budget, and notes them', () => {
    // 1 of 192 requests (0.5 %) at C = 16, repeat 1: invalid in the result file, within the 1 % budget.
    const cand = pipeDay(7, 1, { run: (c, r) => (c === 16 && r === 1 ? { failed: 1 } : {}) })
    const run = cand.points.find((p) => p.concurrency === 16)!.runs[1]!
    expect(run.validity.issues.map((i) => i.code)).toEqual(['requests_failed'])
    const v = compareToBaseline(base, cand)
    expect(v.verdict, v.reasons.join('\n')).toBe('pass')
    const itl = row(v, 'itl_p95@64x16@c16')
    expect(itl.n_candidate).toBe(3)
    expect(itl.notes).toContain('run 1: 1 request failed (0.5 %), within the budget 1.0 %')
    // Throughput at target was drawn again through that run.
    expect(row(v, 'tput_at_target@64x16').n_candidate).toBe(3)
  })

  it('is broken when failed requests go beyond the budget, by share or by count', () => {
    const cand = pipeDay(7, 1, { run: (c, r) => (c === 16 && r === 1 ? { failed: 10 } : {}) })
    const v = compareToBaseline(base, cand)
    expect(v.verdict).toBe('broken')
    expect(row(v, 'itl_p95@64x16@c16').notes).toContain('run 1: 10 requests failed (5.2 %), beyond the budget 1.0 %')
    expect(v.reasons.some((r) => r.startsWith('p95 ITL 64×16 c=16: broken — '))).toBe(true)
    // A count budget from the config replaces the share.
    expect(compareToBaseline(base, cand, { maxFailedRequests: 10 }).verdict).toBe('pass')
    expect(compareToBaseline(base, pipeDay(7, 1, { run: (c, r) => (c === 16 && r === 1 ? { failed: 1 } : {}) }), { maxFailedRequests: 0 }).verdict).toBe(
      'broken',
    )
  })

  it('is broken when the server stopped early, even though ITL looks faster', () => {
    const v = compareToBaseline(base, pipeDay(7, 0.8, { run: (c) => (c === 4 ? { outTokens: 12 } : {}) }))
    expect(v.verdict).toBe('broken')
    const notes = row(v, 'itl_p95@64x16@c4').notes
    expect(notes).toContain('64x16@c4: output tokens per request changed from 16 to 12')
    expect(notes.some((n) => n.includes('output_len_mismatch'))).toBe(true)
  })

  it('is broken when a point served nothing (a dead server)', () => {
    const v = compareToBaseline(base, pipeDay(7, 1, { run: (c) => (c === 16 ? { failed: 192 } : {}) }))
    expect(v.verdict).toBe('broken')
    expect(row(v, 'itl_p95@64x16@c16').notes).toContain('run 0: no request completed (192 failed): the server did not serve')
  })

  it('is incomplete, not a pass on n = 1, when only 1 of 3 planned repeats ran', () => {
    const v = compareToBaseline(base, pipeDay(7, 1, { skip: (_c, r) => r > 0 }))
    expect(v.verdict).toBe('incomplete')
    expect(row(v, 'itl_p95@64x16@c1').notes).toContain('64x16@c1: the candidate has 1 of the 3 repeats it planned')
  })

  it("is incomplete with fewer runs than the baseline's runs per refresh", () => {
    const v = compareToBaseline(base, pipeDay(7, 1, { repeats: 2, config: { repeats: 2 } }))
    expect(v.verdict).toBe('incomplete')
    expect(row(v, 'itl_p95@64x16@c4').notes).toContain("64x16@c4: the candidate has 2 of the baseline's 3 runs per refresh")
  })

  it('is incomplete when a repeat stopped before the end of its curve', () => {
    const v = compareToBaseline(base, pipeDay(7, 1, { skip: (c, r) => c === 16 && r === 2 }))
    expect(v.verdict).toBe('incomplete')
    expect(row(v, 'tput_at_target@64x16').notes).toContain('repeat 2: the curve stopped early (measured c=1, 4 of 1, 4, 16)')
  })

  it('is incomplete when a gated point is missing altogether', () => {
    const v = compareToBaseline(base, pipeDay(7, 1, { skip: (c) => c === 16 }))
    expect(v.verdict).toBe('incomplete')
    expect(row(v, 'itl_p95@64x16@c16').status).toBe('missing')
  })

  it('is unmeasured, never pass, when the host spoiled so many runs that fewer than two of three are valid', () => {
    for (const [spoil, cause] of [
      [{ saturated: true }, /unmeasured: a busy host/],
      [{ gpuShared: true }, /unmeasured: another process shared the GPU/],
    ] as const) {
      const v = compareToBaseline(base, pipeDay(7, 1, { run: (c, r) => (c === 4 && r > 0 ? spoil : {}) }))
      expect(v.verdict).toBe('unmeasured')
      expect(row(v, 'itl_p95@64x16@c4').status).toBe('invalid')
      expect(v.reasons[0]).toMatch(cause)
    }
  })

  it('decides on the two valid runs of three when the host spoiled one, and says so on the row', () => {
    const v = compareToBaseline(base, pipeDay(7, 1, { run: (c, r) => (c === 4 && r === 0 ? { saturated: true } : {}) }))
    const r = row(v, 'itl_p95@64x16@c4')
    expect(r.status).toBe('pass')
    expect(r.n_candidate).toBe(2)
    expect(r.notes.join(' ')).toMatch(/run 0 invalid \(client_saturated\)/)
    expect(v.verdict).toBe('pass')
  })

  it('does not call a regression on the one run an interrupted sweep left: incomplete, which still fails', () => {
    // Killed after its first run: one repeat of C=1, nothing else. That run is 30 % slower.
    const cut = compareToBaseline(base, pipeDay(7, 1.3, { skip: (c, r) => !(c === 1 && r === 0) }))
    const r = row(cut, 'itl_p95@64x16@c1')
    expect(r.n_candidate).toBe(1)
    expect(r.status).toBe('incomplete')
    expect(r.notes.join(' ')).toMatch(/only valid run \(1 of 1\)/)
    expect(cut.verdict).toBe('incomplete')
    // Two finished repeats of the point may call it.
    const two = compareToBaseline(base, pipeDay(7, 1.3, { skip: (c, r) => c !== 1 || r === 2 }))
    expect(row(two, 'itl_p95@64x16@c1').status).toBe('regression')
  })

  it('does not call a regression on the one valid run the host left; the row says so and stays undecided', () => {
    const spoilAllButOne = { run: (c: number, r: number) => (c === 4 && r > 0 ? { saturated: true } : {}) }
    const slow = compareToBaseline(base, pipeDay(7, 1.4, spoilAllButOne))
    const r = row(slow, 'itl_p95@64x16@c4')
    expect(r.n_candidate).toBe(1)
    expect(r.status).toBe('invalid')
    expect(r.notes.join(' ')).toMatch(/only valid run \(1 of 3\)/)
    // The other points, all valid and 40 % slower, still regress: nothing else is excused.
    expect(slow.verdict).toBe('regression')
    expect(slow.regressions).not.toContain(r.label)
    // With two valid runs left the regression stands.
    const two = compareToBaseline(base, pipeDay(7, 1.4, { run: (c: number, r: number) => (c === 4 && r === 2 ? { saturated: true } : {}) }))
    expect(row(two, 'itl_p95@64x16@c4').status).toBe('regression')
  })

  it('names why the baseline left a row unmeasured also when another row regressed', () => {
    // Every refresh's runs at C = 4 were spoiled by a busy host (client_saturated): that row has no baseline.
    const spoiled = history(5, { run: (c) => (c === 4 ? { saturated: true } : {}) })
    const v = compareToBaseline(spoiled, pipeDay(7, 1.4))
    expect(v.verdict).toBe('regression')
    expect(row(v, 'itl_p95@64x16@c4').status).toBe('unmeasured')
    expect(v.regressions).not.toContain('p95 ITL 64×16 c=4')
    expect(v.reasons).toContain("the baseline has 0 valid runs for p95 ITL 64×16 c=4: its refreshes' runs were invalid (client_saturated); refresh it")
  })

  it('says why a repeat has no throughput at target: its runs were invalid, with their codes', () => {
    // A busy host saturated the client in every point's repeat 0: that repeat has no curve to read.
    const v = compareToBaseline(base, pipeDay(7, 1, { run: (_c, r) => (r === 0 ? { saturated: true } : {}) }))
    const tput = row(v, 'tput_at_target@64x16')
    expect(tput.notes).toContain('repeat 0: no valid point to draw the curve through (its runs were invalid: client_saturated), so no throughput at target')
  })

  it('is not comparable when a measurement setting differs, naming it', () => {
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ warmup: 8 }, 'measurement settings differ: warmup: baseline auto, candidate 8'],
      [{ prompts_per_concurrency: 6 }, 'measurement settings differ: prompts per concurrency: baseline 12, candidate 6'],
      [{ model: 'org/other' }, 'measurement settings differ: model: baseline org/model, candidate org/other'],
      [{ server: { api: 'chat' } }, 'measurement settings differ: api: baseline completions, candidate chat'],
    ]
    for (const [config, reason] of cases) {
      const v = compareToBaseline(base, pipeDay(7, 1, { config }))
      expect(v.verdict).toBe('not_comparable')
      expect(v.reasons).toContain(`not comparable: ${reason}`)
    }
  })

  it('outranks everything with not comparable, then broken over a regression', () => {
    const brokenAndSlow = pipeDay(7, 1.3, { run: (c) => (c === 1 ? { failed: 6 } : {}) })
    expect(compareToBaseline(base, brokenAndSlow).verdict).toBe('broken')
    expect(compareToBaseline(base, pipeDay(7, 1.3, { config: { warmup: 8 }, run: (c) => (c === 1 ? { failed: 6 } : {}) })).verdict).toBe('not_comparable')
  })
})

describe('a latency of zero', () => {
  it('leaves a row whose p95 ITL is 0 (every chunk in one read) unmeasured, never a pass', () => {
    const gaps: Record<number, number> = { 1: 0, 4: 20, 16: 80 }
    const cand = pipeDay(7, 1, { itl: (c) => gaps[c]! })
    expect(cand.points[0]!.runs[0]!.itl_ms.p95).toBe(0)
    const v = compareToBaseline(base, cand)
    expect(row(v, 'itl_p95@64x16@c1')).toMatchObject({ status: 'unmeasured', candidate: null, delta_pct: null })
    expect(v.verdict).toBe('unmeasured')
    expect(['pass', 'improvement']).not.toContain(v.verdict)
  })
})

describe('throughput at an unreachable target', () => {
  // 60 ms per token at every C: the 50 ms target is never met, so throughput at target is 0.
  const never = (factor = 1): Partial<Parameters<typeof pipelineResult>[0]> => ({ itl: () => 60 * factor })
  const hist = (over: Partial<Parameters<typeof pipelineResult>[0]>): Baseline => {
    let b: Baseline | null = null
    for (let d = 0; d < 3; d++) b = appendRefresh(b, pipeDay(d, 1, over), {})
    return b!
  }
  const tput = (v: Verdict) => row(v, 'tput_at_target@64x16')

  it('passes 0 → 0 without asking for extra repeats', () => {
    const v = compareToBaseline(hist(never()), pipeDay(5, 1, never()))
    expect(tput(v)).toMatchObject({ status: 'pass', baseline: 0, candidate: 0, bar_pct: null, sigma_pct: null })
    expect(v.confirm).toBeNull()
  })

  it('is a regression when the target becomes unreachable, and an improvement the other way', () => {
    const down = compareToBaseline(base, pipeDay(5, 1, never()))
    expect(tput(down).status).toBe('regression')
    expect(down.verdict).toBe('regression')
    const up = compareToBaseline(hist(never()), pipeDay(5))
    expect(tput(up).status).toBe('improvement')
    expect(tput(up).delta_pct).toBeNull()
  })
})
