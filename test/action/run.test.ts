import { describe, expect, it } from 'vitest'
import { run } from '../../src/action.js'
import { UsageError } from '../../src/errors.js'
import { commentMarker } from '../../src/github/sticky-comment.js'
import { CWD, FORK_PAYLOAD, PUSH_MAIN, fakeDeps, type FakeOptions } from './fake-deps.js'
import { result, verdict } from './fixtures.js'
import type { ResultFile } from '../../src/types.js'

const BASELINE = `${CWD}/baselines/gate.json`
const gate = (o: FakeOptions = {}) => fakeDeps({ existing: [BASELINE], ...o, inputs: { config: 'servegate.yml', ...o.inputs } })

describe('run (gate mode)', () => {
  it('reports a pass: outputs, one marked comment, a summary with every section, no failure', async () => {
    const { deps, rec } = gate({ verdicts: [verdict('pass')] })
    await run(deps)
    expect(rec.failed).toEqual([])
    expect(rec.outputs.get('verdict')).toBe('pass')
    expect(rec.outputs.get('regressions')).toBe('[]')
    expect(rec.outputs.get('result-path')).toBe(`${CWD}/servegate-result.json`)
    expect(rec.outputs.get('report-path')).toBe(`${CWD}/servegate-result.md`)
    expect(rec.outputs.get('comment-id')).toBe('500')
    expect(rec.resolveInputs[0]?.flags.sweep).toBe('gate')
    expect(rec.comments).toHaveLength(1)
    expect(rec.comments[0]?.body).toContain(commentMarker('gate'))
    for (const part of [
      '✅ servegate: pass',
      'VERDICT-TABLE(pass)',
      'METHODOLOGY-TABLE',
      'MERMAID(128×32: p95 TPOT vs output throughput: baseline+candidate)',
      'Throughput at p95 TPOT ≤ 50 ms, 128×32',
    ]) {
      expect(rec.summary).toContain(part)
    }
    expect(rec.written.get(`${CWD}/servegate-result.md`)).toContain('VERDICT-TABLE(pass)')
  })

  it('keeps the host and base URL out of the comment unless show-host is true; the summary always has them', async () => {
    const hidden = gate({ verdicts: [verdict('pass')] })
    await run(hidden.deps)
    expect(hidden.rec.comments[0]?.body).toContain('METHODOLOGY-TABLE(host left out)')
    expect(hidden.rec.summary).toContain('METHODOLOGY-TABLE(with host)')
    const shown = gate({ verdicts: [verdict('pass')], inputs: { 'show-host': 'true' } })
    await run(shown.deps)
    expect(shown.rec.comments[0]?.body).toContain('METHODOLOGY-TABLE(with host)')
  })

  it('fails the step with a one-line reason naming the regressed metric', async () => {
    const { deps, rec } = gate({ verdicts: [verdict('regression')] })
    await run(deps)
    expect(rec.outputs.get('verdict')).toBe('regression')
    expect(JSON.parse(rec.outputs.get('regressions')!)).toEqual(['p95 ITL 128×32 c=16'])
    expect(rec.failed).toEqual(['servegate gate tripped: regression in p95 ITL 128×32 c=16'])
    expect(rec.failed[0]).not.toContain('\n')
    expect(rec.summary).toContain('❌ servegate: regression')
  })

  it('refuses to gate without a baseline, before spending a sweep', async () => {
    const { deps, rec } = gate({ existing: [], verdicts: [verdict('pass')] })
    await run(deps)
    expect(rec.sweeps).toHaveLength(0)
    expect(rec.outputs.get('verdict')).toBe('error')
    expect(rec.failed[0]).toMatch(/^servegate could not run: there is no baseline at baselines\/gate\.json/)
  })

  it('starts the candidate engine again for a row left open, one repeat with a fresh seed, and decides over all its starts', async () => {
    const { deps, rec } = gate({ inputs: { serve: 'vllm serve m --port {port}' }, verdicts: [verdict('undecided'), verdict('pass')] })
    await run(deps)
    expect(rec.sweeps).toHaveLength(2)
    expect(rec.sweeps[1]?.repeats).toBe(1)
    expect(rec.sweeps[1]?.seed).not.toBe(rec.sweeps[0]?.seed)
    expect(rec.sweeps[1]?.out).toBe(`${CWD}/servegate-result.confirm.json`)
    expect(rec.written.has(`${CWD}/servegate-result.json`)).toBe(true)
    expect(rec.outputs.get('verdict')).toBe('pass')
  })

  it('reports undecided at once when confirm is false, or when only a base URL is given (nothing to start again)', async () => {
    for (const inputs of [{ confirm: 'false', serve: 'vllm serve m --port {port}' }, {}] as Array<Record<string, string>>) {
      const { deps, rec } = gate({ inputs, verdicts: [verdict('undecided'), verdict('pass')] })
      await run(deps)
      expect(rec.sweeps).toHaveLength(1)
      expect(rec.outputs.get('verdict')).toBe('undecided')
    }
  })

  it('masks the github token and the API key', async () => {
    const { deps, rec } = gate({ apiKey: 'sk-secret', verdicts: [verdict('pass')] })
    await run(deps)
    expect(rec.secrets).toEqual(expect.arrayContaining(['ghs_token123', 'sk-secret']))
  })
})

