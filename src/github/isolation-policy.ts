/**
 * The Action's rule for the commands a pull request controls (the serve
 * command, its stop command, the reference command, A/B sides): on a run that
 * judges a change, they start only in a PID namespace of their own
 * (serve/isolation.ts), where no process holding a token is visible; a runner
 * that cannot make one is refused before anything starts, unless the base
 * branch's config says `server.isolation: none`, which every verdict then names.
 * Runs that do not judge a change (a schedule, a push to the default branch)
 * start plainly on such a runner, with the serve stage's notice.
 */
import type { ResolvedConfig } from '../config/resolve.js'
import { UsageError } from '../errors.js'
import type { EventPayload, RunContext } from './context.js'
import type { ActionInputs } from './inputs.js'

/** What the host's probe (serve/isolation.ts) found: whether it can isolate, and why not. */
export type IsolationCheck = { ok: true } | { ok: false; reason: string }

/** What a runner needs for isolation (docs/action.md "The engine's isolation"). */
export const ISOLATION_REMEDY =
  "allow unprivileged user namespaces (sysctl kernel.unprivileged_userns_clone=1; on Ubuntu 23.10 and later also kernel.apparmor_restrict_unprivileged_userns=0) with util-linux unshare installed, or set server.isolation: none in the base branch's config to start them without (every verdict then says so)"

/** Events whose code is always someone's proposed change. */
const CHANGE_EVENTS = ['pull_request', 'pull_request_target', 'merge_group', 'workflow_run', 'issue_comment']

/**
 * Whether this run judges a change: a pull request, a merge queue, a run another workflow started,
 * or a push or run by hand on a branch other than the default one (an unknown branch counts as
 * one). Only a schedule, and a push or run by hand on the default branch, run code already merged.
 */
export function judgesChange(
  ctx: Pick<RunContext, 'eventName' | 'pullRequest'>,
  payload: EventPayload,
  env: Readonly<Record<string, string | undefined>>,
): boolean {
  if (ctx.pullRequest !== null || CHANGE_EVENTS.includes(ctx.eventName)) return true
  if (ctx.eventName === 'schedule') return false
  if (ctx.eventName !== 'push' && ctx.eventName !== 'workflow_dispatch') return true
  const ref = env['GITHUB_REF_NAME'] || env['GITHUB_REF']?.replace(/^refs\/heads\//, '') || null
  const defaultBranch = payload.repository?.default_branch ?? null
  return ref === null || defaultBranch === null || ref !== defaultBranch
}

/** The parts of a resolved config the rule reads. */
export type IsolationTerms = Pick<ResolvedConfig, 'serve' | 'isolation'> & { gate: Pick<ResolvedConfig['gate'], 'referenceCommand'> }

/** Whether the job starts a command the config or the inputs give (else there is nothing to isolate). */
export function startsCommands(cfg: IsolationTerms, inputs: Pick<ActionInputs, 'aServe' | 'bServe' | 'referenceServe'>): boolean {
  return cfg.serve != null || cfg.gate.referenceCommand !== undefined || [inputs.aServe, inputs.bServe, inputs.referenceServe].some((c) => c !== undefined)
}

/** The note every verdict carries when the base branch's config turned isolation off. */
export const ISOLATION_OFF_NOTE =
  "server.isolation is none (the base branch's config): the commands this run started shared the runner's process list, where they could read the tokens of the job's other processes."

/**
 * Apply the rule before anything starts: a note for the verdict (isolation off), nothing (isolated,
 * or no command to start, or a run that judges no change), or a UsageError refusing the run.
 */
export async function isolationPolicy(a: {
  cfg: IsolationTerms
  inputs: Pick<ActionInputs, 'aServe' | 'bServe' | 'referenceServe'>
  ctx: Pick<RunContext, 'eventName' | 'pullRequest'>
  payload: EventPayload
  env: Readonly<Record<string, string | undefined>>
  probe: () => Promise<IsolationCheck>
}): Promise<string | null> {
  if (!startsCommands(a.cfg, a.inputs)) return null
  if (a.cfg.isolation === 'none') return ISOLATION_OFF_NOTE
  if (!judgesChange(a.ctx, a.payload, a.env)) return null
  const probe = await a.probe()
  if (probe.ok) return null
  throw new UsageError(
    `servegate refuses to start the commands of a ${a.ctx.eventName} run without a PID namespace of their own: this runner cannot make one (${probe.reason}), and there they could read the job's tokens from /proc`,
    `On the runner, ${ISOLATION_REMEDY}.`,
  )
}
