import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { run } from '../../src/action.js'
import { UsageError } from '../../src/errors.js'
import type { VerdictRecord } from '../../src/gate/record.js'
import { commentMarker } from '../../src/github/sticky-comment.js'
import { CWD, fakeDeps, type FakeOptions } from './fake-deps.js'
import { verdict } from './fixtures.js'

// The matrix's jobs and its final job through run(deps): each job's record is what the gate
// run wrote through deps.files, and the aggregate reads those files back from a real folder.

const HEAD = '1a2b3c4d5e6f7a8b9c0d1a2b3c4d5e6f7a8b9c0d'
const PR = {
  pull_request: { number: 7, head: { repo: { full_name: 'acme/infer', fork: false }, sha: HEAD }, base: { repo: { full_name: 'acme/infer', fork: false } } },
}
const RECORD = `${CWD}/servegate-result.record.json`
const RUNNER = { RUNNER_NAME: 'gpu-host-1', RUNNER_OS: 'Linux', RUNNER_ARCH: 'X64', GITHUB_JOB: 'bench', GITHUB_RUN_ID: '42', GITHUB_RUN_ATTEMPT: '1' }
const job = (o: FakeOptions = {}) =>
  fakeDeps({
    existing: [`${CWD}/baselines/gate.json`],
    payload: PR,
    ...o,
    env: { ...RUNNER, ...o.env },
    inputs: { config: 'servegate.yml', comment: 'never', ...o.inputs },
  })

const dirs: string[] = []
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true })
})

/** A matrix job's record, as the gate run wrote it. */
async function recordOf(o: FakeOptions): Promise<{ text: string; outputs: Map<string, string>; failed: string[] }> {
  const { deps, rec } = job(o)
  await run(deps)
  const text = rec.written.get(RECORD)
  if (text === undefined) throw new Error(`no record written; failed: ${rec.failed.join('; ')}`)
  return { text, outputs: rec.outputs, failed: rec.failed }
}

function folder(records: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), 'servegate-records-'))
  dirs.push(dir)
  for (const [sub, text] of Object.entries(records)) {
    mkdirSync(join(dir, sub), { recursive: true })
    writeFileSync(join(dir, sub, 'servegate-result.record.json'), text)
  }
  return dir
}

describe('every gate job writes its verdict record', () => {
  it('beside the result, named by the output record-path, with the label, runner, job link, head commit and gated rows', async () => {
    const r = await recordOf({ verdicts: [verdict('regression')], inputs: { label: 'llama-h100' } })
    expect(r.outputs.get('record-path')).toBe(RECORD)
    const rec = JSON.parse(r.text) as VerdictRecord
    expect(rec).toMatchObject({
      schema: 'servegate.record/v1',
      label: 'llama-h100',
      verdict: 'regression',
      mode: 'gate',
      compared_with: 'baselines/gate.json',
      regressions: ['p95 ITL 128×32 c=16'],
      runner: { name: 'gpu-host-1', os: 'Linux', arch: 'X64', labels: null },
      job: { run_url: 'https://github.com/acme/infer/actions/runs/42', job: 'bench', run_attempt: '1' },
      head_sha: HEAD,
    })
    expect(rec.rows).toEqual([expect.objectContaining({ label: 'p95 ITL 128×32 c=16', status: 'regression', delta_pct: 25 })])
    expect(rec.env).toMatchObject({ gpu: 'NVIDIA B200', gpu_count: 4, engine: 'vllm 0.11.0' })
    expect(rec.blame).toBe('the host is unchanged since the baseline; the repository changed: engine version 0.11.0 → 0.11.1')
  })

  it('is labelled with the comment key when the input label is empty', async () => {
    const r = await recordOf({ verdicts: [verdict('pass')], inputs: { 'comment-key': 'qwen' } })
    expect((JSON.parse(r.text) as VerdictRecord).label).toBe('qwen')
  })

  it('says "error" and why when servegate could not run, with the secrets redacted', async () => {
    const r = await recordOf({ sweepError: new UsageError('cannot reach http://gpu:8000 with key sk-supersecret-0123456789') })
    expect(r.failed[0]).toMatch(/servegate could not run/)
    const rec = JSON.parse(r.text) as VerdictRecord
    expect(rec.verdict).toBe('error')
    expect(rec.detail).toMatch(/^servegate could not run: cannot reach/)
    expect(r.text).not.toContain('sk-supersecret-0123456789')
    expect(rec.rows).toEqual([])
  })
})

