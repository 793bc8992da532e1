import { describe, expect, it } from 'vitest'
import { aggregateExit, aggregateRecords, countsAs, NO_RECORD, parseExpect, recordContradiction, type FoundRecord } from '../../src/gate/aggregate.js'
import { compareToBaseline } from '../../src/gate/compare.js'
import { DEFAULT_FAIL_ON, FAIL_ON_VERDICTS, VERDICT_PRECEDENCE, worstVerdict } from '../../src/gate/outcome.js'
import { buildVerdictRecord, type RecordOutcome, type VerdictRecord } from '../../src/gate/record.js'
import type { Baseline, Verdict, VerdictKind } from '../../src/gate/types.js'
import { UsageError } from '../../src/errors.js'
import { appendRefresh } from '../../src/gate/refresh.js'
import { pipeDay } from './fixtures.js'

// Verdicts the gate really gives: five refreshes through the summarizer, candidates as sweeps build them.
let base: Baseline | null = null
for (let d = 0; d < 5; d++) base = appendRefresh(base, pipeDay(d, 1), { name: 'gate' })
const PASS = compareToBaseline(base!, pipeDay(7))
const SLOWER = compareToBaseline(base!, pipeDay(7, 1.3))
const INCOMPLETE = compareToBaseline(base!, pipeDay(7, 1, { skip: (c) => c === 16 }))

function record(label: string, v: Verdict | null, over: { outcome?: RecordOutcome; at?: string; head?: string | null; detail?: string } = {}): FoundRecord {
  const rec = buildVerdictRecord({
    label,
    outcome: over.outcome ?? v!.verdict,
    detail: over.detail ?? null,
    mode: 'gate',
    sweep: 'gate',
    comparedWith: 'baselines/gate.json',
    verdict: v,
    env: pipeDay(7).env,
    runner: { name: `gpu-${label}`, os: 'Linux', arch: 'X64', labels: null },
    job: { run_url: 'https://github.test/acme/infer/actions/runs/1', job: 'bench', run_attempt: '1' },
    headSha: over.head === undefined ? 'f00df00d' : over.head,
    at: over.at ?? '2026-01-01T10:00:00.000Z',
    harnessVersion: '0.1.0',
  })
  return { path: `records/servegate-record-${label}/servegate-result.record.json`, record: rec }
}

describe('the gate really decided these (fixtures)', () => {
  it('pass, regression and incomplete', () => {
    expect([PASS.verdict, SLOWER.verdict, INCOMPLETE.verdict]).toEqual(['pass', 'regression', 'incomplete'])
  })
})

describe('VERDICT_PRECEDENCE', () => {
  it("is the gate's own order: a candidate that regressed and broke is broken, one that regressed and misses runs a regression", () => {
    expect(VERDICT_PRECEDENCE).toEqual(['not_comparable', 'broken', 'regression', 'incomplete', 'unmeasured', 'undecided', 'improvement', 'pass'])
    // The gate itself: a regression shown by the runs that exist outranks the runs that are missing.
    const slowAndCut = compareToBaseline(base!, pipeDay(7, 1.3, { skip: (c, r) => c === 16 && r === 2 }))
    expect(slowAndCut.verdict).toBe(worstVerdict(['regression', 'incomplete']))
  })
  it('has the worst verdict of none be pass, and of a list its first by precedence', () => {
    expect(worstVerdict([])).toBe('pass')
    expect(worstVerdict(['pass', 'undecided', 'improvement'])).toBe('undecided')
    expect(worstVerdict(['incomplete', 'not_comparable', 'regression'])).toBe('not_comparable')
  })
})

