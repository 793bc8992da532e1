import { getOctokit } from '@actions/github'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { apiStatus, describeApiError } from '../../src/github/api-errors.js'
import { octokitComments, tokenIdentity } from '../../src/github/octokit-api.js'
import { commentMarker, findStickyComment, upsertStickyComment, WORKFLOW_TOKEN_IDENTITY } from '../../src/github/sticky-comment.js'
import { startFakeGitHub, type FakeGitHub } from './fake-github.js'

let gh: FakeGitHub
const api = () => octokitComments(getOctokit('ghs_test', { baseUrl: gh.url }), 'acme', 'infer')
const bot = WORKFLOW_TOKEN_IDENTITY
const upsert = (body: string, create = true) => upsertStickyComment(api(), { issueNumber: 7, name: 'gate', body, identity: bot, create })

beforeEach(async () => {
  gh = await startFakeGitHub({ maxPerPage: 2 })
})
afterEach(async () => {
  await gh.close()
})

describe('sticky comment over the REST API', () => {
  it('creates one comment carrying the marker, then edits that same comment', async () => {
    const first = await upsert('first')
    expect(first.action).toBe('created')
    const second = await upsert('second')
    expect(second).toMatchObject({ action: 'updated', comment: { id: first.comment!.id } })
    expect(gh.comments).toHaveLength(1)
    expect(gh.comments[0]!.body).toBe(`${commentMarker('gate')}\nsecond`)
    expect(gh.calls.map((c) => c.method)).toEqual(['GET', 'POST', 'GET', 'PATCH'])
    expect(gh.calls[0]!.authorization).toBe('token ghs_test')
  })

  it('follows Link headers to find its comment on a later page', async () => {
    for (let i = 0; i < 5; i++) gh.addComment(7, `chatter ${i}`, { login: 'alice', type: 'User' })
    const mine = gh.addComment(7, `${commentMarker('gate')}\nold`, bot)
    const found = await findStickyComment(api(), 7, 'gate', bot)
    expect(found?.id).toBe(mine.id)
    expect(gh.calls.map((c) => c.query['page'] ?? '1')).toEqual(['1', '2', '3'])
  })

  it('skips marked comments by other authors, other markers and other issues', async () => {
    gh.addComment(7, commentMarker('gate'), { login: 'mallory', type: 'User' })
    gh.addComment(7, commentMarker('gate'), { login: 'github-actions[bot]', type: 'User' })
    gh.addComment(7, commentMarker('gate-2'), bot)
    gh.addComment(8, commentMarker('gate'), bot)
    expect(await findStickyComment(api(), 7, 'gate', bot)).toBeNull()
    const r = await upsert('mine')
    expect(r.action).toBe('created')
    expect(gh.comments.filter((c) => c.issue === 7)).toHaveLength(4)
  })

  it('with no identity, takes any bot’s marked comment, github-actions[bot]’s first, never a user’s', async () => {
    gh.addComment(7, commentMarker('gate'), { login: 'mallory', type: 'User' })
    const app = gh.addComment(7, commentMarker('gate'), { login: 'some-app[bot]', type: 'Bot' })
    expect((await findStickyComment(api(), 7, 'gate', null))?.id).toBe(app.id)
    const actions = gh.addComment(7, commentMarker('gate'), bot)
    expect((await findStickyComment(api(), 7, 'gate', null))?.id).toBe(actions.id)
  })

  it('with create false, leaves a PR without a comment alone', async () => {
    expect(await upsert('x', false)).toEqual({ action: 'skipped', comment: null })
    expect(gh.calls.map((c) => c.method)).toEqual(['GET'])
  })

  it.each([
    [403, /HTTP 403 .*read-only token/],
    [429, /HTTP 429 .*rate limit/],
    [503, /HTTP 503 .*having trouble/],
  ])('surfaces HTTP %i as an error with its status and a readable cause', async (status, pattern) => {
    gh.fail({ status })
    const err = await upsert('x').catch((e: unknown) => e)
    expect(apiStatus(err)).toBe(status)
    expect(describeApiError(err)).toMatch(pattern)
  })
})

describe('tokenIdentity', () => {
  it('leaves an installation token (workflow token or GitHub App) unnamed, without asking: any bot may be it', async () => {
    expect(await tokenIdentity(getOctokit('ghs_x', { baseUrl: gh.url }), 'ghs_x', () => {})).toBeNull()
    expect(gh.calls).toEqual([])
  })

  it('asks GET /user for a personal token, and falls back with a warning when that fails', async () => {
    gh.actor = { login: 'octo', type: 'User' }
    expect(await tokenIdentity(getOctokit('ghp_x', { baseUrl: gh.url }), 'ghp_x', () => {})).toEqual({ login: 'octo', type: 'User' })
    gh.fail({ status: 403 })
    const warnings: string[] = []
    expect(await tokenIdentity(getOctokit('ghp_x', { baseUrl: gh.url }), 'ghp_x', (w) => warnings.push(w))).toBeNull()
    expect(warnings).toHaveLength(1)
  })
})