describe('run (full and refresh modes)', () => {
  it('full without a baseline measures and reports, verdict none, no comparison', async () => {
    const { deps, rec } = fakeDeps({ inputs: { mode: 'full' }, eventName: 'push', payload: PUSH_MAIN, verdicts: [] })
    await run(deps)
    expect(rec.failed).toEqual([])
    expect(rec.outputs.get('verdict')).toBe('none')
    expect(rec.resolveInputs[0]?.flags.sweep).toBeUndefined()
    expect(rec.summary).toContain('METHODOLOGY-TABLE')
    expect(rec.summary).not.toContain('VERDICT-TABLE')
  })

  it('full without a baseline fails the step when no run of the sweep is valid, after reporting it', async () => {
    const refused = (): ResultFile => {
      const r = result()
      for (const p of r.points) for (const x of p.runs) x.validity = { valid: false, issues: [{ code: 'requests_failed', detail: 'all failed' }] }
      return r
    }
    const { deps, rec } = fakeDeps({ inputs: { mode: 'full' }, eventName: 'push', payload: PUSH_MAIN, verdicts: [], sweepResult: refused })
    await run(deps)
    expect(rec.outputs.get('verdict')).toBe('none')
    expect(rec.summary).toContain('METHODOLOGY-TABLE')
    expect(rec.failed).toEqual([`servegate: no run of the sweep is valid (6 runs: requests_failed ×6); the result is written to ${CWD}/servegate-result.json`])
  })

  it('full compares when a baseline exists at baselines/<sweep>.json', async () => {
    const { deps, rec } = fakeDeps({
      inputs: { mode: 'full', 'fail-on': 'never' },
      eventName: 'push',
      payload: PUSH_MAIN,
      existing: [`${CWD}/baselines/default.json`],
      verdicts: [verdict('regression')],
    })
    await run(deps)
    expect(rec.outputs.get('verdict')).toBe('regression')
    expect(rec.failed).toEqual([])
  })

  it('refresh appends, writes and commits the baseline with a bot identity, and never fails on the comparison', async () => {
    const { deps, rec } = gate({ inputs: { mode: 'refresh' }, eventName: 'push', payload: PUSH_MAIN, verdicts: [verdict('regression')] })
    await run(deps)
    expect(rec.failed).toEqual([])
    expect(rec.outputs.get('verdict')).toBe('refreshed')
    expect(rec.refreshInfo).toEqual([{ name: 'gate', commit: 'cafe', how: 'append' }])
    expect(rec.baselinesWritten.map((b) => b.path)).toEqual([BASELINE])
    const commit = rec.git.find((a) => a.includes('commit'))!
    expect(commit).toEqual(expect.arrayContaining(['-c', 'user.name=github-actions[bot]', '--', 'baselines/gate.json']))
    expect(commit[commit.indexOf('-m') + 1]).toMatch(/^servegate: refresh baseline baselines\/gate\.json\n/)
    expect(rec.git).toContainEqual(['push', 'origin', 'HEAD:refs/heads/main'])
    expect(rec.outputs.get('commit-sha')).toBe('0123456789abcdef0123')
    expect(rec.commentCalls).toEqual([])
  })

  it('refresh with noise-only keeps the run in the noise history, and with reset starts a history that keeps the old spread', async () => {
    for (const [inputs, how] of [
      [{ 'noise-only': 'true' }, 'noise'],
      [{ reset: 'true' }, 'reset'],
    ] as const) {
      const { deps, rec } = gate({ inputs: { mode: 'refresh', ...inputs }, eventName: 'push', payload: PUSH_MAIN, verdicts: [verdict('pass')] })
      await run(deps)
      expect(rec.failed).toEqual([])
      expect(rec.refreshInfo).toEqual([{ name: 'gate', commit: 'cafe', how }])
    }
  })

  it('refresh with refresh-commit false writes the file and leaves git alone', async () => {
    const { deps, rec } = fakeDeps({ inputs: { mode: 'refresh', 'refresh-commit': 'false' }, eventName: 'push', payload: PUSH_MAIN, verdicts: [] })
    await run(deps)
    expect(rec.baselinesWritten).toHaveLength(1)
    expect(rec.git).toEqual([])
    expect(rec.summary).toContain('not committed (refresh-commit: false)')
  })
})