describe('aggregateRecords', () => {
  it('gives one row per configuration, the worst on top, and names each regressed metric with its configuration', () => {
    const agg = aggregateRecords([record('a', PASS), record('b', SLOWER)], ['a', 'b', 'c'])
    expect(agg.rows.map((r) => [r.label, r.verdict])).toEqual([
      ['b', 'regression'],
      ['c', 'incomplete'],
      ['a', 'pass'],
    ])
    expect(agg.verdict).toBe('regression')
    expect(agg.regressions.length).toBeGreaterThan(0)
    expect(agg.regressions.every((r) => r.startsWith('b: p95 ITL') || r.startsWith('b: throughput'))).toBe(true)
  })

  it('counts an expected configuration without a record as incomplete and says why, never a pass', () => {
    const agg = aggregateRecords([record('a', PASS)], ['a', 'c'])
    const c = agg.rows.find((r) => r.label === 'c')!
    expect(c).toMatchObject({ verdict: 'incomplete', recorded: null, record: null, notes: [NO_RECORD] })
    expect(agg.verdict).toBe('incomplete')
    expect(aggregateExit(agg, DEFAULT_FAIL_ON)).toBe(1)
  })

  it.each<[RecordOutcome, VerdictKind]>([
    ['error', 'incomplete'],
    ['cancelled', 'incomplete'],
    ['refused', 'incomplete'],
    ['none', 'incomplete'],
    ['undecided', 'undecided'],
    // A record that gated no metric certified nothing, whatever it says.
    ['improvement', 'unmeasured'],
    ['pass', 'unmeasured'],
  ])('counts a record of %s without gated rows as %s', (outcome, kind) => {
    if (kind !== 'unmeasured') expect(countsAs(outcome)).toBe(kind)
    const agg = aggregateRecords([record('a', null, { outcome, detail: 'servegate could not run: boom' })], ['a'])
    expect(agg.rows[0]!.verdict).toBe(kind)
    expect(agg.rows[0]!.recorded).toBe(outcome)
  })

  it('lets the newest of two records for one label count (a re-run), and says so in the row', () => {
    const agg = aggregateRecords([record('a', SLOWER, { at: '2026-01-01T10:00:00.000Z' }), record('a', PASS, { at: '2026-01-01T11:30:00.000Z' })], ['a'])
    expect(agg.rows).toHaveLength(1)
    expect(agg.rows[0]!.verdict).toBe('pass')
    expect(agg.rows[0]!.notes.join(' ')).toContain('2 records for this configuration (a re-run?): the newest, written 2026-01-01T11:30:00.000Z, counts')
  })

  it('shows and flags a record for an unexpected label, and its regression still fails the matrix', () => {
    const agg = aggregateRecords([record('a', PASS), record('stray', SLOWER)], ['a'])
    const stray = agg.rows.find((r) => r.label === 'stray')!
    expect(stray.expected).toBe(false)
    expect(stray.notes[0]).toMatch(/not an expected configuration/)
    expect(agg.verdict).toBe('regression')
    expect(aggregateExit(agg, DEFAULT_FAIL_ON)).toBe(1)
  })

  it('refuses a record of another commit, naming the record, and takes the same commit in any case', () => {
    const both = (): unknown => aggregateRecords([record('a', PASS), record('b', PASS, { head: '0123456789abcdef' })], ['a', 'b'], { headSha: 'f00df00d' })
    expect(both).toThrow(UsageError)
    expect(both).toThrow(
      'refused a record:\n  records/servegate-record-b/servegate-result.record.json (label b) names commit 0123456789ab, not f00df00d: it is no verdict on this commit',
    )
    expect(aggregateRecords([record('a', PASS, { head: 'F00DF00D' })], ['a'], { headSha: 'f00df00d' }).rows[0]!.verdict).toBe('pass')
  })

  it('matches commits exactly: an abbreviated, empty or absent commit is refused', () => {
    for (const head of ['f00df00dcafe', 'f00d', '', null]) {
      expect(() => aggregateRecords([record('a', PASS, { head })], ['a'], { headSha: 'f00df00dcafe1234' })).toThrow(UsageError)
    }
    expect(() => aggregateRecords([record('a', PASS, { head: null })], ['a'], { headSha: 'f00df00d' })).toThrow(/\(label a\) names no commit, not f00df00d/)
  })

  it('without a commit to judge, refuses records of several commits and takes those of one', () => {
    expect(() => aggregateRecords([record('a', PASS), record('b', PASS, { head: '0123456789abcdef' })], ['a', 'b'])).toThrow(
      'the records name 2 commits (a: commit f00df00d, b: commit 0123456789ab): one verdict needs one commit; say which with the commit under test',
    )
    expect(aggregateRecords([record('a', PASS), record('b', PASS)], ['a', 'b']).verdict).toBe('pass')
  })

  it('refuses a pass record whose row regressed (an edited record), naming the record and the row', () => {
    const edited = record('a', SLOWER)
    edited.record.verdict = 'pass'
    edited.record.regressions = []
    const row = SLOWER.rows.find((r) => r.gated && r.status === 'regression')!
    expect(() => aggregateRecords([edited, record('b', PASS)], ['a', 'b'], { headSha: 'f00df00d' })).toThrow(
      `refused a record:\n  records/servegate-record-a/servegate-result.record.json (label a): its verdict is pass but its row "${row.label}" is regression (+${row.delta_pct!.toFixed(1)} %), so its rows contradict it`,
    )
    // The regressions list alone contradicts a pass too.
    const listed = record('a', PASS)
    listed.record.regressions = [row.label]
    expect(() => aggregateRecords([listed], ['a'])).toThrow(`its verdict is pass but it names regressions: ${row.label}`)
  })

  it('takes every record the gate really wrote: its rows agree with its verdict', () => {
    for (const v of [PASS, SLOWER, INCOMPLETE]) expect(recordContradiction(record('a', v).record)).toBeNull()
  })

  it('counts a pass whose record gated no metric as unmeasured', () => {
    const nothing: Verdict = { ...PASS, rows: PASS.rows.map((r) => ({ ...r, gated: false })) }
    const row = aggregateRecords([record('a', nothing)], ['a']).rows[0]!
    expect(row.verdict).toBe('unmeasured')
    expect(row.notes.join(' ')).toMatch(/gated no metric/)
  })
})

