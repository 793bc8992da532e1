/**
 * The end of every run that reached a verdict, whichever way it was measured
 * (against the stored baseline, or A/B on this runner): the outputs first,
 * then the verdict record (github/record.ts), the full report files (markdown and HTML), the
 * sticky comment, the job summary, and the step's outcome by `fail-on`. Any mode that
 * publishes a verdict through here writes its record.
 */
import { redactStrings } from '../util/redact.js'
import { describeError } from '../errors.js'
import { chartScripts } from '../store/html-assets.js'
import { renderHtmlReport } from '../report/html.js'
import type { Baseline, Verdict } from '../gate/types.js'
import type { ResultFile } from '../types.js'
import { curvesFor } from './curves.js'
import type { ActionDeps } from './deps.js'
import type { ActionInputs } from './inputs.js'
import { commentAction, gateFailure, verdictAnnotation } from './policy.js'
import { publishComment } from './publish.js'
import { writeRunRecord } from './record.js'
import { STATE, safeSummary } from './run-status.js'
import { buildComment, buildFullReport, buildSummary, type ReportInput } from './summary.js'

export interface VerdictPublication {
  inputs: ActionInputs
  pr: number | null
  /** The sticky comment's marker NAME. */
  key: string
  report: ReportInput
  reportPath: string
  verdict: Verdict | null
  /** Called as soon as the `verdict` output holds the answer (a later crash must not rewrite it). */
  onVerdictSet(): void
  /** Known secret values, kept out of the verdict record. */
  secrets?: readonly string[]
}

/** Outputs, report file, comment, summary, and the step's failure when `fail-on` lists the verdict. */
export async function publishVerdict(deps: ActionDeps, p: VerdictPublication): Promise<void> {
  const { core } = deps
  const { report, verdict } = p
  const outcome = report.outcome
  // Outputs first: whatever happens to the comment or the summary, the verdict is not lost.
  core.setOutput('verdict', outcome)
  core.setOutput('regressions', JSON.stringify(verdict?.regressions ?? []))
  p.onVerdictSet()
  // The record next, before anything that talks to GitHub: a matrix's aggregate needs it most.
  await writeRunRecord(deps, {
    inputs: p.inputs,
    key: p.key,
    outcome: outcome === 'refreshed' ? 'none' : outcome,
    sweep: report.sweepName,
    comparedWith: report.baseline === null ? null : report.baselinePath,
    verdict,
    env: report.result.env,
    stamp: report.stamp ?? null,
    secrets: p.secrets ?? [],
  })
  const annotation = verdictAnnotation(outcome, verdict?.reasons ?? [])
  if (annotation !== null) core.warning(annotation.message, { title: annotation.title })

  try {
    await deps.files.writeText(p.reportPath, buildFullReport(report))
  } catch (err) {
    core.warning(`servegate could not write the markdown report ${p.reportPath}: ${describeError(err)}`)
  }
  await writeHtmlReport(deps, p.reportPath, { result: report.result, baseline: report.baseline, verdict }, p.secrets ?? [])

  await postComment(deps, p.inputs, p.pr, p.key, report)
  await safeSummary(deps, buildSummary(report))
  core.saveState(STATE.phase, 'published')

  const failure = gateFailure(outcome, p.inputs.failOn, verdict?.regressions ?? [], verdict?.reasons ?? [])
  if (failure !== null) core.setFailed(failure)
  else core.info(`servegate: ${outcome}`)
}

/** The self-contained HTML page (frontier, latency spread, tables) beside the markdown report, for the run's artifacts; output `html-path`. */
export async function writeHtmlReport(
  deps: ActionDeps,
  reportPath: string,
  what: { result: ResultFile; baseline: Baseline | null; verdict: Verdict | null },
  secrets: readonly string[],
): Promise<void> {
  const htmlPath = reportPath.replace(/\.md$/i, '') + '.html'
  try {
    // Every string the page quotes (server errors, commands, reasons) is redacted before it is rendered: the
    // page inlines a chart library, which a pass over the finished text could mangle.
    const { result, baseline, verdict } = redactStrings(what, secrets)
    await deps.files.writeText(htmlPath, renderHtmlReport(result, { baseline, verdict, scripts: chartScripts() }))
    deps.core.setOutput('html-path', htmlPath)
  } catch (err) {
    deps.core.warning(`servegate could not write the HTML report ${htmlPath}: ${describeError(err)}`)
  }
}

/** One Mermaid latency–throughput chart per shape (the baseline's curve beside the candidate's); a chart that fails is a warning. */
export function charts(deps: ActionDeps, result: ResultFile, baseline: Baseline | null): string[] {
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
