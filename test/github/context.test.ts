import { describe, expect, it } from 'vitest'
import { detectFork, detectRunner, forkRefusal, readRunContext } from '../../src/github/context.js'

const pr = (head: { full_name?: string; fork?: boolean } | null, base = { full_name: 'acme/infer', fork: false }) => ({ number: 3, head: { repo: head }, base: { repo: base } })

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
    expect(ctx).toMatchObject({ owner: 'acme', repo: 'infer', pullRequest: { number: 3, fromFork: false }, runUrl: 'https://github.example/acme/infer/actions/runs/99' })
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
