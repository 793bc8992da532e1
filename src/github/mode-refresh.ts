/**
 * `mode: refresh`, on the default branch: sweep, append the result to the
 * baseline file, and commit it (refresh.ts). The comparison with the previous
 * baseline is informational only: a refresh records the new state whatever it is.
 */
import { describeError } from '../errors.js'
import type { Verdict } from '../gate/types.js'
import type { RunContext } from './context.js'
import type { ActionDeps } from './deps.js'
import type { ActionInputs } from './inputs.js'
import { openJob } from './job.js'
import { publishJobReport } from './job-report.js'
import { sweepJob } from './job-sweep.js'
import type { Progress } from './progress.js'
import { refreshBaseline } from './refresh.js'
import { checkRefreshCommit } from './refresh-commit.js'

/** Check the commit can land, sweep, record the baseline, and publish the report. */
export async function runRefresh(deps: ActionDeps, progress: Progress, given: ActionInputs, ctx: RunContext): Promise<void> {
  const { core, stages } = deps
  const job = await openJob(deps, progress, given, ctx)
  const { inputs, terms, cfg, wd, notes } = job
  if (inputs.refreshCommit) {
    const ref = deps.env['GITHUB_REF']
    core.info(`servegate: ${await checkRefreshCommit(deps.git, { cwd: wd, push: inputs.refreshPush, ...(ref ? { ref } : {}) })}`)
  }
  const { result, reportPath } = await sweepJob(deps, job, false)
  let verdict: Verdict | null = null
  if (terms.baseline !== null) {
    try {
      verdict = stages.compareToBaseline(terms.baseline, result, cfg)
    } catch (err) {
      notes.push(`Could not compare with the previous baseline: ${describeError(err)}`)
    }
  }
  const step = {
    inputs,
    wd,
    baselineRel: terms.baselineRel,
    baselineAbs: terms.baselineAbs,
    name: job.key,
    existing: terms.baseline,
    result,
    cfg,
    runUrl: ctx.runUrl,
  }
  notes.push(await refreshBaseline(deps, step))
  await publishJobReport(deps, job, { outcome: 'refreshed', measured: result, verdict, reportPath })
}
