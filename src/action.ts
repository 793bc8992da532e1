/**
 * The GitHub Action's entry: read the inputs, mask their secrets, refuse an
 * untrusted run and a mode the event may not run (github/event-policy.ts), pick the mode (src/github/mode-*.ts: gate, check, full,
 * refresh, watch, ab, aggregate), and map what ends a run without a verdict
 * (a refusal, a usage error, a cancel, a crash) to the step's outcome, the job
 * summary and the sticky comment. Every effect goes through `deps`, so tests
 * drive it with typed fakes.
 */
import { UsageError, describeError } from './errors.js'
import { INCONCLUSIVE_WARNING, usesInconclusive } from './gate/outcome.js'
import { forkRefusal, readRunContext, type RunContext } from './github/context.js'
import type { ActionDeps } from './github/deps.js'
import { modeRefusal } from './github/event-policy.js'
import { redactingDeps } from './github/redacting-deps.js'
import { baselinePathFor, commentKeyFor, modeSweep, readInputs, secretsInCommand, type ActionInputs, type Mode } from './github/inputs.js'
import { warnLaxFailOn } from './github/job.js'
import { runAb } from './github/mode-ab.js'
import { runAggregate } from './github/mode-aggregate.js'
import { runCheck } from './github/mode-check.js'
import { runFull } from './github/mode-full.js'
import { runGate } from './github/mode-gate.js'
import { runRefresh } from './github/mode-refresh.js'
import { runWatch } from './github/mode-watch.js'
import { keepSecrets, newProgress, type Progress } from './github/progress.js'
import { reportStatus } from './github/report-status.js'
import { safeSummary } from './github/run-status.js'
import { failureSummary } from './github/summary.js'

export type { ActionDeps } from './github/deps.js'

/** How each mode that reads the config runs, once the inputs are read and the run is allowed. */
const MODES: Record<Exclude<Mode, 'aggregate'>, (deps: ActionDeps, progress: Progress, inputs: ActionInputs, ctx: RunContext) => Promise<void>> = {
  gate: runGate,
  check: runCheck,
  full: runFull,
  refresh: runRefresh,
  watch: runWatch,
  ab: runAb,
}

/** A sweep stopped by its abort signal (SweepCancelled from the sweep stage, matched by shape to keep this entry light). */
function cancelledCounts(err: unknown): { done: number; planned: number } | null {
  const e = err as { done?: unknown; planned?: unknown } | null
  return typeof e?.done === 'number' && typeof e.planned === 'number' ? { done: e.done, planned: e.planned } : null
}

/** Run the action once; never throws (a crash fails the step with `servegate crashed: …`). */
export async function run(rawDeps: ActionDeps): Promise<void> {
  // Every exit (log, summary, outputs, files, comments, issues) through the one redaction.
  const deps = redactingDeps(rawDeps)
  const progress = newProgress()
  try {
    await runAction(deps, progress)
  } catch (err) {
    if (cancelledCounts(err) !== null || deps.signal?.aborted === true) await reportCancelled(deps, progress, err)
    else await reportCrash(deps, progress, err)
  }
}

async function runAction(deps: ActionDeps, progress: Progress): Promise<void> {
  const { core } = deps
  const inputs = readInputs((name) => core.getInput(name))
  progress.inputs = inputs
  const commands = [inputs.serveCommand, inputs.serve, inputs.aServe, inputs.bServe, inputs.referenceServe]
  keepSecrets(core, progress, [
    ...new Set([...(inputs.githubToken === undefined ? [] : [inputs.githubToken]), ...commands.flatMap((c) => secretsInCommand(c ?? ''))]),
  ])
  if (usesInconclusive(core.getInput('fail-on'))) core.warning(`servegate: ${INCONCLUSIVE_WARNING}.`, { title: 'servegate: fail-on names a retired verdict' })

  const ctx = readRunContext(deps.event.name, deps.event.payload, deps.env)
  progress.ctx = ctx
  // Until the config is read, the comment is named after the mode's sweep (what it is named in the common case).
  const key = commentKeyFor(inputs, baselinePathFor(inputs, inputs.sweep ?? modeSweep(inputs.mode)))
  progress.key = key
  const refusal = forkRefusal(ctx, inputs.allowFork)
  if (refusal !== null) {
    await reportStatus(deps, progress, 'refused', refusal)
    core.setFailed(refusal)
    return
  }
  // Before any term is read or anything started: an event that judges a change runs only the judging modes.
  const wrongMode = modeRefusal(inputs.mode, ctx.eventName, ctx.judging)
  if (wrongMode !== null) {
    await reportStatus(deps, progress, 'refused', wrongMode)
    core.setFailed(wrongMode)
    return
  }
  if (ctx.untrusted !== null && ctx.runner.selfHosted) {
    core.warning(`allow-fork is true: benchmarking ${ctx.untrusted.subject} (${ctx.untrusted.reason}) on a self-hosted runner.`)
  }
  if (inputs.mode !== 'aggregate') return MODES[inputs.mode](deps, progress, inputs, ctx)
  // A matrix's final job: no sweep, no config; the jobs' verdict records as one verdict.
  warnLaxFailOn(core, inputs.failOn)
  return runAggregate(deps, { inputs, ctx, key, onVerdictSet: () => void (progress.verdictSet = true) })
}

async function reportCancelled(deps: ActionDeps, progress: Progress, err: unknown): Promise<void> {
  const counts = cancelledCounts(err)
  const partial = counts ?? (progress.planned === null ? undefined : { done: 0, planned: progress.planned })
  const what = partial === undefined ? 'cancelled' : `cancelled — partial (${partial.done} of ${partial.planned} runs)`
  const saved = progress.resultPath === null ? '' : ` The runs finished before the cancel are in ${progress.resultPath}; the run in progress was dropped.`
  await reportStatus(deps, progress, 'cancelled', `The job was cancelled while servegate was running: ${what}.${saved}`, partial)
  deps.core.setFailed(`servegate ${what}: no verdict`)
}

async function reportCrash(deps: ActionDeps, progress: Progress, err: unknown): Promise<void> {
  const { core } = deps
  if (err instanceof UsageError) {
    const detail = `${err.message}${err.hint ? `\nhint: ${err.hint}` : ''}`
    if (progress.verdictSet) await safeSummary(deps, failureSummary('servegate could not finish', detail))
    else await reportStatus(deps, progress, 'error', `servegate could not run: ${detail}`)
    core.setFailed(`servegate could not run: ${err.message}${err.hint ? ` (${err.hint})` : ''}`)
    return
  }
  const stack = err instanceof Error ? (err.stack ?? err.message) : String(err)
  core.error(stack)
  await safeSummary(deps, failureSummary('servegate crashed (a bug, please report it)', stack))
  if (!progress.verdictSet) await reportStatus(deps, progress, 'error', `servegate crashed (a bug): ${describeError(err)}`, undefined, false)
  core.setFailed(`servegate crashed: ${describeError(err)}`)
}
