/**
 * What the action needs to know about the workflow run: the event, the pull
 * request (if any), whether it comes from a fork, and whether the runner is
 * self-hosted. Pure: it reads the event payload and environment it is given.
 */

import type { EventPayload } from './event-payload.js'
import { judgedChange } from './event-policy.js'
import type { RunStamp } from './status-comment.js'

export type { EventPayload } from './event-payload.js'

export interface PullRequestInfo {
  number: number
  /** True when the head branch lives outside the base repository. */
  fromFork: boolean
  /** Why it counts as a fork (empty when it does not). */
  forkReason: string
}

export interface RunnerInfo {
  selfHosted: boolean
  /** How we know: from RUNNER_ENVIRONMENT, or assumed because it is missing. */
  how: string
}

export interface RunContext {
  eventName: string
  /** `owner/name` of the repository the workflow runs in. */
  repository: string
  owner: string
  repo: string
  pullRequest: PullRequestInfo | null
  runner: RunnerInfo
  /** Link to this workflow run's page, when the environment names one. */
  runUrl: string | null
  /**
   * Why the code this job would run cannot be trusted (a fork, or a comment
   * by someone without write access), with what it is; null when it can.
   */
  untrusted: { subject: string; reason: string } | null
  /** The commit being measured: the PR's head, else the triggering run's head, else GITHUB_SHA. */
  headSha: string | null
  /**
   * The branch whose terms the gate uses (never the checkout being judged): a pull request's base,
   * a merge queue's base, the default branch on workflow_dispatch and schedule; null on other events.
   */
  base: BaseRef | null
  /** GITHUB_RUN_ATTEMPT, when set. */
  runAttempt: string | null
  /**
   * The change this event judges, in words (`pull request #7`, `branch fix, not the default branch
   * main`), or null when it judges none (event-policy.ts): only the judging modes run on such an event.
   */
  judging: string | null
}

/** The base of a pull request (or merge queue, or the default branch): its commit when the event names it, and its branch. */
export interface BaseRef {
  sha: string | null
  ref: string
}

/** The comment authors an issue_comment trigger trusts: people with write access to the repository. */
const TRUSTED_ASSOCIATIONS = ['OWNER', 'MEMBER', 'COLLABORATOR'] as const

/** Fork detection on a pull_request(-like) payload. */
export function detectFork(pr: NonNullable<EventPayload['pull_request']>, repository: string): { fromFork: boolean; reason: string } {
  const head = pr.head?.repo
  const baseName = pr.base?.repo?.full_name ?? repository
  // A deleted fork leaves head.repo null: the code still comes from outside.
  if (head === null || head === undefined) return { fromFork: true, reason: 'the head repository is missing (deleted fork?)' }
  if (head.full_name === undefined) return { fromFork: true, reason: 'the head repository has no name in the event' }
  if (head.full_name !== baseName) return { fromFork: true, reason: `the head repository ${head.full_name} is not ${baseName}` }
  // When the base repository is itself a fork, every head repo says fork: true; only trust the flag otherwise.
  if (head.fork === true && pr.base?.repo?.fork !== true) return { fromFork: true, reason: `the head repository ${head.full_name} is marked as a fork` }
  return { fromFork: false, reason: '' }
}

/** Self-hosted unless GitHub says the runner is its own ('github-hosted'); missing counts as self-hosted, for safety. */
export function detectRunner(env: Record<string, string | undefined>): RunnerInfo {
  const v = env['RUNNER_ENVIRONMENT']
  if (v === 'github-hosted') return { selfHosted: false, how: 'RUNNER_ENVIRONMENT=github-hosted' }
  if (v === 'self-hosted') return { selfHosted: true, how: 'RUNNER_ENVIRONMENT=self-hosted' }
  return {
    selfHosted: true,
    how:
      v === undefined || v === ''
        ? 'RUNNER_ENVIRONMENT is not set, so servegate assumes a self-hosted runner'
        : `RUNNER_ENVIRONMENT=${v} (not github-hosted), so servegate assumes a self-hosted runner`,
  }
}

/** Build the run context from the event name, its payload and the environment. */
export function readRunContext(eventName: string, payload: EventPayload, env: Record<string, string | undefined>): RunContext {
  const repository = env['GITHUB_REPOSITORY'] || payload.repository?.full_name || ''
  const [owner = '', repo = ''] = repository.split('/')
  const source = eventSource(eventName, payload, repository, env)
  const server = env['GITHUB_SERVER_URL'] || 'https://github.com'
  const runId = env['GITHUB_RUN_ID']
  const runUrl = runId && repository ? `${server}/${repository}/actions/runs/${runId}` : null
  const judging = judgedChange(eventName, payload, env)
  return { eventName, repository, owner, repo, runner: detectRunner(env), runUrl, runAttempt: env['GITHUB_RUN_ATTEMPT'] || null, judging, ...source }
}

type EventSource = Pick<RunContext, 'pullRequest' | 'untrusted' | 'headSha' | 'base'>

