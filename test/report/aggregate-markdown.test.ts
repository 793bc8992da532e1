import { describe, expect, it } from 'vitest'
import { aggregateRecords } from '../../src/gate/aggregate.js'
import { buildVerdictRecord } from '../../src/gate/record.js'
import { renderAggregateMarkdown } from '../../src/report/aggregate-markdown.js'
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
