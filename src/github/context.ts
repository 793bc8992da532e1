/**
 * What the action needs to know about the workflow run: the event, the pull
 * request (if any), whether it comes from a fork, and whether the runner is
 * self-hosted. Pure: it reads the event payload and environment it is given.
 */

/** The parts of a GitHub event payload servegate reads (everything optional: payloads vary). */
export interface EventPayload {
  pull_request?: {
    number?: number
    head?: { repo?: { full_name?: string; fork?: boolean } | null; sha?: string; ref?: string }
    base?: { repo?: { full_name?: string; fork?: boolean } | null; ref?: string }
  }
  repository?: { full_name?: string }
}

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
}

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
    how: v === undefined || v === '' ? 'RUNNER_ENVIRONMENT is not set, so servegate assumes a self-hosted runner' : `RUNNER_ENVIRONMENT=${v} (not github-hosted), so servegate assumes a self-hosted runner`,
  }
}

/** Build the run context from the event name, its payload and the environment. */
export function readRunContext(eventName: string, payload: EventPayload, env: Record<string, string | undefined>): RunContext {
  const repository = env['GITHUB_REPOSITORY'] || payload.repository?.full_name || ''
  const [owner = '', repo = ''] = repository.split('/')
  const pr = payload.pull_request
  let pullRequest: PullRequestInfo | null = null
  if (pr !== undefined && typeof pr.number === 'number') {
    const fork = detectFork(pr, repository)
    pullRequest = { number: pr.number, fromFork: fork.fromFork, forkReason: fork.reason }
  }
  const server = env['GITHUB_SERVER_URL'] || 'https://github.com'
  const runId = env['GITHUB_RUN_ID']
  const runUrl = runId && repository ? `${server}/${repository}/actions/runs/${runId}` : null
  return { eventName, repository, owner, repo, pullRequest, runner: detectRunner(env), runUrl }
}

/** A refusal message when a fork PR would run on a self-hosted runner, or null when it may run. */
export function forkRefusal(ctx: RunContext, allowFork: boolean): string | null {
  const pr = ctx.pullRequest
  if (pr === null || !pr.fromFork || !ctx.runner.selfHosted || allowFork) return null
  return (
    `servegate refuses to benchmark pull request #${pr.number}: it comes from a fork (${pr.forkReason}) ` +
    `and this job runs on a self-hosted runner (${ctx.runner.how}). Benchmarking would execute untrusted ` +
    `code from the fork on your GPU host, which keeps its state between jobs. Review the change, then run ` +
    `the benchmark from a branch in this repository, or set the input allow-fork: true if this runner is ` +
    `ephemeral and isolated.`
  )
}
