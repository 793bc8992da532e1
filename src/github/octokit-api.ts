/**
 * The real GitHub client over @actions/github's Octokit (REST, paginated by
 * Link headers), with Octokit's retry and throttling plugins so a 502, an
 * abuse-detection 403 or a 429 delays the comment instead of losing it. The
 * base URL comes from GITHUB_API_URL, so GitHub Enterprise Server and the
 * tests' stand-in server both work.
 */
import { getOctokit } from '@actions/github'
import { retry } from '@octokit/plugin-retry'
import { throttling } from '@octokit/plugin-throttling'
import type { GitHubClient } from './publish.js'
import type { CommentsApi, CommentIdentity, IssueComment } from './sticky-comment.js'
import type { IssuesApi, TrackedIssue } from './tracking-issue.js'

type Octokit = ReturnType<typeof getOctokit>

/** Retries of a request that failed with 5xx or no answer (waits 1, 4, 9 s: plugin-retry's schedule). */
const SERVER_ERROR_RETRIES = 3
/** Retries of a rate-limited request (primary or secondary limit). */
const RATE_LIMIT_RETRIES = 2
/** Longest wait for a rate limit to lift, s; a job should not sit an hour on a primary limit's reset. */
const MAX_RATE_LIMIT_WAIT_S = 120

export interface GitHubClientOptions {
  owner: string
  repo: string
  /** API root; default GITHUB_API_URL or https://api.github.com. */
  baseUrl?: string
  /** Unit of plugin-retry's 1, 4, 9 waits after a 5xx, ms (default 1000; tests shorten it). */
  serverRetryUnitMs?: number
  warn(message: string): void
}

/** An Octokit for `token` with bounded retries of 5xx and rate limits (honouring retry-after and x-ratelimit-reset). */
function makeOctokit(token: string, opts: Pick<GitHubClientOptions, 'baseUrl' | 'warn' | 'serverRetryUnitMs'>): Octokit {
  const onLimit =
    (kind: string) =>
    (retryAfter: number, options: { method: string; url: string }, _o: unknown, retryCount: number): boolean => {
      const again = retryCount < RATE_LIMIT_RETRIES && retryAfter <= MAX_RATE_LIMIT_WAIT_S
      opts.warn(
        again
          ? `GitHub's ${kind} rate limit answered ${options.method} ${options.url}; retrying in ${retryAfter} s (retry ${retryCount + 1} of ${RATE_LIMIT_RETRIES}).`
          : `GitHub's ${kind} rate limit answered ${options.method} ${options.url}; giving up (${retryCount} retries, next window in ${retryAfter} s).`,
      )
      return again
    }
  return getOctokit(
    token,
    {
      ...(opts.baseUrl !== undefined ? { baseUrl: opts.baseUrl } : {}),
      retry: { retries: SERVER_ERROR_RETRIES, ...(opts.serverRetryUnitMs !== undefined ? { retryAfterBaseValue: opts.serverRetryUnitMs } : {}) },
      throttle: { onRateLimit: onLimit('primary'), onSecondaryRateLimit: onLimit('secondary') },
    },
    retry,
    throttling,
  )
}

/** Comments on issues of `owner/repo` through Octokit, 100 per page. */
export function octokitComments(octokit: Octokit, owner: string, repo: string): CommentsApi {
  return {
    async *listComments(issueNumber: number): AsyncIterable<IssueComment[]> {
      const pages = octokit.paginate.iterator(octokit.rest.issues.listComments, { owner, repo, issue_number: issueNumber, per_page: 100 })
      for await (const page of pages) yield page.data as IssueComment[]
    },
    async createComment(issueNumber: number, body: string): Promise<IssueComment> {
      // Not retried blindly: GitHub may have stored a comment it answered 502 for; upsertStickyComment looks first.
      const res = await octokit.rest.issues.createComment({ owner, repo, issue_number: issueNumber, body, request: { retries: 0 } })
      return res.data as IssueComment
    },
    async updateComment(commentId: number, body: string): Promise<IssueComment> {
      const res = await octokit.rest.issues.updateComment({ owner, repo, comment_id: commentId, body })
      return res.data as IssueComment
    },
  }
}

/** Issues of `owner/repo` through Octokit: open ones 100 per page, create, edit, comment, close. */
function octokitIssues(octokit: Octokit, owner: string, repo: string): IssuesApi {
  return {
    async *listOpenIssues(): AsyncIterable<TrackedIssue[]> {
      const pages = octokit.paginate.iterator(octokit.rest.issues.listForRepo, { owner, repo, state: 'open', per_page: 100 })
      for await (const page of pages) yield page.data as TrackedIssue[]
    },
    async createIssue(title: string, body: string): Promise<TrackedIssue> {
      // Not retried blindly: GitHub may have stored an issue it answered 502 for; syncTrackingIssue looks first.
      const res = await octokit.rest.issues.create({ owner, repo, title, body, request: { retries: 0 } })
      return res.data as TrackedIssue
    },
    async updateIssue(issueNumber: number, title: string, body: string): Promise<TrackedIssue> {
      const res = await octokit.rest.issues.update({ owner, repo, issue_number: issueNumber, title, body })
      return res.data as TrackedIssue
    },
    async addComment(issueNumber: number, body: string): Promise<{ id: number; html_url?: string }> {
      const res = await octokit.rest.issues.createComment({ owner, repo, issue_number: issueNumber, body })
      return res.data
    },
    async closeIssue(issueNumber: number): Promise<TrackedIssue> {
      const res = await octokit.rest.issues.update({ owner, repo, issue_number: issueNumber, state: 'closed', state_reason: 'completed' })
      return res.data as TrackedIssue
    },
  }
}

// Personal and user-to-server tokens can ask who they are; installation tokens (ghs_: the workflow
// token and GitHub Apps) cannot (GET /user is 403), and post as github-actions[bot] or `<app>[bot]`.
const USER_TOKEN = /^(ghp_|github_pat_|gho_|ghu_)/

/** Whose comments are ours: the token's user for personal tokens; null (any bot) for installation tokens or when asking fails. */
export async function tokenIdentity(octokit: Octokit, token: string, warn: (msg: string) => void): Promise<CommentIdentity | null> {
  if (!USER_TOKEN.test(token)) return null
  try {
    const me = await octokit.rest.users.getAuthenticated()
    return { login: me.data.login, type: me.data.type === 'Bot' ? 'Bot' : 'User' }
  } catch {
    warn("servegate could not ask GitHub who the github-token belongs to; it will look for its comment among bots' comments.")
    return null
  }
}

/** The GitHubClient the action uses for `token` on `owner/repo`. */
export function githubClient(token: string, opts: GitHubClientOptions): GitHubClient {
  const octokit = makeOctokit(token, opts)
  return {
    comments: octokitComments(octokit, opts.owner, opts.repo),
    issues: octokitIssues(octokit, opts.owner, opts.repo),
    identity: () => tokenIdentity(octokit, token, opts.warn),
  }
}
