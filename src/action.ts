/**
 * The GitHub Action: run the sweep the mode asks for, compare it with the
 * stored baseline, report (job summary, sticky PR comment, outputs), refresh
 * and commit the baseline, and fail the step when `fail-on` says so. Every
 * effect goes through `deps`, so tests drive it with typed fakes.
 */
import { resolve } from 'node:path'
import type { ResolvedConfig } from './config/resolve.js'
import type { GateOptions, Verdict } from './gate/types.js'
import { escalationReason, nextStep, sweepGpuMinutes, stepOptions, type LadderStep } from './gate/ladder.js'
import { hostChangedSince } from './gate/host-change.js'
import type { ResultFile } from './types.js'
import { deriveSeed } from './util/rng.js'
import { UsageError, describeError } from './errors.js'
import { ServerExitedDuringSweep } from './serve/errors.js'
import { INCONCLUSIVE_WARNING, failOnWarning, usesInconclusive } from './gate/outcome.js'
import { applyBracket } from './gate/bracket.js'
import { plannedRunCount } from './config/placement.js'
import { noValidRun } from './sweep/no-valid-run.js'
import { judgeByConfig, readGateTerms } from './github/base-terms.js'
import { forkRefusal, readRunContext, runStamp, type RunContext } from './github/context.js'
import type { ActionDeps } from './github/deps.js'
import { redactingDeps } from './github/redacting-deps.js'
import { hostNotice } from './github/host-notice.js'
import { baselinePathFor, commentKeyFor, modeSweep, readInputs, secretsInCommand, type ActionInputs } from './github/inputs.js'
import { referenceFor, runAbDecision } from './github/mode-ab.js'
import { publishWatch } from './github/mode-watch.js'
import { charts, publishVerdict } from './github/publish-verdict.js'
import { runAggregate } from './github/mode-aggregate.js'
import { writeRunRecord } from './github/record.js'
import { refreshBaseline } from './github/refresh.js'
import { checkRefreshCommit } from './github/refresh-commit.js'
import { STATE, publishStatusComment, safeSummary, type StatusTarget } from './github/run-status.js'
import { statusCommentBody, type RunState } from './github/status-comment.js'
import { failureSummary, type Outcome, type ReportInput } from './github/summary.js'

export type { ActionDeps } from './github/deps.js'

/** What the run has established so far, for the error, refusal and cancel reports. */
interface Progress {
  inputs: ActionInputs | null
  ctx: RunContext | null
  key: string | null
  /** Set once the `verdict` output holds the gate's answer: a later crash must not rewrite it. */
  verdictSet: boolean
  resultPath: string | null
  planned: number | null
  /** Values redacted from status details (the token, the API key, serve-command credentials). */
  secrets: string[]
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
  const progress: Progress = { inputs: null, ctx: null, key: null, verdictSet: false, resultPath: null, planned: null, secrets: [] }
  try {
    await runAction(deps, progress)
  } catch (err) {
    if (cancelledCounts(err) !== null || deps.signal?.aborted === true) await reportCancelled(deps, progress, err)
    else await reportCrash(deps, progress, err)
  }
}

