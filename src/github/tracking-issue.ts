/**
 * One tracking issue per baseline for scheduled watch runs: a failing verdict
 * opens it (or, while it is open, replaces its description and comments so
 * watchers are notified), a passing one comments and closes it. The issue is
 * found again by a hidden marker among the open issues servegate's own
 * identity opened, like the sticky pull-request comment.
 */
import { mayHaveLanded } from './api-errors.js'
import type { CommentIdentity } from './sticky-comment.js'

/** The fields of an issue servegate reads. */
export interface TrackedIssue {
  number: number
  title?: string
  body?: string | null
  state?: string
  user?: { login: string; type: string } | null
  html_url?: string
  /** Present on pull requests, which the issues list returns too. */
  pull_request?: object | null
}

/** The REST calls the tracking issue needs (issues: write). */
export interface IssuesApi {
  /** Every open issue (pull requests included, as GitHub lists them), page by page. */
  listOpenIssues(): AsyncIterable<TrackedIssue[]>
  createIssue(title: string, body: string): Promise<TrackedIssue>
  /** Replace the title and the description. */
  updateIssue(issueNumber: number, title: string, body: string): Promise<TrackedIssue>
  addComment(issueNumber: number, body: string): Promise<{ id: number; html_url?: string }>
  /** Close as completed (the problem went away). */
  closeIssue(issueNumber: number): Promise<TrackedIssue>
}

/** The hidden marker of the tracking issue for one baseline (the key is the comment key: the baseline's name). */
export function watchMarker(key: string): string {
  return `<!-- servegate-watch: ${key} -->`
}

/** Whether `i` may be servegate's issue for `identity` (null: any bot's). */
function byUs(i: TrackedIssue, identity: CommentIdentity | null): boolean {
  if (identity === null) return i.user?.type === 'Bot'
  return i.user?.login === identity.login && i.user.type === identity.type
}

/**
 * The open tracking issue for `key`: an issue (not a pull request) opened by servegate's identity
 * whose description carries the marker; the oldest when there are several. Reads every page.
 */
async function findTrackingIssue(api: IssuesApi, key: string, identity: CommentIdentity | null): Promise<TrackedIssue | null> {
  const marker = watchMarker(key)
  let best: TrackedIssue | null = null
  for await (const page of api.listOpenIssues()) {
    for (const i of page) {
      // Anyone can paste the marker into an issue of their own: only ours count.
      if (i.pull_request != null || !byUs(i, identity) || typeof i.body !== 'string' || !i.body.includes(marker)) continue
      if (best === null || i.number < best.number) best = i
    }
  }
  return best
}

/** What a watch verdict does to the tracking issue. */
export type IssueAction = 'open-or-update' | 'close' | 'leave'

/**
 * A verdict that fails the step (`failing`, from gateExit) opens or updates the issue; pass and
 * improvement close it; anything else (unmeasured, undecided, or a verdict fail-on leaves out) leaves it.
 * A blind verdict (undecided on rows no engine start could decide) leaves it too, failing or not:
 * the watch could not see, which says nothing about the engine or the host.
 */
export function issueActionFor(verdict: string, failing: boolean, blind = false): IssueAction {
  if (verdict === 'undecided' && blind) return 'leave'
  if (failing) return 'open-or-update'
  if (verdict === 'pass' || verdict === 'improvement') return 'close'
  return 'leave'
}

export interface IssueSync {
  key: string
  identity: CommentIdentity | null
  action: IssueAction
  title: string
  /** The description without the marker (added here, at the end, so the first line stays the reader's). */
  body: string
  /** The "still failing" comment on an open issue that is updated. */
  stillFailing: string
  /** The "passing again" comment before the issue is closed. */
  passing: string
}

export interface IssueSyncResult {
  done: 'opened' | 'updated' | 'closed' | 'left' | 'none'
  issue: TrackedIssue | null
}

/** Open, update, close or leave the tracking issue as `s.action` says. API errors are thrown to the caller. */
export async function syncTrackingIssue(api: IssuesApi, s: IssueSync): Promise<IssueSyncResult> {
  const existing = await findTrackingIssue(api, s.key, s.identity)
  const body = `${s.body.trimEnd()}\n\n${watchMarker(s.key)}\n`
  if (s.action === 'leave') return { done: existing === null ? 'none' : 'left', issue: existing }
  if (s.action === 'close') {
    if (existing === null) return { done: 'none', issue: null }
    await api.addComment(existing.number, s.passing)
    return { done: 'closed', issue: { ...existing, ...(await api.closeIssue(existing.number)) } }
  }
  if (existing !== null) {
    const updated = await api.updateIssue(existing.number, s.title, body)
    // An edited description notifies nobody; a comment reaches everyone watching the issue.
    await api.addComment(existing.number, s.stillFailing)
    return { done: 'updated', issue: { ...existing, ...updated } }
  }
  try {
    return { done: 'opened', issue: await api.createIssue(s.title, body) }
  } catch (err) {
    if (!mayHaveLanded(err)) throw err
    // GitHub may have stored the issue before the 502: look before opening a second one.
    const landed = await findTrackingIssue(api, s.key, s.identity)
    return { done: 'opened', issue: landed ?? (await api.createIssue(s.title, body)) }
  }
}
