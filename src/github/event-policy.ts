/**
 * Which events judge a change, and which modes may run on them. A pull
 * request, the merge queue's branch, a push to (or a run by hand on) a branch
 * other than the default one, a workflow_run for a pull request: each carries
 * code and a workflow file its author chose. On such an event only the modes
 * that take their terms from the base branch run (gate, check, ab; aggregate
 * reads only the records they wrote): `full`, `refresh` or `watch` there would
 * measure the change by its own checkout's terms and could still leave a green
 * check on its commit. Pure: it reads the event it is given.
 */
import type { EventPayload } from './event-payload.js'
import type { Mode } from './inputs.js'

/** The modes that may run on an event that judges a change. */
export const JUDGING_MODES: readonly Mode[] = ['gate', 'check', 'ab', 'aggregate']

/** Events that always judge a pull request's code. */
const PULL_REQUEST_EVENTS = ['pull_request', 'pull_request_target']

/** The events of a triggering run (workflow_run) that judge a change. */
const CHANGE_EVENTS = [...PULL_REQUEST_EVENTS, 'merge_group']

/** `branch x`, `tag v1`, or the ref as given. */
function describeRef(ref: string): string {
  if (ref.startsWith('refs/heads/')) return `branch ${ref.slice('refs/heads/'.length)}`
  if (ref.startsWith('refs/tags/')) return `tag ${ref.slice('refs/tags/'.length)}`
  return ref === '' ? 'a ref the event does not name' : ref
}

/** What a workflow_run judges: null only for a run of this repository's default branch, not started by a pull request or the merge queue. */
function workflowRunChange(payload: EventPayload, repository: string, defaultBranch: string | null): string | null {
  const wr = payload.workflow_run
  if (wr === undefined) return 'a triggering run the event does not describe'
  const first = wr.pull_requests?.[0]
  if (typeof first?.number === 'number') return `a run for pull request #${first.number}`
  const branch = wr.head_branch ?? 'an unnamed branch'
  if (wr.event !== undefined && CHANGE_EVENTS.includes(wr.event)) return `a ${wr.event} run of ${branch}`
  const ours = wr.repository?.full_name ?? repository
  const head = wr.head_repository?.full_name
  if (head === undefined || head !== ours) return `a run of ${branch} from ${head ?? 'an unnamed repository'}`
  if (defaultBranch === null) return `a run of ${branch}, and the event names no default branch`
  return wr.head_branch === defaultBranch ? null : `a run of branch ${branch}, not the default branch ${defaultBranch}`
}

/**
 * The change an event judges, in words for a message (`pull request #7`, `branch fix, not the
 * default branch main`), or null when it judges none: a schedule, or a push or dispatch on the
 * default branch. An event that does not say enough to tell counts as judging a change.
 */
export function judgedChange(eventName: string, payload: EventPayload, env: Readonly<Record<string, string | undefined>>): string | null {
  const defaultBranch = payload.repository?.default_branch || null
  const pr = payload.pull_request
  if (pr !== undefined && typeof pr.number === 'number') return `pull request #${pr.number}`
  if (PULL_REQUEST_EVENTS.includes(eventName)) return 'a pull request'
  if (eventName === 'merge_group') return `the merge queue's ${describeRef(payload.merge_group?.head_ref ?? '')}`
  if (eventName === 'issue_comment' && payload.issue?.pull_request != null) return `pull request #${payload.issue.number ?? '?'}`
  if (eventName === 'workflow_run') return workflowRunChange(payload, env['GITHUB_REPOSITORY'] || payload.repository?.full_name || '', defaultBranch)
  // GitHub runs scheduled workflows on the default branch only.
  if (eventName === 'schedule') return null
  const ref = payload.ref || env['GITHUB_REF'] || ''
  if (defaultBranch === null) return `${describeRef(ref)}, and the event names no default branch`
  return ref === `refs/heads/${defaultBranch}` ? null : `${describeRef(ref)}, not the default branch ${defaultBranch}`
}

/** The one line that refuses `mode` on an event that judges a change (`judging`), or null when it may run. */
export function modeRefusal(mode: Mode, eventName: string, judging: string | null): string | null {
  if (judging === null || JUDGING_MODES.includes(mode)) return null
  return (
    `servegate refuses mode ${mode} on this ${eventName} event (${judging}): an event that judges a change runs only ` +
    `${JUDGING_MODES.join(', ')}, which take their terms from the base branch; run mode ${mode} from the default branch ` +
    `(a push to it, a schedule, or a dispatch on it) and gate the change with mode gate.`
  )
}
