import { describe, expect, it } from 'vitest'
import { UsageError } from '../../src/errors.js'
import { ISOLATION_OFF_NOTE, isolationPolicy, judgesChange, type IsolationCheck } from '../../src/github/isolation-policy.js'

const noPr = { pullRequest: null }
const pr = { pullRequest: { number: 7, fromFork: false, forkReason: '' } }
const repo = { repository: { default_branch: 'main' } }

describe('judgesChange', () => {
  it('counts pull requests, merge queues, runs another workflow started and comments as judging a change', () => {
    for (const eventName of ['pull_request', 'pull_request_target', 'merge_group', 'workflow_run', 'issue_comment'])
      expect(judgesChange({ eventName, ...noPr }, repo, {}), eventName).toBe(true)
    expect(judgesChange({ eventName: 'workflow_dispatch', ...pr }, repo, { GITHUB_REF_NAME: 'main' })).toBe(true)
  })

  it('counts a push or a run by hand on the default branch, and a schedule, as judging nothing', () => {
    expect(judgesChange({ eventName: 'push', ...noPr }, repo, { GITHUB_REF_NAME: 'main' })).toBe(false)
    expect(judgesChange({ eventName: 'workflow_dispatch', ...noPr }, repo, { GITHUB_REF: 'refs/heads/main' })).toBe(false)
    expect(judgesChange({ eventName: 'schedule', ...noPr }, {}, {})).toBe(false)
  })

  it('counts a push or a run by hand on another branch, or on a branch it cannot tell, as judging a change', () => {
    expect(judgesChange({ eventName: 'push', ...noPr }, repo, { GITHUB_REF_NAME: 'tune' })).toBe(true)
    expect(judgesChange({ eventName: 'workflow_dispatch', ...noPr }, repo, {})).toBe(true)
    expect(judgesChange({ eventName: 'push', ...noPr }, {}, { GITHUB_REF_NAME: 'main' })).toBe(true)
    expect(judgesChange({ eventName: 'release', ...noPr }, repo, { GITHUB_REF_NAME: 'main' })).toBe(true)
  })
})

describe('isolationPolicy', () => {
  const serve = { command: 'vllm serve m --port {port}', readyTimeoutS: 60, stopTimeoutS: 30, stopCommand: null, secrets: [] }
  const cannot: IsolationCheck = { ok: false, reason: 'util-linux unshare is not installed' }
  let probes = 0
  const probe = (r: IsolationCheck) => async () => {
    probes++
    return r
  }
  const base = { inputs: {}, payload: repo, env: { GITHUB_REF_NAME: 'tune' }, ctx: { eventName: 'pull_request', ...pr } }

  it('refuses a pull request whose serve command would start on a runner that cannot isolate it, naming cause and remedy', async () => {
    const err = await isolationPolicy({ ...base, cfg: { serve, gate: {} }, probe: probe(cannot) }).catch((e: unknown) => e)
    expect(err).toBeInstanceOf(UsageError)
    expect((err as UsageError).message).toBe(
      "servegate refuses to start the commands of a pull_request run without a PID namespace of their own: this runner cannot make one (util-linux unshare is not installed), and there they could read the job's tokens from /proc",
    )
    expect((err as UsageError).hint).toMatch(/^On the runner, allow unprivileged user namespaces .* or set server\.isolation: none in the base branch's config/)
  })

  it('refuses a reference command or an A/B side the same way', async () => {
    await expect(isolationPolicy({ ...base, cfg: { serve: null, gate: { referenceCommand: 'vllm serve m' } }, probe: probe(cannot) })).rejects.toThrow(
      UsageError,
    )
    await expect(isolationPolicy({ ...base, inputs: { bServe: 'x' }, cfg: { serve: null, gate: {} }, probe: probe(cannot) })).rejects.toThrow(UsageError)
  })

  it('lets it start where the runner can isolate it, and a run that judges no change anywhere', async () => {
    expect(await isolationPolicy({ ...base, cfg: { serve, gate: {} }, probe: probe({ ok: true }) })).toBeNull()
    const push = { ...base, ctx: { eventName: 'push', ...noPr }, env: { GITHUB_REF_NAME: 'main' } }
    expect(await isolationPolicy({ ...push, cfg: { serve, gate: {} }, probe: probe(cannot) })).toBeNull()
  })

  it('names server.isolation: none in the verdict on every run that starts a command, without probing', async () => {
    probes = 0
    expect(await isolationPolicy({ ...base, cfg: { serve, gate: {}, isolation: 'none' }, probe: probe(cannot) })).toBe(ISOLATION_OFF_NOTE)
    expect(probes).toBe(0)
  })

  it('probes nothing where no command starts (the simulator, a base URL)', async () => {
    probes = 0
    expect(await isolationPolicy({ ...base, cfg: { serve: null, gate: {}, isolation: 'none' }, probe: probe(cannot) })).toBeNull()
    expect(probes).toBe(0)
  })
})