describe('run (comment policy)', () => {
  const own = (body: string) => ({ id: 42, body, user: { login: 'github-actions[bot]', type: 'Bot' } })

  it('never: no API call at all', async () => {
    const { deps, rec } = gate({ inputs: { comment: 'never' }, verdicts: [verdict('regression')] })
    await run(deps)
    expect(rec.commentCalls).toEqual([])
  })

  it('on-regression with a pass starts no comment (neither the running one nor the verdict)', async () => {
    const { deps, rec } = gate({ inputs: { comment: 'on-regression' }, verdicts: [verdict('pass')] })
    await run(deps)
    expect(rec.commentCalls).toEqual(['list 7', 'list 7'])
    expect(rec.outputs.has('comment-id')).toBe(false)
  })

  it('on-regression with a pass still updates an earlier regression comment', async () => {
    const { deps, rec } = gate({
      inputs: { comment: 'on-regression' },
      comments: [own(`${commentMarker('gate')}\nold regression`)],
      verdicts: [verdict('pass')],
    })
    await run(deps)
    // First "running" (the old regression no longer stands), then the pass.
    expect(rec.commentCalls).toEqual(['list 7', 'update 42', 'list 7', 'update 42'])
    expect(rec.comments[0]?.body).toContain('✅ servegate: pass')
  })

  it('on-regression with a regression creates the comment', async () => {
    const { deps, rec } = gate({ inputs: { comment: 'on-regression' }, verdicts: [verdict('regression')] })
    await run(deps)
    expect(rec.commentCalls).toEqual(['list 7', 'list 7', 'create 7'])
  })

  it('ignores a marked comment written by someone else and creates its own', async () => {
    const other = { id: 9, body: commentMarker('gate'), user: { login: 'mallory', type: 'User' } }
    const { deps, rec } = gate({ comments: [other], verdicts: [verdict('pass')] })
    await run(deps)
    expect(rec.commentCalls).toEqual(['list 7', 'create 7', 'list 7', 'update 500'])
    expect(rec.comments.find((c) => c.id === 9)?.body).toBe(commentMarker('gate'))
  })

  it('posts nothing outside a pull request', async () => {
    const { deps, rec } = gate({ eventName: 'workflow_dispatch', payload: { repository: { default_branch: 'main' } }, verdicts: [verdict('pass')] })
    await run(deps)
    expect(rec.commentCalls).toEqual([])
  })
})

describe('run (fail-on policy)', () => {
  it.each([
    ['undecided', 'regression', false],
    // Undecided fails whenever fail-on lists it, even when every row could have shown the promised regression.
    ['undecided', 'undecided', true],
    ['unmeasured', '', true],
    ['unmeasured', 'regression', false],
    ['not_comparable', 'not_comparable', true],
    ['not_comparable', 'regression', false],
    ['regression', 'never', false],
    ['pass', 'undecided', false],
  ] as const)('verdict %s with fail-on %s fails: %s', async (kind, failOn, fails) => {
    const { deps, rec } = gate({ inputs: { 'fail-on': failOn }, verdicts: [verdict(kind)] })
    await run(deps)
    expect(rec.failed.length > 0).toBe(fails)
    expect(rec.outputs.get('verdict')).toBe(kind)
  })

  it('fails an undecided verdict without a blind row under the default fail-on, with its reason', async () => {
    const { deps, rec } = gate({ verdicts: [verdict('undecided', { reasons: ['undecided: p95 ITL 128×32 c=16 (+3.0 %, bar 6.0 %)'] })] })
    await run(deps)
    expect(rec.outputs.get('verdict')).toBe('undecided')
    expect(rec.failed).toHaveLength(1)
    expect(rec.failed[0]).toMatch(/^servegate gate tripped: verdict undecided .*undecided: p95 ITL 128×32 c=16/)
  })

  it('fails an undecided verdict with a blind row under the default fail-on, naming the row', async () => {
    const { deps, rec } = gate({
      verdicts: [verdict('undecided', { blind: ['p95 ITL 128×32 c=16'], reasons: ['undecided and blind: p95 ITL 128×32 c=16 (MDC 40.0 %)'] })],
    })
    await run(deps)
    expect(rec.outputs.get('verdict')).toBe('undecided')
    expect(rec.failed[0]).toMatch(/^servegate gate tripped: verdict undecided .*undecided and blind: p95 ITL 128×32 c=16/)
  })
})