/** Where the code under test comes from, for each trigger servegate understands. */
function eventSource(eventName: string, payload: EventPayload, repository: string, env: Record<string, string | undefined>): EventSource {
  const githubSha = env['GITHUB_SHA'] || null
  const pr = payload.pull_request
  if (pr !== undefined && typeof pr.number === 'number') {
    const fork = detectFork(pr, repository)
    const untrusted = fork.fromFork ? { subject: `pull request #${pr.number}`, reason: `it comes from a fork (${fork.reason})` } : null
    const base = pr.base?.ref ? { sha: pr.base.sha ?? null, ref: pr.base.ref } : null
    return { pullRequest: { number: pr.number, fromFork: fork.fromFork, forkReason: fork.reason }, untrusted, headSha: pr.head?.sha ?? githubSha, base }
  }
  const wr = payload.workflow_run
  if (eventName === 'workflow_run' && wr !== undefined) return workflowRunSource(wr, repository, githubSha)
  if (eventName === 'issue_comment' && payload.issue?.pull_request != null && typeof payload.issue.number === 'number') {
    return issueCommentSource(payload, payload.issue.number)
  }
  if (eventName === 'merge_group') {
    // The queue's branch holds the PR's changes on top of the base: its config and baseline are the PR's.
    const mg = payload.merge_group
    const ref = mg?.base_ref?.replace(/^refs\/heads\//, '')
    return { pullRequest: null, untrusted: null, headSha: mg?.head_sha ?? githubSha, base: ref ? { sha: mg?.base_sha ?? null, ref } : null }
  }
  if ((BASE_IS_DEFAULT_BRANCH as readonly string[]).includes(eventName)) {
    // A run by hand or a push can be on any branch, with that branch's config: judge it by the default branch's.
    const ref = payload.repository?.default_branch
    return { pullRequest: null, untrusted: null, headSha: githubSha, base: ref ? { sha: null, ref } : null }
  }
  return { pullRequest: null, untrusted: null, headSha: githubSha, base: null }
}

/** Events whose gate terms come from the repository's default branch. */
const BASE_IS_DEFAULT_BRANCH = ['workflow_dispatch', 'schedule', 'push'] as const

/**
 * Events whose checkout is not the base branch's, where a payload that names no base is refused
 * (base-terms.ts) rather than judged by the checkout's own terms. (GitHub's pull_request payloads
 * always name their base.)
 */
export const BASE_EVENTS = ['merge_group', ...BASE_IS_DEFAULT_BRANCH] as const

/** workflow_run runs with this repository's secrets on code from the triggering run's head repository. */
function workflowRunSource(wr: NonNullable<EventPayload['workflow_run']>, repository: string, githubSha: string | null): EventSource {
  const ours = wr.repository?.full_name ?? repository
  const head = wr.head_repository
  let reason: string | null = null
  if (head === null || head === undefined) reason = 'the triggering run names no head repository (deleted fork?)'
  else if (head.full_name === undefined) reason = "the triggering run's head repository has no name in the event"
  else if (head.full_name !== ours) reason = `the triggering run's head repository ${head.full_name} is not ${ours}`
  // GitHub lists the pull requests of a workflow_run only when the head is in this repository.
  const first = wr.pull_requests?.[0]
  const number = typeof first?.number === 'number' ? first.number : null
  const subject = number === null ? `the ${wr.event ?? 'triggering'} run of ${wr.head_branch ?? 'an unknown branch'}` : `pull request #${number}`
  return {
    pullRequest: number === null ? null : { number, fromFork: reason !== null, forkReason: reason ?? '' },
    untrusted: reason === null ? null : { subject, reason: `it comes from a fork (${reason})` },
    headSha: wr.head_sha ?? first?.head?.sha ?? githubSha,
    base: first?.base?.ref ? { sha: first.base.sha ?? null, ref: first.base.ref } : null,
  }
}

/**
 * issue_comment on a pull request: the payload names neither the PR's head
 * repository nor its base, and servegate does not call the API for them. The
 * code is trusted only when the commenter has write access (OWNER, MEMBER,
 * COLLABORATOR): anyone else could start a GPU run on a fork's code. The base
 * is the repository's default branch.
 */
function issueCommentSource(payload: EventPayload, number: number): EventSource {
  const association = payload.comment?.author_association ?? 'NONE'
  const trusted = (TRUSTED_ASSOCIATIONS as readonly string[]).includes(association)
  const who = payload.comment?.user?.login ?? 'an unknown user'
  const reason = trusted
    ? ''
    : `the comment by ${who} (author_association ${association}) started it, and an issue_comment event does not say where the pull request's code comes from; only OWNER, MEMBER or COLLABORATOR comments are trusted`
  const defaultBranch = payload.repository?.default_branch
  return {
    pullRequest: { number, fromFork: !trusted, forkReason: reason },
    untrusted: trusted ? null : { subject: `pull request #${number}`, reason },
    // GITHUB_SHA is the default branch's head here, not the pull request's.
    headSha: null,
    base: defaultBranch ? { sha: null, ref: defaultBranch } : null,
  }
}

/** A refusal message when untrusted code would run on a self-hosted runner, or null when it may run. */
export function forkRefusal(ctx: RunContext, allowFork: boolean): string | null {
  const u = ctx.untrusted
  if (u === null || !ctx.runner.selfHosted || allowFork) return null
  return (
    `servegate refuses to benchmark ${u.subject}: ${u.reason} ` +
    `and this job runs on a self-hosted runner (${ctx.runner.how}). Benchmarking would execute untrusted ` +
    `code from the fork on your GPU host, which keeps its state between jobs. Review the change, then run ` +
    `the benchmark from a branch in this repository, or set the input allow-fork: true if this runner is ` +
    `ephemeral and isolated.`
  )
}

/** What servegate's comment and status bodies say about this run (see status-comment.ts); `at` is an ISO time. */
export function runStamp(ctx: Pick<RunContext, 'headSha' | 'runAttempt' | 'runUrl'>, at: string): RunStamp {
  return { headSha: ctx.headSha, at, runAttempt: ctx.runAttempt, runUrl: ctx.runUrl }
}
