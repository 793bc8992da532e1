/**
 * The end of a watch run (`mode: watch`, for `schedule:` and
 * `workflow_dispatch`): the default branch measured against its own baseline,
 * with no pull request to comment on. Outputs first, then the report file, the
 * tracking issue (opened or updated on a failing verdict, closed on a pass,
 * left alone otherwise), the job summary (the issue's description and what
 * happened to the issue), and the step's outcome by `fail-on` — so the
 * workflow's failure notifications fire. An API error is a warning and a
 * summary note: the verdict and the step's outcome stand.
 */
import { baselineHistory } from '../gate/history.js'
import type { ResolvedConfig } from '../config/resolve.js'
import { describeError } from '../errors.js'
import { blameEnvChanges } from '../gate/env-diff.js'
import { gateExit } from '../gate/outcome.js'
import type { Baseline, Verdict } from '../gate/types.js'
import { renderHistoryTrendMarkdown } from '../report/history-format.js'
import type { ResultFile } from '../types.js'
import { describeApiError } from './api-errors.js'
import { writeRunRecord } from './record.js'
import type { ActionDeps } from './deps.js'
import { optionsFromGateSettings } from '../gate/settings.js'
import type { ActionInputs } from './inputs.js'
import { openJob, requireBaseline } from './job.js'
import { climbLadder } from './job-ladder.js'
import { sweepJob } from './job-sweep.js'
import type { Progress } from './progress.js'
import { gateFailure, verdictAnnotation } from './policy.js'
import { charts, writeHtmlReport } from './publish-verdict.js'
import { STATE, safeSummary } from './run-status.js'
import { runStamp, type RunContext } from './context.js'
import { COMMENT_LIMIT_CHARS, SUMMARY_LIMIT_BYTES, utf16Chars, utf8Bytes } from './trim.js'
import { issueActionFor, syncTrackingIssue, watchMarker, type IssueSyncResult } from './tracking-issue.js'
import { buildWatchBody, passingComment, stillFailingComment, watchFirstLine, watchTitle, type WatchReport } from './watch-report.js'

export interface WatchPublication {
  inputs: ActionInputs
  ctx: RunContext
  /** The tracking issue's key (the comment key: the baseline's name). */
  key: string
  cfg: ResolvedConfig
  baseline: Baseline
  baselineRel: string
  /** The result the verdict was decided on (with confirmation repeats, when they ran). */
  result: ResultFile
  verdict: Verdict
  notes: string[]
  reportPath: string
  secrets: readonly string[]
  /** Called as soon as the `verdict` output holds the answer (a later crash must not rewrite it). */
  onVerdictSet(): void
}

/** Sweep the default branch, judge it against its own baseline (confirming when undecided), and publish the watch. */
export async function runWatch(deps: ActionDeps, progress: Progress, given: ActionInputs, ctx: RunContext): Promise<void> {
  // An event that judges a change never gets here (event-policy.ts): the watch's terms are the checkout's, the default branch's.
  const job = await openJob(deps, progress, given, ctx)
  const baseline = requireBaseline(job.terms)
  const sweep = await sweepJob(deps, job, true)
  const { verdict, measured } = await climbLadder(deps, job, baseline, sweep, { hasReference: false, hostChangeIsFinding: true })
  const { inputs, key, cfg, notes } = job
  const p = {
    inputs,
    ctx,
    key,
    cfg,
    baseline,
    baselineRel: job.terms.baselineRel,
    result: measured,
    verdict,
    notes,
    reportPath: sweep.reportPath,
    secrets: progress.secrets,
  }
  await publishWatch(deps, { ...p, onVerdictSet: () => void (progress.verdictSet = true) })
}

/** The issue body's limit: GitHub's 65,536 characters, less room for the marker. */
const ISSUE_LIMIT = COMMENT_LIMIT_CHARS - 100

