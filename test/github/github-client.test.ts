import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { githubClient } from '../../src/github/octokit-api.js'
import { publishComment, type GitHubClient } from '../../src/github/publish.js'
import { statusCommentBody, type RunStamp, type RunState } from '../../src/github/status-comment.js'
import { commentMarker } from '../../src/github/sticky-comment.js'
import { startFakeGitHub, type FakeGitHub, type FakeUser } from './fake-github.js'

// The real client (Octokit with the retry and throttling plugins) against a stand-in GitHub on 127.0.0.1.
// The throttling plugin answers rate limits as ever but does not space the writes (unpaced-throttling.ts).
vi.mock('@octokit/plugin-throttling', async (original) => (await import('./unpaced-throttling.js')).unpaced(original))

let gh: FakeGitHub
let warnings: string[]
const client = (token = 'ghs_workflowtoken', serverRetryUnitMs?: number): GitHubClient =>
  githubClient(token, {
    owner: 'acme',
    repo: 'infer',
    baseUrl: gh.url,
    warn: (m) => warnings.push(m),
    ...(serverRetryUnitMs !== undefined ? { serverRetryUnitMs } : {}),
  })
const post = (body: string, token?: string, serverRetryUnitMs?: number) =>
  publishComment(() => client(token, serverRetryUnitMs), { issueNumber: 7, name: 'gate', body, create: true })
/** A 5xx retried after 10, 40 and 90 ms (1, 4 and 9 s on GitHub): the schedule's unit is the test's to set. */
const FAST_5XX_MS = 10
const marked = (body: string) => `${commentMarker('gate')}\n${body}`
const onIssue = () => gh.comments.filter((c) => c.issue === 7)
const methods = () => gh.calls.map((c) => c.method)

const BOT: FakeUser = { login: 'github-actions[bot]', type: 'Bot' }
const APP: FakeUser = { login: 'servegate-ci[bot]', type: 'Bot' }
const STAMP: RunStamp = {
  headSha: '1a2b3c4d5e6f7a8b9c0d',
  at: '2026-03-02T10:20:30.000Z',
  runAttempt: '2',
  runUrl: 'https://github.com/acme/infer/actions/runs/9',
}

beforeEach(async () => {
  gh = await startFakeGitHub()
  warnings = []
})
afterEach(async () => {
  await gh.close()
})

