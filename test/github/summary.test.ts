import { describe, expect, it } from 'vitest'
import { atTargetLines, curvesFor, median } from '../../src/github/curves.js'
import { buildComment, buildSummary, headline, type ReportInput } from '../../src/github/summary.js'
import { COMMENT_LIMIT_CHARS } from '../../src/github/trim.js'
import { baseline, result, verdict } from '../action/fixtures.js'

const input = (over: Partial<ReportInput> = {}): ReportInput => ({
  mode: 'gate',
  outcome: 'regression',
  sweepName: 'gate',
  baselinePath: 'baselines/gate.json',
  result: result(),
  baseline: baseline(),
  verdict: verdict('regression'),
  verdictMarkdown: '| verdict table |',
  reportMarkdown: '| methodology |',
  charts: ['```mermaid\nxychart-beta\n```'],
  notes: [],
  runUrl: 'https://github.com/acme/infer/actions/runs/1',
  ...over,
})

describe('curves', () => {
  it('takes medians per concurrency, ordered by concurrency, for candidate and baseline', () => {
    const [c] = curvesFor(result(), baseline())
    expect(c!.candidate.points).toEqual([
      { throughput: 100, latencyMs: 11, concurrency: 1 },
      { throughput: 905, latencyMs: 45, concurrency: 16 },
    ])
    expect(c!.baseline!.points).toEqual([
      { throughput: 100, latencyMs: 10, concurrency: 1 },
      { throughput: 1000, latencyMs: 40, concurrency: 16 },
    ])
  })

  it('has no baseline series without a baseline', () => {
    expect(curvesFor(result(), null)[0]!.baseline).toBeNull()
  })

  it('median handles even counts and ignores nulls', () => {
    expect(median([4, null, 1, 3, 2])).toBe(2.5)
    expect(median([null])).toBeNull()
  })

  it('states throughput at target with the change against the baseline', () => {
    // candidate runs 950, 960, 970 → 960; baseline 1000, 1000, 1040 → 1000; (960 − 1000) / 1000 = −4.0 %
    expect(atTargetLines(result(), baseline())).toEqual(['Throughput at p95 TPOT ≤ 50 ms, 128×32: **960 tok/s** vs baseline 1,000 tok/s (-4.0%)'])
  })
})

describe('summary and comment', () => {
  it('headline names the outcome, the sweep and the baseline', () => {
    expect(headline(input())).toBe('❌ servegate: regression — sweep "gate" vs baselines/gate.json')
    expect(headline(input({ outcome: 'refreshed' }))).toBe('🔄 servegate: baseline refreshed — sweep "gate" → baselines/gate.json')
  })

  it('holds the verdict table, at-target line, chart and methodology table', () => {
    const md = buildSummary(input())
    const order = ['servegate: regression', 'Regressed: p95 ITL 128×32 c=16', 'Throughput at', '| verdict table |', '#### Measurements', '```mermaid']
    for (const part of order) expect(md).toContain(part)
    expect(md).not.toContain('Workflow run')
  })

  it('the comment links to the run and stays under the comment limit with a huge report', () => {
    const md = buildComment(input({ reportMarkdown: 'r'.repeat(200_000) }))
    expect(md.length).toBeLessThanOrEqual(COMMENT_LIMIT_CHARS)
    expect(md).toContain('[Workflow run and full job summary](https://github.com/acme/infer/actions/runs/1)')
    expect(md).toContain("left out to stay under GitHub's 65,536-character comment limit: the methodology's table")
    expect(md).toContain('| verdict table |')
    // The small chart, dropped before the big table, fits again once the table is gone.
    expect(md).toContain('```mermaid')
  })

  it('has no verdict section without a verdict (a full sweep with no baseline)', () => {
    const md = buildSummary(input({ outcome: 'none', baseline: null, verdict: null, verdictMarkdown: null }))
    expect(md).toContain('📊 servegate: measured (no baseline to compare with) — sweep "gate"\n')
    expect(md).not.toContain('verdict table')
    expect(md).toContain('| methodology |')
  })
})
