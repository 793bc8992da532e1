import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Command } from 'commander'
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { main } from '../../src/cli.js'
import { registerAggregateCommand } from '../../src/cli/aggregate.js'
import { UsageError } from '../../src/errors.js'
import { compareStarts } from '../../src/gate/seq-baseline.js'
import { compareToBaseline } from '../../src/gate/compare.js'
import { buildVerdictRecord, type VerdictRecord } from '../../src/gate/record.js'
import type { Baseline, Verdict } from '../../src/gate/types.js'
import { appendRefresh } from '../../src/gate/refresh.js'
import { pipeDay } from '../gate/fixtures.js'

let base: Baseline | null = null
for (let d = 0; d < 5; d++) base = appendRefresh(base, pipeDay(d), { name: 'gate' })
const PASS = compareToBaseline(base!, pipeDay(7))
const SLOWER = compareToBaseline(base!, pipeDay(7, 1.3))
// 5 % slower: below the 8.1 % bar five refreshes allow, but above a screening look's pass
// threshold (the last look would pass it), so that look cannot decide; every row could see.
// An interim look of the sequential test (more engine starts may follow): open rows, none blind.
const UNDECIDED = compareStarts(base!, pipeDay(7, 1.05), { look: 'screen', maxLooks: 8 }, () => 0)
const BLIND = compareToBaseline(base!, pipeDay(7, 1.04), { maxMdcPct: 5 })

let dir: string
let printed: string
const savedExit = process.exitCode
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'servegate-aggregate-'))
  printed = ''
  process.exitCode = undefined
})
afterEach(async () => {
  process.exitCode = savedExit
  await rm(dir, { recursive: true, force: true })
})

/** Write a record the way a matrix job does, into its own artifact subfolder as download-artifact leaves it. */
const HEAD = 'f00df00d5eed0000000000000000000000c0ffee'

async function put(
  label: string,
  v: Verdict,
  at = '2026-01-01T10:00:00.000Z',
  sub = `servegate-record-${label}`,
  edit: (r: VerdictRecord) => void = () => {},
): Promise<void> {
  const rec = buildVerdictRecord({
    label,
    outcome: v.verdict,
    mode: 'gate',
    sweep: 'gate',
    comparedWith: 'baselines/gate.json',
    verdict: v,
    env: pipeDay(7).env,
    runner: { name: `gpu-${label}`, os: 'Linux', arch: 'X64', labels: null },
    job: { run_url: null, job: 'bench', run_attempt: '1' },
    headSha: HEAD,
    at,
    harnessVersion: '0.1.0',
  })
  edit(rec)
  await mkdir(join(dir, 'records', sub), { recursive: true })
  await writeFile(join(dir, 'records', sub, 'servegate-result.record.json'), JSON.stringify(rec))
}

async function aggregate(...args: string[]): Promise<number> {
  const program = new Command().exitOverride()
  registerAggregateCommand(program, { print: (t) => void (printed += t) })
  await program.parseAsync(['aggregate', ...args], { from: 'user' })
  return Number(process.exitCode ?? 0)
}

