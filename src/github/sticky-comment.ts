/**
 * One pull-request comment per gated configuration, found again by a hidden
 * marker and edited in place on every rerun, so a PR never collects a pile of
 * stale benchmark comments — whichever bot posts it (github-actions[bot] for
 * the workflow token, `<app>[bot]` for a GitHub App's installation token).
 */
import { apiStatus, mayHaveLanded } from './api-errors.js'

/** The fields of an issue comment servegate reads. */
export interface IssueComment {
  id: number
  body?: string | null
  user?: { login: string; type: string } | null
  html_url?: string
}

/** The three REST calls the sticky comment needs (issue comments; a PR is an issue). */
export interface CommentsApi {
  /** Every comment on the issue, page by page (the real one follows Link headers). */
  listComments(issueNumber: number): AsyncIterable<IssueComment[]>
  createComment(issueNumber: number, body: string): Promise<IssueComment>
  updateComment(commentId: number, body: string): Promise<IssueComment>
}

/**
 * Who writes servegate's comments: the token's user for a personal token; for the workflow token
 * github-actions[bot]. `null` where the token cannot ask (installation tokens, ghs_): any bot.
 */
export interface CommentIdentity {
  login: string
  type: 'Bot' | 'User'
}

export const WORKFLOW_TOKEN_IDENTITY: CommentIdentity = { login: 'github-actions[bot]', type: 'Bot' }

/** The hidden marker that identifies servegate's comment for one configuration. */
export function commentMarker(name: string): string {
  return `<!-- servegate:${name} -->`
}

/** Whether `c` may be servegate's comment for `identity` (null: any bot). */
function byUs(c: IssueComment, identity: CommentIdentity | null): boolean {
  if (identity === null) return c.user?.type === 'Bot'
  return c.user?.login === identity.login && c.user.type === identity.type
}

/**
 * Every comment carrying the marker that servegate may have written, best first: the identity's own,
 * or with an unknown identity bot comments, github-actions[bot]'s before other bots', oldest first.
 * Reads every page.
 */
async function findStickyComments(api: CommentsApi, issueNumber: number, name: string, identity: CommentIdentity | null): Promise<IssueComment[]> {
  const marker = commentMarker(name)
  const found: IssueComment[] = []
  for await (const page of api.listComments(issueNumber)) {
    for (const c of page) {
      // Only our own (or, unknown, a bot's): anyone can paste the marker into theirs, and we could not edit those anyway.
      if (byUs(c, identity) && typeof c.body === 'string' && c.body.includes(marker)) found.push(c)
    }
  }
  const rank = (c: IssueComment): number => (c.user?.login === WORKFLOW_TOKEN_IDENTITY.login ? 0 : 1)
  return found
    .map((c, i) => ({ c, i }))
    .sort((a, b) => rank(a.c) - rank(b.c) || a.i - b.i)
    .map(({ c }) => c)
}

/** The best comment findStickyComments finds, or null. */
export async function findStickyComment(api: CommentsApi, issueNumber: number, name: string, identity: CommentIdentity | null): Promise<IssueComment | null> {
  return (await findStickyComments(api, issueNumber, name, identity))[0] ?? null
}

export interface UpsertOptions {
  issueNumber: number
  name: string
  /** Comment body without the marker (it is added here). */
  body: string
  identity: CommentIdentity | null
  /** Create the comment when none exists (false: only refresh an existing one). */
  create: boolean
}

export interface UpsertResult {
  action: 'created' | 'updated' | 'skipped'
  comment: IssueComment | null
}

// Candidates tried before giving up on editing: a PR rarely holds more than one marked bot comment.
const MAX_EDIT_TRIES = 3

/**
 * A refusal to edit: the comment is not the token's (403, another bot's) or is gone (404). A rate
 * limit also answers 403, but that is not a refusal: creating a second comment then would pile up.
 */
export function isRefusal(err: unknown): boolean {
  const status = apiStatus(err)
  if (status === 404) return true
  if (status !== 403) return false
  const e = err as { message?: unknown; response?: { headers?: Record<string, unknown> } }
  const message = typeof e.message === 'string' ? e.message : ''
  return !/rate limit/i.test(message) && e.response?.headers?.['x-ratelimit-remaining'] !== '0'
}

/**
 * Update servegate's comment in place, or create it when allowed. Never creates a second one: an
 * edit refused (another bot's comment, a deleted one) moves to the next candidate and only then
 * creates; a create that failed without an answer is looked for before it is tried once more.
 */
export async function upsertStickyComment(api: CommentsApi, opts: UpsertOptions): Promise<UpsertResult> {
  const body = `${commentMarker(opts.name)}\n${opts.body}`
  const candidates = await findStickyComments(api, opts.issueNumber, opts.name, opts.identity)
  for (const existing of candidates.slice(0, MAX_EDIT_TRIES)) {
    try {
      const updated = await api.updateComment(existing.id, body)
      return { action: 'updated', comment: { ...existing, ...updated } }
    } catch (err) {
      if (!isRefusal(err)) throw err
    }
  }
  if (!opts.create) return { action: 'skipped', comment: null }
  try {
    return { action: 'created', comment: await api.createComment(opts.issueNumber, body) }
  } catch (err) {
    if (!mayHaveLanded(err)) throw err
    // GitHub may have stored the comment before the 502: look before posting again.
    const landed = (await findStickyComments(api, opts.issueNumber, opts.name, opts.identity)).find((c) => !candidates.some((x) => x.id === c.id))
    if (landed !== undefined) return { action: 'created', comment: landed }
    return { action: 'created', comment: await api.createComment(opts.issueNumber, body) }
  }
}
