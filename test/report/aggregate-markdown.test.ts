import { describe, expect, it } from 'vitest'
import { aggregateRecords } from '../../src/gate/aggregate.js'
import { costOf } from '../../src/gate/cost.js'
import { buildVerdictRecord } from '../../src/gate/record.js'
import { matrixCostLine, renderAggregateMarkdown, renderAggregateText } from '../../src/report/aggregate-markdown.js'
import { env, verdict } from '../action/fixtures.js'

// Records are files any job (or anyone with write access to the artifacts) wrote: every string is escaped.
const hostile = (label: string, runUrl: string) =>
  buildVerdictRecord({
    label,
    outcome: 'error',
    detail: 'boom <img src=x onerror=alert(1)> | @team [click](https://evil.test)',
    mode: 'gate',
    sweep: 'gate',
    comparedWith: null,
    verdict: null,
    env: env({ serve_command: 'vllm serve `rm -rf /`' }),
    runner: { name: 'gpu|1', os: 'Linux', arch: null, labels: null },
    job: { run_url: runUrl, job: 'bench', run_attempt: '2' },
    headSha: 'f00df00d',
    at: '2026-01-01T00:00:00Z',
    harnessVersion: '0.1.0',
  })

describe('renderAggregateMarkdown', () => {
  it('keeps every row to five cells and neutralises HTML, links and mentions from a record', () => {
    const agg = aggregateRecords(
      [
        { path: 'r/x.json', record: hostile('a|b', 'javascript:alert(1)') },
        { path: 'r/y.json', record: buildVerdictRecord({ ...hostileInput(), label: 'ok' }) },
      ],
      ['a|b', 'ok'],
    )
    const md = renderAggregateMarkdown(agg)
    const rows = md.split('\n').filter((l) => l.startsWith('| ') && !l.startsWith('| configuration') && !l.includes('gated metric'))
    expect(rows).toHaveLength(2)
    for (const r of rows) expect(r.split(/(?<!\\)\|/).length - 2, r).toBe(5)
    expect(md).not.toContain('<img')
    expect(md).not.toContain('](javascript:')
    expect(md).toContain('\\[click\\](https://evil.test)')
    expect(md).not.toMatch(/@team/)
    expect(md).toContain('[bench](https://github.test/acme/infer/actions/runs/1) attempt 2')
  })
})

describe('the matrix states its cost', () => {
  const costed = (label: string, starts: number, runs: number, minutes: number) =>
    buildVerdictRecord({ ...hostileInput(), label, verdict: verdict('pass', { cost: costOf({ engineStarts: starts, pointRuns: runs }, minutes, 120, false) }) })
  const agg = aggregateRecords(
    [
      { path: 'r/a.json', record: costed('a', 9, 54, 61.2) },
      { path: 'r/b.json', record: costed('b', 5, 30, 20.05) },
      { path: 'r/c.json', record: buildVerdictRecord({ ...hostileInput(), label: 'c' }) },
    ],
    ['a', 'b', 'c'],
  )

  it('sums what the configurations spent, says over how many, and names no cap (caps are per configuration)', () => {
    expect(matrixCostLine(agg)).toBe('cost: 14 engine starts, 84 point-runs, 81.3 GPU-minutes over 2 of 3 configurations')
    expect(matrixCostLine({ rows: agg.rows.filter((r) => r.label !== 'c') })).toBe(
      'cost: 14 engine starts, 84 point-runs, 81.3 GPU-minutes over 2 configurations',
    )
    expect(matrixCostLine({ rows: agg.rows.filter((r) => r.label === 'c') })).toBeNull()
  })

  it("puts the sum under the headline and each configuration's own cost in its details", () => {
    const md = renderAggregateMarkdown(agg)
    expect(md.split('\n\n')[1]).toBe('cost: 14 engine starts, 84 point-runs, 81.3 GPU-minutes over 2 of 3 configurations')
    expect(md).toContain('\n- cost: 9 engine starts, 54 point-runs, 61.2 GPU-minutes (cap 120)\n')
    expect(renderAggregateText(agg).split('\n')[1]).toBe('  cost: 14 engine starts, 84 point-runs, 81.3 GPU-minutes over 2 of 3 configurations')
  })
})

function hostileInput() {
  return {
    label: 'ok',
    outcome: 'pass' as const,
    mode: 'gate',
    sweep: 'gate',
    comparedWith: 'baselines/gate.json',
    verdict: verdict('pass'),
    env: env(),
    runner: { name: 'gpu-2', os: 'Linux', arch: 'X64', labels: null },
    job: { run_url: 'https://github.test/acme/infer/actions/runs/1', job: 'bench', run_attempt: '2' },
    headSha: 'f00df00d',
    at: '2026-01-01T00:00:00Z',
    harnessVersion: '0.1.0',
  }
}