describe('servegate aggregate', () => {
  it('exits 1 with the worst on top: a regression, a configuration with no record (incomplete), a pass', async () => {
    await put('llama-h100', PASS)
    await put('qwen-b200', SLOWER)
    const md = join(dir, 'matrix.md')
    expect(await aggregate(join(dir, 'records'), '--expect', 'llama-h100,qwen-b200,mistral-mi300', '--markdown', md)).toBe(1)
    const lines = printed.split('\n')
    expect(lines[0]).toBe('servegate aggregate: REGRESSION — 3 configurations: 1 regression, 1 incomplete, 1 pass')
    expect(lines.slice(2, 5).map((l) => l.trim().split(/\s+/).slice(0, 2).join(' '))).toEqual([
      'qwen-b200 REGRESSION',
      'mistral-mi300 INCOMPLETE',
      'llama-h100 PASS',
    ])
    expect(printed).toContain('no record (cancelled, crashed or runner lost)')
    const markdown = await readFile(md, 'utf8')
    expect(markdown).toContain('| qwen-b200 | ❌ regression |')
    expect(markdown).toContain('| mistral-mi300 | 🧩 incomplete | no record (cancelled, crashed or runner lost) |')
  })

  it('exits 0 only when every expected configuration has a passing record', async () => {
    await put('a', PASS)
    await put('b', PASS)
    expect(await aggregate(join(dir, 'records'), '--expect', 'a,b')).toBe(0)
    expect(await aggregate(join(dir, 'records'), '--expect', 'a,b,c')).toBe(1)
  })

  it('exits 1 on an undecided configuration, blind or not, unless fail-on leaves undecided out, and 1 on an unmeasured one', async () => {
    expect(UNDECIDED).toMatchObject({ verdict: 'undecided', blind: [] })
    await put('a', PASS)
    await put('b', UNDECIDED)
    // Undecided always fails when fail-on lists it (the default): a row that could see is no pass either.
    expect(await aggregate(join(dir, 'records'), '--expect', 'a,b')).toBe(1)
    // The same measurements judged by a gate that promises to see 5 % changes: every row is blind.
    await put('b', BLIND, '2026-01-01T11:00:00.000Z', 'attempt-2')
    expect(BLIND).toMatchObject({ verdict: 'undecided' })
    expect(BLIND.blind).toHaveLength(4)
    expect(await aggregate(join(dir, 'records'), '--expect', 'a,b')).toBe(1)
    expect(await aggregate(join(dir, 'records'), '--expect', 'a,b', '--fail-on', 'regression,broken,incomplete,unmeasured,not_comparable')).toBe(0)
    await put('b', { ...PASS, verdict: 'unmeasured' }, '2026-01-01T12:00:00.000Z', 'attempt-3')
    expect(await aggregate(join(dir, 'records'), '--expect', 'a,b')).toBe(1)
  })

  it('lets the newest record of a re-run count, and says so', async () => {
    await put('a', SLOWER, '2026-01-01T10:00:00.000Z', 'attempt-1')
    await put('a', PASS, '2026-01-01T12:00:00.000Z', 'attempt-2')
    expect(await aggregate(join(dir, 'records'), '--expect', 'a')).toBe(0)
    expect(printed).toContain('2 records for this configuration (a re-run?): the newest, written 2026-01-01T12:00:00.000Z, counts')
  })

  it('fails on --fail-on as the gate does: leaving incomplete out lets a missing record exit 0, and says it is not a pass', async () => {
    await put('a', PASS)
    expect(await aggregate(join(dir, 'records'), '--expect', 'a,b', '--fail-on', 'regression')).toBe(0)
    expect(printed).toContain('not every configuration passed')
  })

  it('with --head-sha, takes the records of that commit and refuses a record of another, naming it', async () => {
    await put('a', PASS)
    await put('b', PASS)
    expect(await aggregate(join(dir, 'records'), '--expect', 'a,b', '--head-sha', HEAD)).toBe(0)
    await put('b', PASS, '2026-01-01T12:00:00.000Z', 'servegate-record-b', (r) => void (r.head_sha = '0123456789abcdef0123456789abcdef01234567'))
    const other = join(dir, 'records', 'servegate-record-b', 'servegate-result.record.json')
    await expect(aggregate(join(dir, 'records'), '--expect', 'a,b', '--head-sha', HEAD)).rejects.toThrow(
      `refused a record:\n  ${other} (label b) names commit 0123456789ab, not f00df00d5eed: it is no verdict on this commit`,
    )
    // Without --head-sha the records must name one commit between them.
    await expect(aggregate(join(dir, 'records'), '--expect', 'a,b')).rejects.toThrow(/the records name 2 commits/)
    await expect(aggregate(join(dir, 'records'), '--expect', 'a,b', '--head-sha', 'f00df00d')).rejects.toThrow(
      '--head-sha "f00df00d": expected the full commit SHA, 40 hex digits (git rev-parse HEAD)',
    )
  })

  it('refuses a pass record whose row is a regression, naming the record and the row, whatever --fail-on says', async () => {
    await put('a', SLOWER, undefined, undefined, (r) => {
      r.verdict = 'pass'
      r.regressions = []
    })
    const row = SLOWER.rows.find((r) => r.gated && r.status === 'regression')!
    const path = join(dir, 'records', 'servegate-record-a', 'servegate-result.record.json')
    for (const failOn of [[], ['--fail-on', 'never']])
      await expect(aggregate(join(dir, 'records'), '--expect', 'a', '--head-sha', HEAD, ...failOn)).rejects.toThrow(
        `${path} (label a): its verdict is pass but its row "${row.label}" is regression (+${row.delta_pct!.toFixed(1)} %), so its rows contradict it`,
      )
    expect(printed).not.toMatch(/within|pass/)
  })

  it('refuses a file in the records folder that is not a record, naming it', async () => {
    await put('a', PASS)
    await mkdir(join(dir, 'records', 'junk'), { recursive: true })
    await writeFile(join(dir, 'records', 'junk', 'notes.json'), '{"hello": 1}')
    await expect(aggregate(join(dir, 'records'), '--expect', 'a')).rejects.toThrow(UsageError)
    await expect(aggregate(join(dir, 'records'), '--expect', 'a')).rejects.toThrow(
      `${join(dir, 'records', 'junk', 'notes.json')} is not a servegate verdict record`,
    )
  })

  it('exits 2 with one line on corrupt JSON, and on a missing --expect', async () => {
    await mkdir(join(dir, 'records', 'x'), { recursive: true })
    await writeFile(join(dir, 'records', 'x', 'r.record.json'), '{"schema": "servegate.rec')
    const err = vi.spyOn(process.stderr, 'write').mockImplementation(() => true)
    const out = vi.spyOn(process.stdout, 'write').mockImplementation(() => true)
    try {
      await main(['node', 'servegate', 'aggregate', join(dir, 'records'), '--expect', 'a'])
      expect(process.exitCode).toBe(2)
      expect(String(err.mock.calls[0]?.[0])).toMatch(/^servegate: .*r\.record\.json is not valid JSON: the file ends early/)
      process.exitCode = undefined
      await main(['node', 'servegate', 'aggregate', join(dir, 'records')])
      expect(process.exitCode).toBe(2)
    } finally {
      err.mockRestore()
      out.mockRestore()
    }
  })
})
