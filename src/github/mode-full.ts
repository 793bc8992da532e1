/**
 * `mode: full`: the whole sweep measured and reported, judged against the
 * stored baseline when there is one (with confirmation repeats when it is
 * undecided), else reported alone; a sweep with no valid run fails the step
 * as `servegate run` exits 1.
 */
import { noValidRun } from '../sweep/no-valid-run.js'
import type { RunContext } from './context.js'
import type { ActionDeps } from './deps.js'
import type { ActionInputs } from './inputs.js'
import { openJob } from './job.js'
import { climbLadder } from './job-ladder.js'
import { publishJobReport } from './job-report.js'
import { sweepJob } from './job-sweep.js'
import type { Progress } from './progress.js'

/** Sweep, compare with the baseline if any, publish, and fail the step when nothing measured is valid. */
export async function runFull(deps: ActionDeps, progress: Progress, given: ActionInputs, ctx: RunContext): Promise<void> {
  const job = await openJob(deps, progress, given, ctx)
  const baseline = job.terms.baseline
  const sweep = await sweepJob(deps, job, baseline !== null)
  const climb = baseline === null ? null : await climbLadder(deps, job, baseline, sweep, { hasReference: false, hostChangeIsFinding: false })
  const measured = climb?.measured ?? sweep.result
  const verdict = climb?.verdict ?? null
  await publishJobReport(deps, job, { outcome: verdict?.verdict ?? 'none', measured, verdict, reportPath: sweep.reportPath })
  // Without a baseline there is no verdict to fail the step; a sweep that measured nothing valid
  // fails it as `servegate run` exits 1 (a refresh refuses such a result when it appends it).
  const invalid = verdict === null ? noValidRun(measured) : null
  if (invalid !== null) deps.core.setFailed(`servegate: no run of the sweep is valid (${invalid}); the result is written to ${sweep.resultPath}`)
}