async function runAction(deps: ActionDeps, progress: Progress): Promise<void> {
  const { core, stages } = deps
  let inputs = readInputs((name) => core.getInput(name))
  progress.inputs = inputs
  const commands = [inputs.serveCommand, inputs.serve, inputs.aServe, inputs.bServe, inputs.referenceServe]
  const secrets = [...new Set([...(inputs.githubToken === undefined ? [] : [inputs.githubToken]), ...commands.flatMap((c) => secretsInCommand(c ?? ''))])]
  for (const secret of secrets) core.setSecret(secret)
  progress.secrets.push(...secrets)
  if (usesInconclusive(core.getInput('fail-on'))) core.warning(`servegate: ${INCONCLUSIVE_WARNING}.`, { title: 'servegate: fail-on names a retired verdict' })

  const ctx = readRunContext(deps.event.name, deps.event.payload, deps.env)
  progress.ctx = ctx
  // Until the config is read, the comment is named after the mode's sweep (what it is named in the common case).
  progress.key = commentKeyFor(inputs, baselinePathFor(inputs, inputs.sweep ?? modeSweep(inputs.mode)))
  const refusal = forkRefusal(ctx, inputs.allowFork)
  if (refusal !== null) {
    await reportStatus(deps, progress, 'refused', refusal)
    core.setFailed(refusal)
    return
  }
  if (ctx.untrusted !== null && ctx.runner.selfHosted) {
    core.warning(`allow-fork is true: benchmarking ${ctx.untrusted.subject} (${ctx.untrusted.reason}) on a self-hosted runner.`)
  }
  const warnFailOn = (): void => {
    const note = failOnWarning(inputs.failOn)
    if (note !== null) core.warning(`servegate: ${note}.`, { title: 'servegate: fail-on lets a broken run pass' })
  }
  // A matrix's final job: no sweep, no config; the jobs' verdict records as one verdict.
  if (inputs.mode === 'aggregate') warnFailOn()
  if (inputs.mode === 'aggregate') return runAggregate(deps, { inputs, ctx, key: progress.key, onVerdictSet: () => void (progress.verdictSet = true) })

  if (inputs.mode === 'watch' && ctx.pullRequest !== null) {
    // Its terms come from the checkout: on a pull request that would let the PR judge itself.
    throw new UsageError(
      `mode watch measures the default branch against its own baseline, but this ${ctx.eventName} run is for pull request #${ctx.pullRequest.number}.`,
      'Trigger the watch job on schedule: or workflow_dispatch:, and gate pull requests with mode: gate.',
    )
  }

  const wd = resolve(deps.cwd, inputs.workingDirectory)
  const notes: string[] = []
  const terms = await readGateTerms(deps, inputs, ctx, wd, notes)
  // The inputs come from a workflow file the pull request can edit: the config's judgement (the base branch's on a gate) wins.
  const given = { failOn: core.getInput('fail-on').trim() !== '', confirm: core.getInput('confirm').trim() !== '' }
  const judged = judgeByConfig(inputs, given, terms.judgement)
  for (const w of judged.warnings) core.warning(`servegate: ${w}`, { title: "servegate: an input would loosen the base branch's judgement" })
  inputs = { ...inputs, failOn: judged.failOn, confirm: judged.confirm }
  progress.inputs = inputs
  warnFailOn()
  // A gate whose sweep brackets the baseline's crossing runs only the points around it (gate/bracket.ts).
  // Not on an A/B gate: it re-measures the reference beside the candidate and has no crossing to bracket.
  // A gate that measures the reference for every PR (gate.reference_mode: always) has no crossing to bracket.
  const alwaysAB = referenceFor(inputs, terms.cfg) !== null && (terms.cfg.gate.referenceMode === 'always' || terms.baseline === null)
  const bracketed = terms.cfg.placement === 'bracket' && terms.baseline !== null && inputs.mode === 'gate' && !alwaysAB ? applyBracket(terms.cfg, terms.baseline, `baseline ${terms.baselineRel}`) : null
  const cfg = bracketed?.cfg ?? terms.cfg
  for (const note of bracketed?.notes ?? []) core.info(`servegate: bracketing: ${note}`)
  if (cfg.apiKey !== null) {
    core.setSecret(cfg.apiKey)
    progress.secrets.push(cfg.apiKey)
  }
  // Values of variables the serve command passes to secret flags reach the server's output expanded;
  // credentials in the base URL and the reference command are known from the config too.
  for (const secret of [...(cfg.serve?.secrets ?? []), ...(cfg.secrets ?? [])]) {
    if (progress.secrets.includes(secret)) continue
    core.setSecret(secret)
    progress.secrets.push(secret)
  }
  const { baselineRel, baseline } = terms
  progress.key = commentKeyFor(inputs, baselineRel)

  // The engine change itself (mode ab), or a gate whose base branch names a reference engine: A/B on this
  // runner for every PR (gate.reference_mode: always, or no baseline yet), else as the ladder's last step.
  const reference = referenceFor(inputs, cfg)
  if (reference !== null) {
    for (const secret of secretsInCommand(reference.command)) {
      if (progress.secrets.includes(secret)) continue
      core.setSecret(secret)
      progress.secrets.push(secret)
    }
  }
  if (inputs.mode === 'ab' || (reference !== null && alwaysAB)) {
    await runAbDecision(deps, { inputs, ctx, wd, terms, notes, progress, status: target(progress), reference, ladder: null })
    return
  }
  // A gate that re-measures its reference needs no baseline; neither does the check before it.
  const checksReference = inputs.mode === 'check' && (inputs.referenceServe !== undefined || cfg.gate.referenceCommand !== undefined)
  if (baseline === null && (inputs.mode === 'gate' || inputs.mode === 'watch' || (inputs.mode === 'check' && ctx.base !== null && !checksReference))) {
    throw new UsageError(
      `there is no baseline at ${baselineRel}${terms.baseLabel === null ? '' : ` on ${terms.baseLabel}`} to gate against.`,
      'Record one first: run the action with mode: refresh on your default branch (see docs/action.md), or point the baseline input at an existing file.',
    )
  }

  if (inputs.mode === 'check') {
    const where = terms.baseLabel === null ? 'this checkout' : terms.baseLabel
    core.setOutput('verdict', 'checked')
    await safeSummary(deps, [`## ☑️ servegate: checks passed — the gate may run`, '', `Terms and baseline ${baselineRel} read from ${where}.`, ...notes.map((n) => `\n> ${n}`)].join('\n') + '\n')
    core.info(`servegate check: ${ctx.untrusted === null ? 'the code is trusted' : 'untrusted code allowed by allow-fork'}; terms from ${where}`)
    return
  }

  if (inputs.mode === 'refresh' && inputs.refreshCommit) {
    const ref = deps.env['GITHUB_REF']
    core.info(`servegate: ${await checkRefreshCommit(deps.git, { cwd: wd, push: inputs.refreshPush, ...(ref ? { ref } : {}) })}`)
  }

  // Before the sweep: a killed or cancelled job still names its files, and the post step can say what it measured.
  const resultPath = cfg.out
  const reportPath = resultPath.replace(/\.json$/i, '') + '.md'
  progress.resultPath = resultPath
  progress.planned = plannedRunCount(cfg)
  core.setOutput('result-path', resultPath)
  core.setOutput('report-path', reportPath)
  core.saveState(STATE.resultPath, resultPath)
  core.saveState(STATE.planned, String(progress.planned))
  core.saveState(STATE.commentKey, progress.key)
  core.saveState(STATE.pr, String(ctx.pullRequest?.number ?? ''))
  core.saveState(STATE.phase, 'started')

  core.info(`servegate ${inputs.mode}: sweep "${cfg.sweepName}" against ${cfg.serve ? 'the server it starts (serve)' : (cfg.server.baseUrl ?? 'the built-in simulator')}${baseline === null ? '' : `, baseline ${baselineRel}`}`)
  if (inputs.mode !== 'refresh') await publishStatusComment(deps, target(progress), statusCommentBody('running', runStamp(ctx, new Date().toISOString()), `Sweep "${cfg.sweepName}" (${progress.planned} runs) started.`, undefined, progress.secrets))
  const { result } = await stages.runSweep(cfg, { log: (line) => core.info(line), ...(deps.signal ? { signal: deps.signal } : {}) }).catch(async (err: unknown) => {
    // A server servegate started that died mid-sweep is a verdict, not a failure to run: the gate
    // judges the partial result, which it calls broken (a refresh never records it).
    if (!(err instanceof ServerExitedDuringSweep) || baseline === null || inputs.mode === 'refresh') throw err
    core.error(`servegate: ${err.message}`)
    notes.push(err.message.split('\n')[0]!.replace(/^the server/, 'The server') + '.')
    return { result: await stages.readResultFile(err.resultPath), resultPath: err.resultPath }
  })

  if (cfg.server.baseUrl === null && !cfg.serve) notes.push("No base-url was given: these numbers come from servegate's built-in simulator, not a GPU server.")
  let measured = result
  let verdict: Verdict | null = null
  if (baseline !== null && inputs.mode !== 'refresh') {
    // The escalation ladder (gate/ladder.ts): the stored baseline, then confirmation repeats, then A/B
    // with the base branch's reference engine; only a gate escalates to A/B.
    const climb = { hasReference: reference !== null && inputs.mode === 'gate', confirm: inputs.confirm, tolerance: (cfg.gate.tolerancePct.itl ?? 5) / 100 }
    // The scheduled watch judges the host's drift itself: there a host change is the finding, not a reason to abstain.
    const look = (step: LadderStep): Partial<GateOptions> => ({ ...stepOptions(step, climb), ...(inputs.mode === 'watch' ? { onHostChange: 'judge' as const } : {}) })
    const hostChanged = inputs.mode !== 'watch' && hostChangedSince(baseline, result)
    const spent = [sweepGpuMinutes(result)]
    verdict = stages.compareToBaseline(baseline, result, cfg, look('baseline'))
    let next = nextStep(verdict, { step: 'baseline', canConfirm: inputs.confirm && verdict.confirm !== null, hasReference: climb.hasReference, hostChanged })
    if (next === 'confirm' && verdict.confirm !== null) {
      const extra = await confirmVerdict(deps, cfg, result, resultPath, verdict.confirm.extraRepeats, notes)
      measured = extra.measured
      spent.push(sweepGpuMinutes(extra.extra))
      verdict = stages.compareToBaseline(baseline, measured, cfg, look('confirm'))
      next = nextStep(verdict, { step: 'confirm', canConfirm: false, hasReference: climb.hasReference, hostChanged })
    }
    if (next === 'ab' && reference !== null) {
      const ladder = { from: verdict, reason: escalationReason(verdict, hostChanged), gpuMinutes: spent.reduce((a, x) => a + x, 0), baselineRel }
      core.info(`servegate: escalating to A/B with the reference engine: ${ladder.reason}.`)
      await runAbDecision(deps, { inputs, ctx, wd, terms: { ...terms, cfg }, notes, progress, status: target(progress), reference, ladder })
      return
    }
  } else if (baseline !== null) {
    // Informational only: a refresh records the new state whatever it is.
    try {
      verdict = stages.compareToBaseline(baseline, result, cfg)
    } catch (err) {
      notes.push(`Could not compare with the previous baseline: ${describeError(err)}`)
    }
  }

  if (inputs.mode === 'watch' && baseline !== null && verdict !== null) {
    const p = { inputs, ctx, key: progress.key, cfg, baseline, baselineRel, result: measured, verdict, notes, reportPath, secrets: progress.secrets }
    await publishWatch(deps, { ...p, onVerdictSet: () => void (progress.verdictSet = true) })
    return
  }

  if (inputs.mode === 'refresh') {
    const name = commentKeyFor(inputs, baselineRel)
    notes.push(await refreshBaseline(deps, { inputs, wd, baselineRel, baselineAbs: terms.baselineAbs, name, existing: baseline, result, cfg, runUrl: ctx.runUrl }))
  }

  const outcome: Outcome = inputs.mode === 'refresh' ? 'refreshed' : (verdict?.verdict ?? 'none')
  // A verdict against a baseline from another driver, CUDA, clock or kernel may be the host's doing: say so first.
  const firstLine = inputs.mode !== 'refresh' && verdict !== null ? hostNotice(baseline, measured.env, false) : null
  if (firstLine !== null) core.warning(firstLine, { title: 'servegate: the host changed since the baseline' })

  const report: ReportInput = {
    mode: inputs.mode,
    outcome,
    sweepName: cfg.sweepName,
    baselinePath: baselineRel,
    result: measured,
    baseline,
    verdict,
    renderers: { verdict: (v) => stages.renderVerdictMarkdown(v), report: (r, opts) => stages.renderMarkdownReport(r, opts) },
    showHost: inputs.showHost,
    charts: charts(deps, measured, baseline),
    notes,
    runUrl: ctx.runUrl,
    stamp: runStamp(ctx, new Date().toISOString()),
    firstLine,
  }
  await publishVerdict(deps, {
    inputs,
    pr: ctx.pullRequest?.number ?? null,
    key: progress.key,
    report,
    reportPath,
    verdict,
    onVerdictSet: () => void (progress.verdictSet = true),
    secrets: progress.secrets,
  })
  // Without a baseline there is no verdict to fail the step; a sweep that measured nothing valid
  // fails it as `servegate run` exits 1 (a refresh refuses such a result when it appends it).
  const invalid = verdict === null && inputs.mode === 'full' ? noValidRun(measured) : null
  if (invalid !== null) core.setFailed(`servegate: no run of the sweep is valid (${invalid}); the result is written to ${resultPath}`)
}