describe('run (fork pull requests)', () => {
  it('refuses a fork PR on a self-hosted runner, explaining why, without sweeping', async () => {
    const { deps, rec } = gate({ payload: FORK_PAYLOAD, verdicts: [verdict('pass')] })
    await run(deps)
    expect(rec.sweeps).toHaveLength(0)
    expect(rec.outputs.get('verdict')).toBe('refused')
    expect(rec.failed[0]).toMatch(/fork.*mallory\/infer.*self-hosted.*untrusted code.*allow-fork: true/s)
    expect(rec.summary).toContain('refused')
  })

  it('treats a missing RUNNER_ENVIRONMENT as self-hosted and says so', async () => {
    const { deps, rec } = gate({ payload: FORK_PAYLOAD, env: { RUNNER_ENVIRONMENT: undefined }, verdicts: [verdict('pass')] })
    await run(deps)
    expect(rec.failed[0]).toContain('RUNNER_ENVIRONMENT is not set')
  })

  it('runs a fork PR when allow-fork is true, with a warning', async () => {
    const { deps, rec } = gate({ payload: FORK_PAYLOAD, inputs: { 'allow-fork': 'true' }, verdicts: [verdict('pass')] })
    await run(deps)
    expect(rec.outputs.get('verdict')).toBe('pass')
    expect(rec.warnings.join('\n')).toContain('allow-fork is true')
  })

  it('runs a fork PR on a GitHub-hosted runner', async () => {
    const { deps, rec } = gate({ payload: FORK_PAYLOAD, env: { RUNNER_ENVIRONMENT: 'github-hosted' }, verdicts: [verdict('pass')] })
    await run(deps)
    expect(rec.outputs.get('verdict')).toBe('pass')
    expect(rec.failed).toEqual([])
  })
})

describe('run (GitHub API failures)', () => {
  it.each([403, 429, 502])('HTTP %i on the comment degrades to a warning and a summary note; the verdict stands', async (status) => {
    const { deps, rec } = gate({ apiStatus: status, verdicts: [verdict('regression')] })
    await run(deps)
    expect(rec.outputs.get('verdict')).toBe('regression')
    expect(rec.warnings.join('\n')).toContain(`HTTP ${status}`)
    expect(rec.summary).toContain('could not post its pull-request comment')
    expect(rec.failed).toEqual(['servegate gate tripped: regression in p95 ITL 128×32 c=16'])
  })
})

describe('run (GitHub client failures)', () => {
  it('degrades when the API client cannot even be built', async () => {
    const { deps, rec } = gate({ verdicts: [verdict('pass')] })
    deps.github = () => {
      throw new Error("context.repo requires a GITHUB_REPOSITORY environment variable like 'owner/repo'")
    }
    await run(deps)
    expect(rec.outputs.get('verdict')).toBe('pass')
    expect(rec.failed).toEqual([])
    expect(rec.warnings.join('\n')).toContain('GITHUB_REPOSITORY')
  })
})

describe('run (crash vs tripped gate)', () => {
  it('reports an unexpected exception as a crash with verdict error and the stack', async () => {
    const { deps, rec } = gate({ sweepError: new TypeError('x is undefined'), verdicts: [verdict('pass')] })
    await run(deps)
    expect(rec.outputs.get('verdict')).toBe('error')
    expect(rec.failed).toEqual(['servegate crashed: x is undefined'])
    expect(rec.errors[0]).toContain('TypeError')
    expect(rec.summary).toContain('servegate crashed')
  })

  it('reports a usage error as "could not run", not as a crash', async () => {
    const { deps, rec } = gate({
      sweepError: new UsageError('server at http://gpu:8000 refused the connection', 'Is it running?'),
      verdicts: [verdict('pass')],
    })
    await run(deps)
    expect(rec.outputs.get('verdict')).toBe('error')
    expect(rec.failed[0]).toBe('servegate could not run: server at http://gpu:8000 refused the connection (Is it running?)')
    expect(rec.errors).toEqual([])
  })

  it('lists every invalid input at once', async () => {
    const { deps, rec } = gate({ inputs: { mode: 'bench', comment: 'sometimes' }, verdicts: [verdict('pass')] })
    await run(deps)
    expect(rec.outputs.get('verdict')).toBe('error')
    expect(rec.failed[0]).toContain('input "mode": "bench" is not allowed; expected one of gate, full, refresh')
    expect(rec.failed[0]).toContain('input "comment": "sometimes" is not allowed')
  })
})
