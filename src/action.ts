/**
 * The GitHub Action: run the sweep the mode asks for, compare it with the
 * stored baseline, report (job summary, sticky PR comment, outputs), refresh
 * and commit the baseline, and fail the step when `fail-on` says so. Every
 * effect goes through `deps`, so tests drive it with typed fakes.
 */
import { resolve } from 'node:path'
import type { ResolvedConfig, RunFlags } from './config/resolve.js'
import type { Baseline, Verdict } from './gate/types.js'
import type { ResultFile } from './types.js'
import { deriveSeed } from './util/rng.js'
import { UsageError, describeError } from './errors.js'
import { forkRefusal, readRunContext } from './github/context.js'
import { curvesFor } from './github/curves.js'
import type { ActionDeps } from './github/deps.js'
import { baselinePathFor, chooseSweep, commentKeyFor, readInputs, type ActionInputs } from './github/inputs.js'
import { commentAction, gateFailure } from './github/policy.js'
import { publishComment } from './github/publish.js'
import { refreshBaseline } from './github/refresh.js'
import { buildComment, buildFullReport, buildSummary, failureSummary, type Outcome, type ReportInput } from './github/summary.js'

export type { ActionDeps } from './github/deps.js'

/** Run the action once; never throws (a crash fails the step with `servegate crashed: …`). */
export async function run(deps: ActionDeps): Promise<void> {
  try {
    await runAction(deps)
  } catch (err) {
    await reportCrash(deps, err)
  }
}

async function runAction(deps: ActionDeps): Promise<void> {
  const { core, stages } = deps
  const inputs = readInputs((name) => core.getInput(name))
  if (inputs.githubToken !== undefined) core.setSecret(inputs.githubToken)

  const ctx = readRunContext(deps.event.name, deps.event.payload, deps.env)
  const refusal = forkRefusal(ctx, inputs.allowFork)
  if (refusal !== null) {
    core.setOutput('verdict', 'refused')
    await safeSummary(deps, `## ⛔ servegate refused to run\n\n${refusal}\n`)
    core.setFailed(refusal)
    return
  }
  if (ctx.pullRequest?.fromFork === true && ctx.runner.selfHosted) {
    core.warning(`allow-fork is true: benchmarking pull request #${ctx.pullRequest.number} from a fork on a self-hosted runner.`)
  }

  const wd = resolve(deps.cwd, inputs.workingDirectory)
  const configPath = inputs.config === undefined ? null : resolve(wd, inputs.config)
  const file = configPath === null ? null : await stages.loadConfigFile(configPath)
  const cfg = stages.resolveConfig({ file, filePath: configPath, flags: runFlags(inputs, wd, file?.sweeps ? Object.keys(file.sweeps) : null), env: deps.env })
  if (cfg.apiKey !== null) core.setSecret(cfg.apiKey)

  const baselineRel = baselinePathFor(inputs, cfg.sweepName)
  const baselineAbs = resolve(wd, baselineRel)
  // Read the baseline before sweeping: a missing or corrupt one must not cost a GPU run first.
  const baseline = deps.files.exists(baselineAbs) ? await stages.readBaseline(baselineAbs) : null
  if (baseline === null && inputs.mode === 'gate') {
    throw new UsageError(
      `there is no baseline at ${baselineRel} to gate against.`,
      'Record one first: run the action with mode: refresh on your default branch (see docs/action.md), or point the baseline input at an existing file.',
    )
  }

  core.info(`servegate ${inputs.mode}: sweep "${cfg.sweepName}" against ${cfg.server.baseUrl ?? 'the built-in simulator'}${baseline === null ? '' : `, baseline ${baselineRel}`}`)
  const { result, resultPath } = await stages.runSweep(cfg, { log: (line) => core.info(line), ...(deps.signal ? { signal: deps.signal } : {}) })
  core.setOutput('result-path', resultPath)

  const notes: string[] = []
  if (cfg.server.baseUrl === null) notes.push("No base-url was given: these numbers come from servegate's built-in simulator, not a GPU server.")
  let measured = result
  let verdict: Verdict | null = null
  if (baseline !== null && inputs.mode !== 'refresh') {
    verdict = stages.compareToBaseline(baseline, result, cfg)
    if (verdict.verdict === 'inconclusive' && verdict.confirm !== null && inputs.confirm) {
      ;({ measured, verdict } = await confirmVerdict(deps, cfg, baseline, result, resultPath, verdict.confirm.extraRepeats, notes))
    }
  } else if (baseline !== null) {
    // Informational only: a refresh records the new state whatever it is.
    try {
      verdict = stages.compareToBaseline(baseline, result, cfg)
    } catch (err) {
      notes.push(`Could not compare with the previous baseline: ${describeError(err)}`)
    }
  }

  if (inputs.mode === 'refresh') {
    const name = commentKeyFor(inputs, baselineRel)
    notes.push(await refreshBaseline(deps, { inputs, wd, baselineRel, baselineAbs, name, existing: baseline, result, cfg, runUrl: ctx.runUrl }))
  }

  const outcome: Outcome = inputs.mode === 'refresh' ? 'refreshed' : (verdict?.verdict ?? 'none')
  // Outputs first: whatever happens to the comment or the summary, the verdict is not lost.
  core.setOutput('verdict', outcome)
  core.setOutput('regressions', JSON.stringify(verdict?.regressions ?? []))

  const report: ReportInput = {
    mode: inputs.mode,
    outcome,
    sweepName: cfg.sweepName,
    baselinePath: baselineRel,
    result: measured,
    baseline,
    verdict,
    verdictMarkdown: verdict === null ? null : stages.renderVerdictMarkdown(verdict),
    reportMarkdown: stages.renderMarkdownReport(measured),
    charts: charts(deps, measured, baseline),
    notes,
    runUrl: ctx.runUrl,
  }

  const reportPath = resultPath.replace(/\.json$/i, '') + '.md'
  try {
    await deps.files.writeText(reportPath, buildFullReport(report))
    core.setOutput('report-path', reportPath)
  } catch (err) {
    core.warning(`servegate could not write the markdown report ${reportPath}: ${describeError(err)}`)
  }

  await postComment(deps, inputs, ctx.pullRequest?.number ?? null, commentKeyFor(inputs, baselineRel), report)
  await safeSummary(deps, buildSummary(report))

  const failure = gateFailure(outcome, inputs.failOn, verdict?.regressions ?? [], verdict?.reasons ?? [])
  if (failure !== null) core.setFailed(failure)
  else core.info(`servegate: ${outcome}`)
}

