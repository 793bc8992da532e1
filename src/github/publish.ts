/**
 * Post or refresh the sticky PR comment without ever failing the run: an API
 * error (403 from a fork's read-only token, 429, 5xx) becomes a warning and a
 * note in the job summary, and the verdict stands.
 */
import { describeApiError } from './api-errors.js'
import { statusCommentBody, type RunStamp, type RunState } from './status-comment.js'
import { upsertStickyComment, type CommentIdentity, type CommentsApi } from './sticky-comment.js'

/** The API the action talks to for one token. */
export interface GitHubClient {
  comments: CommentsApi
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

export interface StatusOptions {
  issueNumber: number
  name: string
  state: RunState
  stamp: RunStamp
  /** Plain text: what happened (redacted and escaped here). */
  detail: string
  /** Runs measured of those planned, when a sweep was cut short. */
  partial?: { done: number; planned: number }
  /** Create the comment when none exists (default true; false: only replace an existing verdict). */
  create?: boolean
  /** Values to redact from `detail` besides the token shapes redactSecrets knows (API key, github token). */
  secrets?: readonly string[]
}

/**
 * Put a run without a verdict (running, error, refused, cancelled) into servegate's comment, so an
 * earlier verdict never stands for a commit it did not measure. Never throws.
 */
export async function publishStatus(connect: () => GitHubClient, opts: StatusOptions): Promise<PublishResult> {
  let body: string
  try {
    body = statusCommentBody(opts.state, opts.stamp, opts.detail, opts.partial, opts.secrets ?? [])
  } catch (err) {
    return { action: 'failed', commentId: null, url: null, problem: `servegate could not write its status comment: ${describeApiError(err)}` }
  }
  return publishComment(connect, { issueNumber: opts.issueNumber, name: opts.name, body, create: opts.create ?? true })
}