/** Run the extra repeats the gate asked for on this runner; the merged result (written over the first) holds them all. */
async function confirmVerdict(
  deps: ActionDeps,
  cfg: ResolvedConfig,
  first: ResultFile,
  resultPath: string,
  extraRepeats: number,
  notes: string[],
): Promise<{ measured: ResultFile; extra: ResultFile }> {
  deps.core.info(`servegate: undecided after ${cfg.repeats} repeat(s); running ${extraRepeats} more to decide.`)
  // A fresh seed gives the extra repeats their own prompts, so none hits a prefix cached by the first sweep.
  const extraCfg: ResolvedConfig = { ...cfg, repeats: extraRepeats, seed: deriveSeed(cfg.seed, 'confirm'), resume: false, out: resultPath.replace(/\.json$/i, '') + '.confirm.json' }
  const extra = await deps.stages.runSweep(extraCfg, { log: (line) => deps.core.info(line), ...(deps.signal ? { signal: deps.signal } : {}) })
  const measured = deps.stages.mergeResults(first, extra.result)
  await deps.stages.writeResultFile(resultPath, measured)
  notes.push(`The first ${cfg.repeats} repeat(s) were undecided; ${extraRepeats} more were run and the verdict is over all of them.`)
  return { measured, extra: extra.result }
}