describe('retries', () => {
  it('retries an edit answered 502 and lands it once', async () => {
    const mine = gh.addComment(7, marked('old'), BOT)
    gh.failInTurn([{ status: 502, method: 'PATCH' }])
    const r = await post('new', undefined, FAST_5XX_MS)
    expect(r).toMatchObject({ action: 'updated', commentId: mine.id, problem: null })
    expect(methods()).toEqual(['GET', 'PATCH', 'PATCH'])
    expect(onIssue().map((c) => c.body)).toEqual([marked('new')])
  })

  it('after a 502 on create, looks before posting again: one comment whether or not GitHub stored the first', async () => {
    gh.failInTurn([{ status: 502, method: 'POST' }])
    expect(await post('first')).toMatchObject({ action: 'created', problem: null })
    expect(methods()).toEqual(['GET', 'POST', 'GET', 'POST'])
    expect(onIssue()).toHaveLength(1)

    gh.comments.length = 0
    gh.calls.length = 0
    gh.failInTurn([{ status: 502, method: 'POST', afterApply: true }])
    const r = await post('second')
    expect(methods()).toEqual(['GET', 'POST', 'GET'])
    expect(onIssue().map((c) => c.body)).toEqual([marked('second')])
    expect(r).toMatchObject({ action: 'created', commentId: onIssue()[0]!.id })
  })

  it('waits out a 429 with retry-after and the rate-limit reset, then lands the comment once', async () => {
    const reset = String(Math.floor(Date.now() / 1000))
    gh.failInTurn([{ status: 429, method: 'POST', headers: { 'retry-after': '1', 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': reset } }])
    const r = await post('body')
    expect(r).toMatchObject({ action: 'created', problem: null })
    expect(onIssue()).toHaveLength(1)
    expect(methods().filter((m) => m === 'POST').length).toBeGreaterThanOrEqual(2)
    expect(warnings.some((w) => /primary rate limit .*retrying/.test(w))).toBe(true)
  })

  it('waits out a secondary rate limit (403 with retry-after: 1) on an edit', async () => {
    gh.addComment(7, marked('old'), BOT)
    const started = Date.now()
    gh.failInTurn([{ status: 403, method: 'PATCH', message: 'You have exceeded a secondary rate limit', headers: { 'retry-after': '1' } }])
    const r = await post('new')
    expect(r).toMatchObject({ action: 'updated', problem: null })
    expect(Date.now() - started).toBeGreaterThanOrEqual(900)
    expect(onIssue().map((c) => c.body)).toEqual([marked('new')])
    expect(warnings.some((w) => /secondary rate limit .*retrying in 1 s/.test(w))).toBe(true)
  })

  it('gives up on a rate limit that does not lift, without posting a second comment', async () => {
    gh.addComment(7, marked('old'), BOT)
    gh.fail({ status: 403, method: 'PATCH', message: 'You have exceeded a secondary rate limit', headers: { 'retry-after': '1' } })
    const r = await post('new')
    expect(r.action).toBe('failed')
    expect(r.problem).toMatch(/HTTP 403 .*rate limit/)
    expect(methods().filter((m) => m === 'PATCH')).toHaveLength(3)
    expect(methods()).not.toContain('POST')
    expect(onIssue()).toHaveLength(1)
  }, 20_000)
})

describe('whose comment is servegate’s', () => {
  it('with a GitHub App installation token, finds and edits the app bot’s comment instead of posting anew', async () => {
    gh.actor = APP
    await post('run 1')
    await post('run 2')
    expect(onIssue().map((c) => [c.user.login, c.body])).toEqual([[APP.login, marked('run 2')]])
  })

  it('prefers github-actions[bot]’s comment, and when editing it is refused moves on', async () => {
    gh.addComment(7, 'chatter', { login: 'alice', type: 'User' })
    const app = gh.addComment(7, marked('by the app'), APP)
    const actions = gh.addComment(7, marked('by actions'), BOT)
    gh.actor = APP
    const r = await post('now')
    // github-actions[bot]'s comment is tried first; the app may not edit it (403), so its own is edited.
    expect(gh.calls.filter((c) => c.method === 'PATCH').map((c) => c.path)).toEqual([
      `/repos/acme/infer/issues/comments/${actions.id}`,
      `/repos/acme/infer/issues/comments/${app.id}`,
    ])
    expect(r).toMatchObject({ action: 'updated', commentId: app.id })
    expect(onIssue()).toHaveLength(3)
  })

  it('creates a new comment when the only marked comment belongs to another bot', async () => {
    gh.addComment(7, marked('someone else'), { login: 'other-app[bot]', type: 'Bot' })
    gh.actor = APP
    const r = await post('mine')
    expect(r.action).toBe('created')
    expect(onIssue().map((c) => c.user.login)).toEqual(['other-app[bot]', APP.login])
  })

  it('never edits a user’s comment that carries the marker', async () => {
    gh.addComment(7, marked('pasted'), { login: 'mallory', type: 'User' })
    await post('mine')
    expect(methods()).not.toContain('PATCH')
    expect(onIssue()[0]!.body).toBe(marked('pasted'))
  })

  it('with a personal token, looks for the token user’s comment only', async () => {
    gh.actor = { login: 'octo', type: 'User' }
    gh.addComment(7, marked('bot'), BOT)
    const mine = gh.addComment(7, marked('octo'), gh.actor)
    const r = await post('new', 'ghp_personaltoken')
    expect(r).toMatchObject({ action: 'updated', commentId: mine.id })
    expect(methods()).toEqual(['GET', 'GET', 'PATCH'])
  })
})

/** A status body posted the way the action does: statusCommentBody through publishComment. */
function publishStatus(
  connect: () => GitHubClient,
  o: { issueNumber: number; name: string; state: RunState; stamp: RunStamp; detail: string; partial?: { done: number; planned: number }; secrets?: string[] },
) {
  return publishComment(connect, {
    issueNumber: o.issueNumber,
    name: o.name,
    body: statusCommentBody(o.state, o.stamp, o.detail, o.partial, o.secrets ?? []),
    create: true,
  })
}

describe('status bodies through publishComment', () => {
  it('puts the running state into the comment, then the error over it, in one comment', async () => {
    gh.addComment(7, marked('### ✅ servegate: pass — an older verdict'), BOT)
    const running = await publishStatus(() => client(), { issueNumber: 7, name: 'gate', state: 'running', stamp: STAMP, detail: '' })
    expect(running.action).toBe('updated')
    expect(onIssue()[0]!.body).toContain('⏳ servegate: benchmark running')
    expect(onIssue()[0]!.body).toContain('for 1a2b3c4d5e6f · 2026-03-02 10:20 UTC · attempt 2')

    const failed = await publishStatus(() => client(), {
      issueNumber: 7,
      name: 'gate',
      state: 'error',
      stamp: STAMP,
      detail: 'server said <img src=x onerror=alert(1)> to @org/team with key sk-abcdefghijklmnop1234',
      partial: { done: 4, planned: 9 },
      secrets: [],
    })
    expect(failed.action).toBe('updated')
    const body = onIssue()[0]!.body
    expect(onIssue()).toHaveLength(1)
    expect(body.startsWith(`${commentMarker('gate')}\n### 🛑 servegate: the run failed — no verdict`)).toBe(true)
    expect(body).toContain('Partial: 4 of 9 planned runs were measured; nothing was certified.')
    expect(body).toContain('Any earlier verdict in this comment no longer applies.')
    expect(body).not.toContain('<img')
    expect(body).not.toContain('sk-abcdefghijklmnop1234')
    expect(body).toContain('@\u200Dorg/team')
  })

  it('never throws: a client that cannot be built and an API that answers 500 both come back as problems', async () => {
    const broken = await publishStatus(
      () => {
        throw new Error('GITHUB_REPOSITORY is not set')
      },
      { issueNumber: 7, name: 'gate', state: 'cancelled', stamp: STAMP, detail: 'cancelled' },
    )
    expect(broken).toMatchObject({ action: 'failed', problem: expect.stringContaining('GITHUB_REPOSITORY is not set') })
    gh.fail({ status: 500, method: 'GET' })
    const down = await publishStatus(() => client('ghs_workflowtoken', 20), { issueNumber: 7, name: 'gate', state: 'refused', stamp: STAMP, detail: 'fork' })
    expect(down.action).toBe('failed')
    expect(down.problem).toMatch(/HTTP 500/)
    // Bounded: the first try and three retries.
    expect(methods()).toEqual(['GET', 'GET', 'GET', 'GET'])
  })
})