describe('aggregateExit', () => {
  const agg = (...vs: Array<[string, Verdict]>) =>
    aggregateRecords(
      vs.map(([l, v]) => record(l, v)),
      vs.map(([l]) => l),
    )

  it('exits 0 only when every expected configuration passes under the default fail-on', () => {
    expect(aggregateExit(agg(['a', PASS], ['b', PASS]), DEFAULT_FAIL_ON)).toBe(0)
    expect(aggregateExit(agg(['a', PASS], ['b', SLOWER]), DEFAULT_FAIL_ON)).toBe(1)
    expect(aggregateExit(agg(['a', PASS], ['b', INCOMPLETE]), DEFAULT_FAIL_ON)).toBe(1)
  })

  it('fails on a configuration listed in fail-on even when a worse one is left out of it', () => {
    const both = agg(['a', SLOWER], ['b', INCOMPLETE])
    expect(both.verdict).toBe('regression')
    expect(aggregateExit(both, ['incomplete'])).toBe(1)
    expect(aggregateExit(both, [])).toBe(0)
  })

  it('treats undecided as the gate does: it fails, blind or not, whenever fail-on lists it', () => {
    const seeing: Verdict = { ...PASS, verdict: 'undecided', blind: [] }
    const blind: Verdict = { ...PASS, verdict: 'undecided', blind: ['p95 ITL 64×16 c=4'] }
    expect(aggregateExit(aggregateRecords([record('a', seeing)], ['a']), DEFAULT_FAIL_ON)).toBe(1)
    expect(aggregateExit(aggregateRecords([record('a', blind)], ['a']), DEFAULT_FAIL_ON)).toBe(1)
    expect(aggregateExit(aggregateRecords([record('a', seeing)], ['a']), ['regression'])).toBe(0)
    expect(aggregateExit(aggregateRecords([record('a', blind)], ['a']), ['regression'])).toBe(0)
    expect(DEFAULT_FAIL_ON).toEqual(FAIL_ON_VERDICTS)
  })

  it('fails an unmeasured configuration by default', () => {
    const a = aggregateRecords([record('a', { ...PASS, verdict: 'unmeasured' })], ['a'])
    expect(aggregateExit(a, DEFAULT_FAIL_ON)).toBe(1)
  })

  it('exits 2 when a configuration is not comparable and fail-on lists it', () => {
    const nc: Verdict = { ...PASS, verdict: 'not_comparable' }
    expect(aggregateExit(aggregateRecords([record('a', nc), record('b', SLOWER)], ['a', 'b']), DEFAULT_FAIL_ON)).toBe(2)
  })
})

describe('parseExpect', () => {
  it('takes labels separated by commas, spaces or newlines, once each', () => {
    expect(parseExpect('llama-h100, qwen-b200\nqwen-b200', '--expect')).toEqual(['llama-h100', 'qwen-b200'])
  })
  it('refuses an empty list, naming the flag', () => {
    expect(() => parseExpect(' , ', '--expect')).toThrow(UsageError)
    expect(() => parseExpect('', '--expect')).toThrow(/--expect is empty/)
  })
})

describe('buildVerdictRecord', () => {
  it('keeps the gated rows, the regressions, the blame and a redacted serve command', () => {
    const env = pipeDay(7).env
    env.serve_command = 'vllm serve m --api-key sk-abcdefghijklmnop --port 8000'
    const rec: VerdictRecord = buildVerdictRecord({
      label: 'a',
      outcome: 'regression',
      mode: 'gate',
      sweep: 'gate',
      comparedWith: 'baselines/gate.json',
      verdict: SLOWER,
      env,
      runner: { name: 'r', os: 'Linux', arch: 'X64', labels: null },
      job: { run_url: null, job: null, run_attempt: null },
      headSha: null,
      at: '2026-01-01T00:00:00Z',
      harnessVersion: '0.1.0',
    })
    expect(rec.schema).toBe('servegate.record/v1')
    expect(rec.rows.length).toBe(SLOWER.rows.filter((r) => r.gated).length)
    expect(rec.rows.some((r) => r.status === 'regression')).toBe(true)
    expect(rec.regressions).toEqual(SLOWER.regressions)
    expect(rec.env!.serve_command).not.toContain('sk-abcdefghijklmnop')
    expect(rec.env!.serve_command).toContain('--port 8000')
  })
})
