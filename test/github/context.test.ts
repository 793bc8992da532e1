import { describe, expect, it } from 'vitest'
import { detectFork, detectRunner, forkRefusal, readRunContext } from '../../src/github/context.js'

const pr = (head: { full_name?: string; fork?: boolean } | null, base = { full_name: 'acme/infer', fork: false }) => ({
  number: 3,
  head: { repo: head },
  base: { repo: base },
})

describe('detectFork', () => {
  it.each([
    ['a branch of the same repository', pr({ full_name: 'acme/infer', fork: false }), false],
    ['a different head repository', pr({ full_name: 'mallory/infer', fork: true }), true],
    ['a different name even without the fork flag', pr({ full_name: 'mallory/infer', fork: false }), true],
    ['a deleted fork (head.repo null)', pr(null), true],
    ['a head repo flagged as fork with the same name', pr({ full_name: 'acme/infer', fork: true }), true],
    ['a branch of a repository that is itself a fork', pr({ full_name: 'acme/infer', fork: true }, { full_name: 'acme/infer', fork: true }), false],
  ])('%s → %s', (_name, p, fork) => {
    expect(detectFork(p, 'acme/infer').fromFork).toBe(fork)
  })
})

describe('detectRunner', () => {
  it('trusts only github-hosted; anything else, or nothing, is self-hosted', () => {
    expect(detectRunner({ RUNNER_ENVIRONMENT: 'github-hosted' }).selfHosted).toBe(false)
    expect(detectRunner({ RUNNER_ENVIRONMENT: 'self-hosted' }).selfHosted).toBe(true)
    expect(detectRunner({})).toEqual({ selfHosted: true, how: 'RUNNER_ENVIRONMENT is not set, so servegate assumes a self-hosted runner' })
  })
})

