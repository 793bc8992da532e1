import { describe, expect, it } from 'vitest'
import { compareToBaseline } from '../../src/gate/compare.js'
import { costOf } from '../../src/gate/cost.js'
import type { Baseline } from '../../src/gate/types.js'
import { atTargetLines, curvesFor } from '../../src/github/curves.js'
import type { RunStamp } from '../../src/github/status-comment.js'
import { buildComment, buildFullReport, buildSummary, headline, type ReportInput } from '../../src/github/summary.js'
import { COMMENT_LIMIT_CHARS } from '../../src/github/trim.js'
import { appendRefresh } from '../../src/gate/refresh.js'
import type { ResultFile } from '../../src/types.js'
import { baseline, env, result, verdict } from '../action/fixtures.js'
import { makeResult, wiggle } from '../gate/fixtures.js'

const STAMP: RunStamp = {
  headSha: 'feedc0ffee1234567890',
  at: '2026-03-02T10:20:30.000Z',
  runAttempt: '3',
  runUrl: 'https://github.com/acme/infer/actions/runs/1',
}
const RUN = 'https://github.com/acme/infer/actions/runs/1'

const input = (over: Partial<ReportInput> = {}): ReportInput => ({
  mode: 'gate',
  outcome: 'regression',
  sweepName: 'gate',
  baselinePath: 'baselines/gate.json',
  result: result(),
  baseline: baseline(),
  verdict: verdict('regression'),
  charts: ['```mermaid\nxychart-beta\n```'],
  notes: [],
  runUrl: 'https://github.com/acme/infer/actions/runs/1',
  stamp: STAMP,
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

  it('holds the stamp, the verdict table, at-target line, chart and methodology table, in that order', () => {
    const md = buildSummary(input())
    const order = [
      '## ❌ servegate: regression',
      `for feedc0ffee12 · 2026-03-02 10:20 UTC · attempt 3 · [run](${RUN})`,
      'Regressed: p95 ITL 128×32 c=16',
      'Throughput at',
      '### servegate verdict: REGRESSION',
      '#### Latency vs throughput',
      '#### Measurements',
    ]
    const at = order.map((part) => md.indexOf(part))
    expect(at.every((x) => x >= 0)).toBe(true)
    expect([...at].sort((a, b) => a - b)).toEqual(at)
    expect(md).not.toContain('Workflow run')
  })

  it('puts the stamp right under the comment headline', () => {
    expect(buildComment(input())).toMatch(
      /^### ❌ servegate: regression — sweep "gate" vs baselines\/gate.json\n\nfor feedc0ffee12 · 2026-03-02 10:20 UTC · attempt 3 · /,
    )
  })

  it('states the cost once, under the verdict line, in the comment, the summary and the full report', () => {
    const v = verdict('regression', { cost: costOf({ engineStarts: 9, pointRuns: 54 }, 61.234, 120, false) })
    const line = 'cost: 9 engine starts, 54 point-runs, 61.2 GPU-minutes (cap 120)'
    const head = `### ❌ servegate: regression — sweep "gate" vs baselines/gate.json\n\n${line}\n\nfor feedc0ffee12 · `
    expect(buildComment(input({ verdict: v })).slice(0, head.length)).toBe(head)
    for (const md of [buildComment(input({ verdict: v })), buildSummary(input({ verdict: v })), buildFullReport(input({ verdict: v }))]) {
      expect(md.split(line).length - 1).toBe(1)
      expect(md.indexOf(line)).toBeLessThan(md.indexOf('### servegate verdict: REGRESSION'))
    }
    expect(buildComment(input())).not.toContain('cost:')
  })

  it('leaves the server URL and host name out of the comment unless show-host, and keeps them in the summary', () => {
    const r: ResultFile = { ...result(), env: env({ base_url: 'http://10.1.2.3:8000', host: { hostname: 'gpu-node-17.corp', platform: 'linux', cpus: 8 } }) }
    const comment = buildComment(input({ result: r }))
    expect(comment).not.toContain('10.1.2.3')
    expect(comment).not.toContain('gpu-node-17')
    const shown = buildComment(input({ result: r, showHost: true }))
    expect(shown).toContain('| Server | http://10.1.2.3:8000 |')
    expect(shown).toContain('gpu-node-17.corp')
    expect(buildSummary(input({ result: r }))).toContain('http://10.1.2.3:8000')
  })

  it('escapes hostile environment changes, reasons and notes in the comment and the summary', () => {
    const v = verdict('not_comparable', {
      envChanges: [{ field: 'engine', baseline: 'vllm 0.11.0', candidate: 'vllm <img src=x onerror=alert(1)> | @org/team\n`x`', blame: 'repository' }],
      reasons: ['not comparable: GPU differs: baseline NVIDIA B200, candidate <script>alert(1)</script>'],
    })
    for (const md of [
      buildComment(input({ outcome: 'not_comparable', verdict: v })),
      buildSummary(input({ outcome: 'not_comparable', verdict: v, notes: ['API said <b>no</b> to @octocat'] })),
    ]) {
      expect(md).not.toMatch(/<img|<script|<b>/)
      expect(md).not.toMatch(/@(?!\u200D)(org|octocat)/)
      const row = md.split('\n').find((l) => l.startsWith('| repository | engine |'))!
      expect(row.split(/(?<!\\)\|/).slice(1, -1)).toHaveLength(4)
    }
  })

  it('renders through the renderers it is given', () => {
    const md = buildComment(input({ renderers: { verdict: (v) => `V(${v.verdict})`, report: (_r, o) => `R(showHost=${o.showHost})` } }))
    expect(md).toContain('V(regression)')
    expect(md).toContain('R(showHost=false)')
  })

  it('the comment links to the run and its artifacts, and stays under the comment limit with a huge report', () => {
    const md = buildComment(input({ renderers: { verdict: (v) => `VERDICT ${v.verdict}`, report: () => 'r'.repeat(200_000) } }))
    expect(md.length).toBeLessThanOrEqual(COMMENT_LIMIT_CHARS)
    expect(md).toContain(`[Workflow run and full job summary](${RUN}) · [artifacts](${RUN}#artifacts)`)
    expect(md).toContain(
      `left out to stay under GitHub's 65,536-character comment limit: the methodology's table. The full report is in the job summary and [the run's artifacts](${RUN}#artifacts).`,
    )
    expect(md).toContain('VERDICT regression')
    // The small chart, dropped before the big table, fits again once the table is gone.
    expect(md).toContain('```mermaid')
  })

  it('has no verdict section without a verdict (a full sweep with no baseline)', () => {
    const md = buildSummary(input({ outcome: 'none', baseline: null, verdict: null }))
    expect(md).toContain('📊 servegate: measured (no baseline to compare with) — sweep "gate"\n')
    expect(md).not.toContain('servegate verdict')
    expect(md).toContain('#### Measurements')
  })
})