describe('mode aggregate', () => {
  it('posts ONE comment with a row per configuration, worst first, and fails the step', async () => {
    const dir = folder({
      'servegate-record-a': (await recordOf({ verdicts: [verdict('pass')], inputs: { label: 'a' } })).text,
      'servegate-record-b': (await recordOf({ verdicts: [verdict('regression')], inputs: { label: 'b' } })).text,
    })
    const { deps, rec } = fakeDeps({ payload: PR, env: RUNNER, inputs: { mode: 'aggregate', records: dir, expect: 'a,b,c' } })
    await run(deps)
    expect(rec.outputs.get('verdict')).toBe('regression')
    expect(JSON.parse(rec.outputs.get('regressions')!)).toEqual(['b: p95 ITL 128×32 c=16'])
    expect(rec.comments).toHaveLength(1)
    const body = rec.comments[0]!.body!
    expect(body.startsWith(commentMarker('matrix'))).toBe(true)
    const rows = body.split('\n').filter((l) => /^\| [abc] /.test(l))
    expect(rows.map((l) => l.split('|')[2]!.trim())).toEqual(['❌ regression', '🧩 incomplete', '✅ pass'])
    expect(rows[1]).toContain('no record (cancelled, crashed or runner lost)')
    expect(rows[0]).toContain('[bench](https://github.com/acme/infer/actions/runs/42)')
    expect(rec.summary).toContain('## ❌ servegate matrix: regression — 3 configurations: 1 regression, 1 incomplete, 1 pass')
    expect(rec.failed).toEqual([
      'servegate matrix: regression — b regression, c incomplete (fail-on: regression,broken,incomplete,unmeasured,undecided,not_comparable)',
    ])
    // No sweep, no config: the final job needs no GPU.
    expect(rec.sweeps).toHaveLength(0)
    expect(rec.resolveInputs).toHaveLength(0)
  })

  it('passes when every expected configuration passed', async () => {
    const dir = folder({
      'servegate-record-a': (await recordOf({ verdicts: [verdict('pass')], inputs: { label: 'a' } })).text,
      'servegate-record-b': (await recordOf({ verdicts: [verdict('improvement')], inputs: { label: 'b' } })).text,
    })
    const { deps, rec } = fakeDeps({ payload: PR, inputs: { mode: 'aggregate', records: dir, expect: 'a, b' } })
    await run(deps)
    expect(rec.outputs.get('verdict')).toBe('improvement')
    expect(rec.failed).toEqual([])
  })

  it('counts a job that wrote an error record as incomplete, quoting its error', async () => {
    const dir = folder({ 'servegate-record-a': (await recordOf({ sweepError: new UsageError('the config says nonsense'), inputs: { label: 'a' } })).text })
    const { deps, rec } = fakeDeps({ payload: PR, inputs: { mode: 'aggregate', records: dir, expect: 'a' } })
    await run(deps)
    expect(rec.outputs.get('verdict')).toBe('incomplete')
    expect(rec.comments[0]!.body).toMatch(/servegate could not run: the config says nonsense · the run failed before a verdict: counted as incomplete/)
  })

  it('with no records folder at all, every expected configuration is missing', async () => {
    const { deps, rec } = fakeDeps({ payload: PR, inputs: { mode: 'aggregate', records: join(tmpdir(), 'servegate-no-such-records-folder'), expect: 'a,b' } })
    await run(deps)
    expect(rec.outputs.get('verdict')).toBe('incomplete')
    expect(rec.summary).toContain('does not exist: no job uploaded a record')
    expect(rec.failed).toHaveLength(1)
  })

  it('refuses foreign JSON in the records folder, naming the file', async () => {
    const dir = folder({ x: JSON.stringify({ schema: 'servegate.result/v1' }) })
    const { deps, rec } = fakeDeps({ payload: PR, inputs: { mode: 'aggregate', records: dir, expect: 'a' } })
    await run(deps)
    expect(rec.outputs.get('verdict')).toBe('error')
    expect(rec.failed[0]).toContain(`${join(dir, 'x', 'servegate-result.record.json')} is a servegate.result/v1 file, expected "servegate.record/v1"`)
    expect(rec.comments[0]!.body).toContain(commentMarker('matrix'))
  })

  it("refuses a record of another commit than the pull request's head, naming it, and fails the step", async () => {
    const a = (await recordOf({ inputs: { label: 'a' } })).text
    const stale = JSON.stringify({ ...(JSON.parse(a) as VerdictRecord), label: 'b', head_sha: '0123456789abcdef0123456789abcdef01234567' })
    const dir = folder({ 'servegate-record-a': a, 'servegate-record-b': stale })
    const { deps, rec } = fakeDeps({ payload: PR, inputs: { mode: 'aggregate', records: dir, expect: 'a,b' } })
    await run(deps)
    expect(rec.outputs.get('verdict')).toBe('error')
    expect(rec.failed[0]).toContain(
      `${join(dir, 'servegate-record-b', 'servegate-result.record.json')} (label b) names commit 0123456789ab, not 1a2b3c4d5e6f: it is no verdict on this commit`,
    )
  })

  it('needs records and expect', async () => {
    const { deps, rec } = fakeDeps({ payload: PR, inputs: { mode: 'aggregate' } })
    await run(deps)
    expect(rec.failed[0]).toMatch(/mode aggregate: the input "records" is empty/)
    expect(rec.failed[0]).toMatch(/mode aggregate: the input "expect" is empty/)
  })
})