describe('readRunContext and forkRefusal', () => {
  const env = { GITHUB_REPOSITORY: 'acme/infer', RUNNER_ENVIRONMENT: 'self-hosted', GITHUB_RUN_ID: '99', GITHUB_SERVER_URL: 'https://github.example' }

  it('finds the PR number, the repository and the run link', () => {
    const ctx = readRunContext('pull_request', { pull_request: pr({ full_name: 'acme/infer' }) }, env)
    expect(ctx).toMatchObject({
      owner: 'acme',
      repo: 'infer',
      pullRequest: { number: 3, fromFork: false },
      runUrl: 'https://github.example/acme/infer/actions/runs/99',
    })
  })

  it('has no pull request on push events, and never refuses them', () => {
    const ctx = readRunContext('push', {}, env)
    expect(ctx.pullRequest).toBeNull()
    expect(forkRefusal(ctx, false)).toBeNull()
  })

  it('refuses a fork on self-hosted unless allowed, and never on github-hosted', () => {
    const payload = { pull_request: pr({ full_name: 'mallory/infer', fork: true }) }
    expect(forkRefusal(readRunContext('pull_request', payload, env), false)).toMatch(/pull request #3: it comes from a fork/)
    expect(forkRefusal(readRunContext('pull_request', payload, env), true)).toBeNull()
    expect(forkRefusal(readRunContext('pull_request', payload, { ...env, RUNNER_ENVIRONMENT: 'github-hosted' }), false)).toBeNull()
  })
})

describe('untrusted code from other triggers', () => {
  const env = { GITHUB_REPOSITORY: 'acme/infer', RUNNER_ENVIRONMENT: 'self-hosted', GITHUB_SHA: 'd'.repeat(40), GITHUB_RUN_ATTEMPT: '2' }
  // The fields GitHub sends on issue_comment for a comment on a pull request (trimmed).
  const comment = (association: string) => ({
    action: 'created',
    issue: {
      number: 12,
      title: 'Bump vLLM',
      pull_request: { url: 'https://api.github.com/repos/acme/infer/pulls/12', html_url: 'https://github.com/acme/infer/pull/12' },
    },
    comment: { id: 1, body: '/benchmark', author_association: association, user: { login: 'someone', type: 'User' } },
    repository: { full_name: 'acme/infer', default_branch: 'main' },
  })
  // The fields GitHub sends on workflow_run (trimmed).
  const workflowRun = (head: string, prs: Array<{ number: number }> = []) => ({
    action: 'completed',
    workflow_run: {
      event: 'pull_request',
      head_sha: 'e'.repeat(40),
      head_branch: 'feature',
      head_repository: { full_name: head, fork: head !== 'acme/infer' },
      repository: { full_name: 'acme/infer', fork: false },
      pull_requests: prs.map((p) => ({ number: p.number, head: { sha: 'e'.repeat(40), ref: 'feature' }, base: { sha: 'b'.repeat(40), ref: 'main' } })),
    },
    repository: { full_name: 'acme/infer', default_branch: 'main' },
  })

  it.each(['OWNER', 'MEMBER', 'COLLABORATOR'])('trusts an issue_comment by %s, gating against the default branch', (association) => {
    const ctx = readRunContext('issue_comment', comment(association), env)
    expect(ctx.untrusted).toBeNull()
    expect(ctx.pullRequest).toMatchObject({ number: 12, fromFork: false })
    expect(ctx.base).toEqual({ sha: null, ref: 'main' })
    // GITHUB_SHA is the default branch's head on issue_comment, not the PR's.
    expect(ctx.headSha).toBeNull()
    expect(forkRefusal(ctx, false)).toBeNull()
  })

  it.each(['CONTRIBUTOR', 'FIRST_TIME_CONTRIBUTOR', 'NONE'])('refuses an issue_comment by %s on a self-hosted runner, saying why', (association) => {
    const ctx = readRunContext('issue_comment', comment(association), env)
    expect(forkRefusal(ctx, false)).toMatch(
      new RegExp(
        `refuses to benchmark pull request #12: the comment by someone \\(author_association ${association}\\).*only OWNER, MEMBER or COLLABORATOR.*allow-fork: true`,
      ),
    )
  })

  it('ignores issue_comment on a plain issue', () => {
    const payload = { ...comment('NONE'), issue: { number: 5 } }
    const ctx = readRunContext('issue_comment', payload, env)
    expect(ctx.pullRequest).toBeNull()
    expect(forkRefusal(ctx, false)).toBeNull()
  })

  it('refuses a workflow_run whose head repository is a fork, even though GitHub lists no pull request for it', () => {
    const ctx = readRunContext('workflow_run', workflowRun('mallory/infer'), env)
    expect(ctx.pullRequest).toBeNull()
    expect(ctx.headSha).toBe('e'.repeat(40))
    expect(forkRefusal(ctx, false)).toMatch(
      /refuses to benchmark the pull_request run of feature: it comes from a fork \(the triggering run's head repository mallory\/infer is not acme\/infer\)/,
    )
    expect(forkRefusal(ctx, true)).toBeNull()
  })

  it('trusts a workflow_run from this repository and takes its pull request, head and base', () => {
    const ctx = readRunContext('workflow_run', workflowRun('acme/infer', [{ number: 4 }]), env)
    expect(ctx.untrusted).toBeNull()
    expect(ctx).toMatchObject({
      pullRequest: { number: 4, fromFork: false },
      headSha: 'e'.repeat(40),
      base: { sha: 'b'.repeat(40), ref: 'main' },
      runAttempt: '2',
    })
  })

  it('takes the head commit and base of a pull_request event, and GITHUB_SHA on a push', () => {
    const payload = {
      pull_request: {
        number: 3,
        head: { repo: { full_name: 'acme/infer' }, sha: 'a'.repeat(40) },
        base: { repo: { full_name: 'acme/infer' }, sha: 'b'.repeat(40), ref: 'main' },
      },
    }
    expect(readRunContext('pull_request', payload, env)).toMatchObject({ headSha: 'a'.repeat(40), base: { sha: 'b'.repeat(40), ref: 'main' } })
    expect(readRunContext('push', {}, env)).toMatchObject({ headSha: 'd'.repeat(40), base: null })
  })

  it('takes the base of a merge_group from the queue (merge_group.base_sha / base_ref), never the queue branch', () => {
    const payload = {
      merge_group: { head_sha: 'c'.repeat(40), head_ref: 'refs/heads/gh-readonly-queue/main/pr-9-abc', base_sha: 'b'.repeat(40), base_ref: 'refs/heads/main' },
    }
    expect(readRunContext('merge_group', payload, env)).toMatchObject({
      pullRequest: null,
      untrusted: null,
      headSha: 'c'.repeat(40),
      base: { sha: 'b'.repeat(40), ref: 'main' },
    })
    expect(readRunContext('merge_group', {}, env)).toMatchObject({ headSha: 'd'.repeat(40), base: null })
  })

  it.each(['workflow_dispatch', 'schedule'])('takes the default branch as the base of %s, whatever branch the run is on', (event) => {
    const payload = { repository: { full_name: 'acme/infer', default_branch: 'trunk' } }
    expect(readRunContext(event, payload, env)).toMatchObject({ pullRequest: null, headSha: 'd'.repeat(40), base: { sha: null, ref: 'trunk' } })
    expect(readRunContext(event, {}, env).base).toBeNull()
  })
})