describe('a verdict table too big for the comment', () => {
  // 400 concurrencies, 10 days of history; the candidate is 60 % slower at three points. Built by the real compare.
  const CONCS = Array.from({ length: 400 }, (_, i) => i + 1)
  const SLOW = new Set([7, 123, 350])
  const day = (d: number, slow: ReadonlySet<number>): ResultFile =>
    makeResult({
      itl: Object.fromEntries(CONCS.map((c) => [c, [0, 1, 2].map((r) => wiggle(10 + c / 10, d, r) * (slow.has(c) ? 1.6 : 1))])),
      env: (e) => {
        e.finished_at = `2025-01-${String(d + 1).padStart(2, '0')}T01:00:00.000Z`
      },
    })
  let history: Baseline | null = null
  for (let d = 0; d < 10; d++) history = appendRefresh(history, day(d, new Set()), { name: 'gate' })
  const candidate = day(10, SLOW)
  const v = compareToBaseline(history!, candidate)
  const big = input({ result: candidate, baseline: history!, verdict: v, outcome: v.verdict, charts: [] })

  it('is a regression verdict with hundreds of rows that cannot fit whole', () => {
    expect(v.verdict).toBe('regression')
    expect(v.regressions).toHaveLength(3)
    expect(v.rows.length).toBeGreaterThan(400)
    expect(buildFullReport(big).length).toBeGreaterThan(COMMENT_LIMIT_CHARS)
  })

  it('loses pass rows, never the regressions, and says how many rows went', () => {
    const md = buildComment(big)
    expect(md.length).toBeLessThanOrEqual(COMMENT_LIMIT_CHARS)
    expect(md).toContain('### servegate verdict: REGRESSION')
    for (const label of v.regressions) expect(md).toMatch(new RegExp(`\\| \\*\\*regression\\*\\* \\| ${label.replace(/[()]/g, '\\$&')} \\|`))
    const shown = md.split('\n').filter((l) => /^\| (\*\*regression\*\*|pass|improvement|undecided|unmeasured|invalid|missing) \|/.test(l)).length
    const left = Number(/> \*\*Note:\*\* (\d+) rows of the verdict table left out/.exec(md)?.[1])
    expect(left).toBeGreaterThan(0)
    expect(shown + left).toBe(v.rows.length)
    expect(md).toContain(`all rows are in the job summary and [the run's artifacts](${RUN}#artifacts)`)
    // The sentence under the verdict counts the whole verdict, not the rows shown.
    expect(md).toContain('3 gated metrics regressed')
  })

  it('keeps the whole table in the job summary', () => {
    const md = buildSummary(big)
    const shown = md.split('\n').filter((l) => /^\| (\*\*regression\*\*|pass|improvement|undecided|unmeasured|invalid|missing) \|/.test(l)).length
    expect(shown).toBe(v.rows.length)
    expect(md).not.toContain('rows of the verdict table left out')
  })
})