function runFlags(inputs: ActionInputs, wd: string, fileSweeps: readonly string[] | null): RunFlags {
  const flags: RunFlags = { out: resolve(wd, inputs.out) }
  const sweep = chooseSweep(inputs, fileSweeps)
  if (sweep !== undefined) flags.sweep = sweep
  if (inputs.baseUrl !== undefined) flags.baseUrl = inputs.baseUrl
  if (inputs.model !== undefined) flags.model = inputs.model
  if (inputs.containerDigest !== undefined) flags.containerDigest = inputs.containerDigest
  if (inputs.serveCommand !== undefined) flags.serveCommand = inputs.serveCommand
  return flags
}

function charts(deps: ActionDeps, result: ReportInput['result'], baseline: ReportInput['baseline']): string[] {
  const metric = result.target.metric.toUpperCase()
  const out: string[] = []
  for (const sc of curvesFor(result, baseline)) {
    const series = sc.baseline === null ? [sc.candidate] : [sc.baseline, sc.candidate]
    try {
      const title = `${sc.inputLen}×${sc.outputLen}: p95 ${metric} vs output throughput`
      out.push(deps.stages.renderMermaidCurve(series, { title, xLabel: 'output tok/s', yLabel: `p95 ${metric} (ms)` }))
    } catch (err) {
      deps.core.warning(`servegate could not draw the ${sc.inputLen}×${sc.outputLen} chart: ${describeError(err)}`)
    }
  }
  return out
}

async function postComment(deps: ActionDeps, inputs: ActionInputs, pr: number | null, key: string, report: ReportInput): Promise<void> {
  const action = commentAction(inputs.comment, report.outcome)
  if (pr === null || action === 'none') return
  if (inputs.githubToken === undefined) {
    report.notes.push('No github-token: the pull-request comment was skipped.')
    return
  }
  const token = inputs.githubToken
  const r = await publishComment(() => deps.github(token), { issueNumber: pr, name: key, body: buildComment(report), create: action === 'upsert' })
  if (r.problem !== null) {
    deps.core.warning(r.problem)
    report.notes.push(r.problem)
    return
  }
  if (r.commentId !== null) deps.core.setOutput('comment-id', String(r.commentId))
  deps.core.info(`servegate: pull-request comment ${r.action}${r.url ? ` (${r.url})` : ''}`)
}

/** Run the extra repeats the gate asked for and decide over all runs (the result file then holds them all). */
async function confirmVerdict(
  deps: ActionDeps,
  cfg: ResolvedConfig,
  baseline: Baseline,
  first: ResultFile,
  resultPath: string,
  extraRepeats: number,
  notes: string[],
): Promise<{ measured: ResultFile; verdict: Verdict }> {
  deps.core.info(`servegate: inconclusive after ${cfg.repeats} repeat(s); running ${extraRepeats} more to decide.`)
  // A fresh seed gives the extra repeats their own prompts, so none hits a prefix cached by the first sweep.
  const extraCfg: ResolvedConfig = { ...cfg, repeats: extraRepeats, seed: deriveSeed(cfg.seed, 'confirm'), resume: false, out: resultPath.replace(/\.json$/i, '') + '.confirm.json' }
  const extra = await deps.stages.runSweep(extraCfg, { log: (line) => deps.core.info(line), ...(deps.signal ? { signal: deps.signal } : {}) })
  const measured = deps.stages.mergeResults(first, extra.result)
  await deps.stages.writeResultFile(resultPath, measured)
  notes.push(`The first ${cfg.repeats} repeat(s) were inconclusive; ${extraRepeats} more were run and the verdict is over all of them.`)
  return { measured, verdict: deps.stages.compareToBaseline(baseline, measured, cfg) }
}

async function safeSummary(deps: ActionDeps, markdown: string): Promise<void> {
  try {
    await deps.core.appendSummary(markdown)
  } catch (err) {
    deps.core.warning(`servegate could not write the job summary: ${describeError(err)}`)
  }
}

async function reportCrash(deps: ActionDeps, err: unknown): Promise<void> {
  const { core } = deps
  core.setOutput('verdict', 'error')
  if (err instanceof UsageError) {
    const message = `servegate could not run: ${err.message}${err.hint ? ` (${err.hint})` : ''}`
    await safeSummary(deps, failureSummary('servegate could not run', `${err.message}${err.hint ? `\nhint: ${err.hint}` : ''}`))
    core.setFailed(message)
    return
  }
  const detail = err instanceof Error ? (err.stack ?? err.message) : String(err)
  core.error(detail)
  await safeSummary(deps, failureSummary('servegate crashed (a bug, please report it)', detail))
  core.setFailed(`servegate crashed: ${describeError(err)}`)
}
