/**
 * One pull-request comment per gated configuration, found again by a hidden
 * marker and edited in place on every rerun, so a PR never collects a pile of
 * stale benchmark comments.
 */

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

/** Who writes servegate's comments; for the workflow token that is github-actions[bot]. */
export interface CommentIdentity {
  login: string
  type: 'Bot' | 'User'
}

export const WORKFLOW_TOKEN_IDENTITY: CommentIdentity = { login: 'github-actions[bot]', type: 'Bot' }

/** The hidden marker that identifies servegate's comment for one configuration. */
export function commentMarker(name: string): string {
  return `<!-- servegate:${name} -->`
}

/** The oldest comment by `identity` that carries the marker, or null. Reads every page. */
export async function findStickyComment(
  api: CommentsApi,
  issueNumber: number,
  name: string,
  identity: CommentIdentity,
): Promise<IssueComment | null> {
  const marker = commentMarker(name)
  for await (const page of api.listComments(issueNumber)) {
    for (const c of page) {
      // Only our own comments: anyone can paste the marker into theirs, and we could not edit those anyway.
      if (c.user?.login !== identity.login || c.user.type !== identity.type) continue
      if (typeof c.body === 'string' && c.body.includes(marker)) return c
    }
  }
  return null
}

export interface UpsertOptions {
  issueNumber: number
  name: string
  /** Comment body without the marker (it is added here). */
  body: string
  identity: CommentIdentity
  /** Create the comment when none exists (false: only refresh an existing one). */
  create: boolean
}

export interface UpsertResult {
  action: 'created' | 'updated' | 'skipped'
  comment: IssueComment | null
}

/** Update servegate's comment in place, or create it when allowed; never creates a second one. */
export async function upsertStickyComment(api: CommentsApi, opts: UpsertOptions): Promise<UpsertResult> {
  const body = `${commentMarker(opts.name)}\n${opts.body}`
  const existing = await findStickyComment(api, opts.issueNumber, opts.name, opts.identity)
  if (existing !== null) {
    const updated = await api.updateComment(existing.id, body)
    return { action: 'updated', comment: { ...existing, ...updated } }
  }
  if (!opts.create) return { action: 'skipped', comment: null }
  return { action: 'created', comment: await api.createComment(opts.issueNumber, body) }
}
