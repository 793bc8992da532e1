/**
 * Post or refresh the sticky PR comment without ever failing the run: an API
 * error (403 from a fork's read-only token, 429, 5xx) becomes a warning and a
 * note in the job summary, and the verdict stands.
 */
import { describeApiError } from './api-errors.js'
import { upsertStickyComment, type CommentIdentity, type CommentsApi } from './sticky-comment.js'
import type { IssuesApi } from './tracking-issue.js'

/** The API the action talks to for one token. */
export interface GitHubClient {
  comments: CommentsApi
  /** Issues of the repository (watch mode's tracking issue). */
  issues: IssuesApi
  /** Whose comments count as servegate's (see sticky-comment.ts); null: any bot's. */
  identity(): Promise<CommentIdentity | null>
}

export interface PublishResult {
  action: 'created' | 'updated' | 'skipped' | 'failed'
  commentId: number | null
  url: string | null
  /** Set when the comment could not be posted: why, for the log and the summary. */
  problem: string | null
}

/** Create or update servegate's comment on `issueNumber` with a client from `connect`; errors are returned, not thrown. */
export async function publishComment(
  connect: () => GitHubClient,
  opts: { issueNumber: number; name: string; body: string; create: boolean },
): Promise<PublishResult> {
  try {
    // Inside the try: even building the client (repository from the environment) must not fail the run.
    const client = connect()
    const identity = await client.identity()
    const r = await upsertStickyComment(client.comments, { ...opts, identity })
    return { action: r.action, commentId: r.comment?.id ?? null, url: r.comment?.html_url ?? null, problem: null }
  } catch (err) {
    return {
      action: 'failed',
      commentId: null,
      url: null,
      problem: `servegate could not post its pull-request comment: ${describeApiError(err)}. The verdict is in this job summary and the step outputs.`,
    }
  }
}