function target(progress: Progress): StatusTarget {
  const inputs = progress.inputs
  return { comment: inputs?.comment ?? 'never', githubToken: inputs?.githubToken, pr: progress.ctx?.pullRequest?.number ?? null, key: progress.key ?? 'servegate' }
}

/** Summary and comment for a run with no verdict; the comment names the head commit, so a stale verdict is never left standing. */
async function reportStatus(
  deps: ActionDeps,
  progress: Progress,
  state: Exclude<RunState, 'running'>,
  detail: string,
  partial?: { done: number; planned: number },
  summary = true,
): Promise<void> {
  if (!progress.verdictSet) deps.core.setOutput('verdict', state)
  if (!progress.verdictSet && progress.inputs !== null) {
    await writeRunRecord(deps, { inputs: progress.inputs, key: progress.key ?? 'servegate', outcome: state, detail, sweep: null, comparedWith: null, verdict: null, env: null, stamp: progress.ctx, secrets: progress.secrets })
  }
  const stamp = runStamp(progress.ctx ?? { headSha: deps.env['GITHUB_SHA'] ?? null, runAttempt: deps.env['GITHUB_RUN_ATTEMPT'] ?? null, runUrl: null }, new Date().toISOString())
  const body = statusCommentBody(state, stamp, detail, partial, progress.secrets)
  if (summary) await safeSummary(deps, body.replace(/^### /, '## '))
  if (progress.inputs !== null) await publishStatusComment(deps, target(progress), body)
  deps.core.saveState(STATE.phase, 'published')
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
