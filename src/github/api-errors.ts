/**
 * Turn a failed GitHub API call into one line that says what happened and
 * what it means for the run (the verdict is never lost: it is in the summary).
 */
import { describeError } from '../errors.js'

/** The HTTP status of a failed API call, when it has one. */
export function apiStatus(err: unknown): number | null {
  const s = (err as { status?: unknown } | null)?.status
  return typeof s === 'number' ? s : null
}

/**
 * A failure after which a POST may or may not have created what it asked for (a comment, an
 * issue): a 5xx or no answer at all. Look for it before posting again, or there will be two.
 */
export function mayHaveLanded(err: unknown): boolean {
  const status = apiStatus(err)
  return status === null || status >= 500
}

/**
 * One line naming the failure and its likely cause (fork token, rate limit, outage). `target`: what
 * was being written, the pull-request comment or (watch mode) the tracking issue.
 */
export function describeApiError(err: unknown, target: 'pull-request' | 'issue' = 'pull-request'): string {
  const status = apiStatus(err)
  const detail = describeError(err)
  // GitHub answers its secondary rate limit with 403 too; the message tells them apart.
  if (status === 429 || (status === 403 && /rate limit/i.test(detail))) return `HTTP ${status} (${detail}): GitHub's API rate limit was hit`
  if ((status === 403 || status === 401) && target === 'issue') {
    return `HTTP ${status} (${detail}): the token may not write issues; the job needs "permissions: issues: write"`
  }
  if (status === 403 || status === 401) {
    return `HTTP ${status} (${detail}): the token may not write to this pull request; workflows triggered from forks get a read-only token, and the job needs "permissions: pull-requests: write"`
  }
  if (status === 404)
    return `HTTP 404 (${detail}): ${target === 'issue' ? 'the repository or the issue was not found (or issues are disabled)' : 'the pull request or comment was not found'}`
  if (status !== null && status >= 500) return `HTTP ${status} (${detail}): GitHub's API is having trouble`
  return status === null ? detail : `HTTP ${status} (${detail})`
}
