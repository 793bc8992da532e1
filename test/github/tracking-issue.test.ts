import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { githubClient } from '../../src/github/octokit-api.js'
import type { GitHubClient } from '../../src/github/publish.js'
import { issueActionFor, syncTrackingIssue, watchMarker, type IssueSync } from '../../src/github/tracking-issue.js'
import { startFakeGitHub, type FakeGitHub, type FakeUser } from './fake-github.js'

// The real client (Octokit, paginated, with retries) against a stand-in GitHub on 127.0.0.1; the
// throttling plugin answers rate limits as ever but does not space the writes (unpaced-throttling.ts).
vi.mock('@octokit/plugin-throttling', async (original) => (await import('./unpaced-throttling.js')).unpaced(original))

let gh: FakeGitHub
const BOT: FakeUser = { login: 'github-actions[bot]', type: 'Bot' }
const ALICE: FakeUser = { login: 'alice', type: 'User' }
const MARKER = watchMarker('gate')

const client = (token = 'ghs_workflowtoken'): GitHubClient =>
  githubClient(token, { owner: 'acme', repo: 'infer', baseUrl: gh.url, warn: () => undefined, serverRetryUnitMs: 1 })
async function sync(action: IssueSync['action'], token?: string) {
  const c = client(token)
  return syncTrackingIssue(c.issues, {
    key: 'gate',
    identity: await c.identity(),
    action,
    title: `servegate watch: ${action}`,
    body: `first line\nbody of ${action}`,
    stillFailing: 'still failing',
    passing: 'passing again',
  })
}
const calls = () => gh.calls.map((c) => `${c.method} ${c.path}`)
const ours = () => gh.issues.filter((i) => i.body.includes(MARKER) && i.user.login === BOT.login && !i.isPullRequest)

beforeEach(async () => {
  gh = await startFakeGitHub({ maxPerPage: 2 })
})
afterEach(async () => {
  await gh.close()
})

describe('issueActionFor', () => {
  it.each([
    ['regression', true, 'open-or-update'],
    ['undecided', true, 'open-or-update'],
    ['pass', false, 'close'],
    ['improvement', false, 'close'],
    ['undecided', false, 'leave'],
    ['regression', false, 'leave'],
  ] as const)('%s (failing: %s) → %s', (verdict, failing, action) => {
    expect(issueActionFor(verdict, failing)).toBe(action)
  })

  it('neither opens nor closes the issue on a blind verdict, failing or not', () => {
    expect(issueActionFor('undecided', true, true)).toBe('leave')
    expect(issueActionFor('undecided', false, true)).toBe('leave')
    // Blindness is only an undecided verdict's: a regression with a blind row still opens it.
    expect(issueActionFor('regression', true, true)).toBe('open-or-update')
  })
})

describe('syncTrackingIssue through the REST API', () => {
  it('opens one issue with the marker after the body, so the first line stays the reader’s', async () => {
    const r = await sync('open-or-update')
    expect(r.done).toBe('opened')
    expect(ours()).toHaveLength(1)
    expect(ours()[0]).toMatchObject({ title: 'servegate watch: open-or-update', body: `first line\nbody of open-or-update\n\n${MARKER}\n`, state: 'open' })
    expect(r.issue?.html_url).toBe('https://github.test/o/r/issues/1')
  })

  it('finds its issue on a later page among others’ issues, a pasted marker and pull requests, then edits and comments', async () => {
    gh.addIssue({ body: `copied ${MARKER}`, user: ALICE })
    gh.addIssue({ body: MARKER, user: BOT, isPullRequest: true })
    gh.addIssue({ body: 'unrelated', user: BOT })
    gh.addIssue({ body: `old ${MARKER}`, user: BOT, state: 'closed' })
    gh.addIssue({ body: 'unrelated', user: ALICE })
    const mine = gh.addIssue({ body: `was failing\n\n${MARKER}\n`, user: BOT })
    const r = await sync('open-or-update')
    expect(r).toMatchObject({ done: 'updated', issue: { number: mine.number } })
    // Three pages of open issues (two a page), then the edit and the comment.
    expect(calls()).toEqual([
      'GET /repos/acme/infer/issues',
      'GET /repos/acme/infer/issues',
      'GET /repos/acme/infer/issues',
      `PATCH /repos/acme/infer/issues/${mine.number}`,
      `POST /repos/acme/infer/issues/${mine.number}/comments`,
    ])
    expect(gh.calls[0]!.query).toMatchObject({ state: 'open' })
    expect(mine.body).toBe(`first line\nbody of open-or-update\n\n${MARKER}\n`)
    expect(gh.comments.filter((c) => c.issue === mine.number).map((c) => c.body)).toEqual(['still failing'])
    expect(gh.issues.find((i) => i.user === ALICE && i.body.includes(MARKER))!.body).toBe(`copied ${MARKER}`)
  })

  it('closes the open issue as completed after a "passing again" comment; nothing when none is open', async () => {
    const mine = gh.addIssue({ body: `failing\n${MARKER}`, user: BOT })
    expect(await sync('close')).toMatchObject({ done: 'closed', issue: { number: mine.number, state: 'closed' } })
    expect(mine).toMatchObject({ state: 'closed', state_reason: 'completed' })
    expect(gh.comments.map((c) => c.body)).toEqual(['passing again'])
    gh.calls.length = 0
    expect(await sync('close')).toEqual({ done: 'none', issue: null })
    expect(calls()).toEqual(['GET /repos/acme/infer/issues'])
  })

  it('leaves the issue as it is for a verdict that neither fails nor passes', async () => {
    const mine = gh.addIssue({ body: `failing\n${MARKER}`, user: BOT })
    expect(await sync('leave')).toMatchObject({ done: 'left', issue: { number: mine.number } })
    expect(gh.calls.every((c) => c.method === 'GET')).toBe(true)
    expect(mine.body).toBe(`failing\n${MARKER}`)
  })

  it('after a 502 on create that GitHub stored anyway, finds that issue instead of opening a second', async () => {
    gh.failInTurn([{ status: 502, method: 'POST', afterApply: true }])
    expect(await sync('open-or-update')).toMatchObject({ done: 'opened', issue: { number: 1 } })
    expect(ours()).toHaveLength(1)
    expect(gh.calls.filter((c) => c.method === 'POST')).toHaveLength(1)
  })

  it('with a personal token, only the token’s own user’s issues count', async () => {
    gh.actor = ALICE
    gh.addIssue({ body: `bot's ${MARKER}`, user: BOT })
    const hers = gh.addIssue({ body: `hers ${MARKER}`, user: ALICE })
    expect(await sync('open-or-update', 'ghp_personaltoken0123456789')).toMatchObject({ done: 'updated', issue: { number: hers.number } })
  })

  it('a 403 without issues: write reaches the caller as an error with its status', async () => {
    gh.fail({ status: 403 })
    await expect(sync('open-or-update')).rejects.toMatchObject({ status: 403 })
  })
})
