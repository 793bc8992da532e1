/**
 * The end of a gate, full or refresh run that measured against the stored
 * baseline (or recorded a new one): its report — with a first line when the
 * host changed since the baseline — published as the verdict (publish-verdict.ts).
 */
import type { Verdict } from '../gate/types.js'
import type { ResultFile } from '../types.js'
import { runStamp } from './context.js'
import type { ActionDeps } from './deps.js'
import { hostNotice } from './host-notice.js'
import type { Job } from './job.js'
import { charts, publishVerdict } from './publish-verdict.js'
import type { Outcome, ReportInput } from './summary.js'

export interface JobReport {
  outcome: Outcome
  /** The result the verdict was decided on (with confirmation repeats, when they ran). */
  measured: ResultFile
  verdict: Verdict | null
  reportPath: string
}

/** Build the report and publish it: outputs, record, files, comment, summary, and fail-on. */
export async function publishJobReport(deps: ActionDeps, job: Job, r: JobReport): Promise<void> {
  const { core, stages } = deps
  const { inputs, ctx, progress } = job
  const { baseline, baselineRel } = job.terms
  // A verdict against a baseline from another driver, CUDA, clock or kernel may be the host's doing: say so first.
  const firstLine = r.outcome !== 'refreshed' && r.verdict !== null ? hostNotice(baseline, r.measured.env, false) : null
  if (firstLine !== null) core.warning(firstLine, { title: 'servegate: the host changed since the baseline' })

  const report: ReportInput = {
    mode: inputs.mode,
    outcome: r.outcome,
    sweepName: job.cfg.sweepName,
    baselinePath: baselineRel,
    result: r.measured,
    baseline,
    verdict: r.verdict,
    renderers: { verdict: (v) => stages.renderVerdictMarkdown(v), report: (res, opts) => stages.renderMarkdownReport(res, opts) },
    showHost: inputs.showHost,
    charts: charts(deps, r.measured, baseline),
    notes: job.notes,
    runUrl: ctx.runUrl,
    stamp: runStamp(ctx, new Date().toISOString()),
    firstLine,
  }
  await publishVerdict(deps, {
    inputs,
    pr: ctx.pullRequest?.number ?? null,
    key: job.key,
    report,
    reportPath: r.reportPath,
    verdict: r.verdict,
    onVerdictSet: () => void (progress.verdictSet = true),
    secrets: progress.secrets,
  })
}