/** Outputs, report file, tracking issue, summary, and the step's failure when `fail-on` lists the verdict. */
export async function publishWatch(deps: ActionDeps, p: WatchPublication): Promise<void> {
  const { core } = deps
  const { verdict } = p
  const outcome = verdict.verdict
  core.setOutput('verdict', outcome)
  core.setOutput('regressions', JSON.stringify(verdict.regressions))
  p.onVerdictSet()
  // The record next, before anything that talks to GitHub: a matrix's aggregate may collect watches too.
  await writeRunRecord(deps, {
    inputs: p.inputs,
    key: p.key,
    outcome,
    sweep: p.cfg.sweepName,
    comparedWith: p.baselineRel,
    verdict,
    env: p.result.env,
    stamp: runStamp(p.ctx, new Date().toISOString()),
    secrets: p.secrets,
  })
  const annotation = verdictAnnotation(outcome, verdict.reasons)
  if (annotation !== null) core.warning(annotation.message, { title: annotation.title })
  if (blameEnvChanges(verdict.envChanges).host.length > 0)
    core.warning(watchFirstLine(verdict, p.result), { title: 'servegate: the host changed since the baseline' })

  const report: WatchReport = {
    outcome,
    verdict,
    sweepName: p.cfg.sweepName,
    baselinePath: p.baselineRel,
    baseline: p.baseline,
    result: p.result,
    renderers: { verdict: (v) => deps.stages.renderVerdictMarkdown(v), report: (r, opts) => deps.stages.renderMarkdownReport(r, opts) },
    trend: trendOf(deps, p),
    charts: charts(deps, p.result, p.baseline),
    notes: p.notes,
    stamp: runStamp(p.ctx, new Date().toISOString()),
    runUrl: p.ctx.runUrl,
    commitUrl: commitUrl(deps.env, p.ctx),
    secrets: p.secrets,
  }
  try {
    await deps.files.writeText(p.reportPath, buildWatchBody(report, Number.POSITIVE_INFINITY, utf16Chars, 'no limit'))
  } catch (err) {
    core.warning(`servegate could not write the markdown report ${p.reportPath}: ${describeError(err)}`)
  }
  await writeHtmlReport(deps, p.reportPath, { result: p.result, baseline: p.baseline, verdict }, p.secrets)

  const failing = gateExit(outcome, p.inputs.failOn) !== 0
  const issueNote = await updateIssue(deps, p, report, failing)
  await safeSummary(deps, buildWatchBody(report, SUMMARY_LIMIT_BYTES, utf8Bytes, "GitHub's 1 MiB job-summary limit", [issueNote]))
  core.saveState(STATE.phase, 'published')

  const failure = gateFailure(outcome, p.inputs.failOn, verdict.regressions, verdict.reasons)
  if (failure !== null) core.setFailed(failure.replace(/^servegate gate tripped/, 'servegate watch tripped'))
  else core.info(`servegate watch: ${outcome}`)
}

/** The baseline's trend over its refreshes, judged with the config's gate options; null (and a note) when it cannot be drawn. */
function trendOf(deps: ActionDeps, p: WatchPublication): string | null {
  try {
    return renderHistoryTrendMarkdown(baselineHistory(p.baseline, optionsFromGateSettings(p.cfg.gate)))
  } catch (err) {
    deps.core.warning(`servegate could not draw the baseline's trend: ${describeError(err)}`)
    return null
  }
}

/** `https://github.com/owner/repo/commit/SHA` for the commit measured, when the run names one. */
function commitUrl(env: Record<string, string | undefined>, ctx: RunContext): string | null {
  if (ctx.headSha === null || ctx.repository === '') return null
  return `${env['GITHUB_SERVER_URL'] || 'https://github.com'}/${ctx.repository}/commit/${ctx.headSha}`
}

/** Open, update, close or leave the tracking issue; returns the summary's note. API errors become a warning. */
async function updateIssue(deps: ActionDeps, p: WatchPublication, report: WatchReport, failing: boolean): Promise<string> {
  const { core } = deps
  const action = issueActionFor(p.verdict.verdict, failing, p.verdict.blind.length > 0)
  const outcome = p.verdict.verdict
  if (p.inputs.githubToken === undefined) {
    const note = 'No github-token: the tracking issue was not looked at.'
    if (action !== 'leave') core.warning(`servegate: ${note}`)
    return note
  }
  const token = p.inputs.githubToken
  let r: IssueSyncResult
  try {
    const client = deps.github(token)
    r = await syncTrackingIssue(client.issues, {
      key: p.key,
      identity: await client.identity(),
      action,
      title: watchTitle(report),
      body: buildWatchBody(report, ISSUE_LIMIT, utf16Chars, "GitHub's 65,536-character issue limit"),
      stillFailing: stillFailingComment(report),
      passing: passingComment(report),
    })
  } catch (err) {
    const what = action === 'open-or-update' ? 'open or update' : action === 'close' ? 'close' : 'look for'
    const note = `servegate could not ${what} the tracking issue (${watchMarker(p.key).replace(/^<!-- | -->$/g, '')}): ${describeApiError(err, 'issue')}. The verdict is in this job summary and the step outputs.`
    core.warning(note)
    return note
  }
  const issue = r.issue
  if (issue !== null && r.done !== 'left' && r.done !== 'none') {
    core.setOutput('issue-number', String(issue.number))
    if (issue.html_url !== undefined) core.setOutput('issue-url', issue.html_url)
  }
  const ref = issue === null ? '' : `#${issue.number}${issue.html_url === undefined ? '' : ` (${issue.html_url})`}`
  const note =
    r.done === 'opened'
      ? `Tracking issue: opened ${ref}.`
      : r.done === 'updated'
        ? `Tracking issue: ${ref} now holds this verdict; a comment notified its watchers.`
        : r.done === 'closed'
          ? `Tracking issue: ${ref} closed — passing again.`
          : action === 'leave' && outcome === 'undecided' && p.verdict.blind.length > 0
            ? `Tracking issue: ${r.done === 'left' ? `${ref} left as it is` : 'none opened'} — the watch is blind (${p.verdict.blind.join(', ')}), which says nothing of the engine; more refreshes, or engine starts of the watched engine (server.command), would give it power.`
            : r.done === 'left'
              ? `Tracking issue: ${ref} left as it is — ${outcome} is neither a failure under fail-on nor a pass.`
              : action === 'close'
                ? 'No open tracking issue: nothing to close.'
                : `No open tracking issue, and ${outcome} opens none (not in fail-on).`
  core.info(`servegate: ${note}`)
  return note
}
