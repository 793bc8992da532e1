/**
 * `mode: gate`, on a pull request: the candidate's sweep judged against the
 * stored baseline on the base branch, climbing the escalation ladder
 * (gate/ladder.ts) when the baseline cannot decide: confirmation repeats,
 * then A/B with the base branch's reference engine (mode-ab.ts). A gate whose
 * sweep brackets the baseline's crossing runs only the points around it
 * (gate/bracket.ts); one that measures the reference for every PR
 * (`gate.reference_mode: always`, or no baseline yet) goes to A/B at once.
 */
import { applyBracket } from '../gate/bracket.js'
import type { Terms } from './base-terms.js'
import type { RunContext } from './context.js'
import type { ActionDeps } from './deps.js'
import { secretsInCommand, type ActionInputs } from './inputs.js'
import { openJob, requireBaseline, type Job } from './job.js'
import { climbLadder } from './job-ladder.js'
import { publishJobReport } from './job-report.js'
import { sweepJob } from './job-sweep.js'
import { referenceFor, runAbDecision, type AbJob } from './mode-ab.js'
import { keepSecrets, statusTarget, type Progress } from './progress.js'

/** A gate with a reference engine that measures it beside every PR (`gate.reference_mode: always`, or no baseline to start from). */
function alwaysAB(inputs: ActionInputs, terms: Terms): boolean {
  return referenceFor(inputs, terms.cfg) !== null && (terms.cfg.gate.referenceMode === 'always' || terms.baseline === null)
}

/** The config the gate sweeps: bracketed around the baseline's crossing when the sweep asks for it and there is a crossing to bracket. */
function placeGate(deps: ActionDeps, terms: Terms, inputs: ActionInputs): Terms['cfg'] {
  // An A/B gate re-measures the reference beside the candidate and has no crossing to bracket.
  const bracketed =
    terms.cfg.placement === 'bracket' && terms.baseline !== null && !alwaysAB(inputs, terms)
      ? applyBracket(terms.cfg, terms.baseline, `baseline ${terms.baselineRel}`)
      : null
  for (const note of bracketed?.notes ?? []) deps.core.info(`servegate: bracketing: ${note}`)
  return bracketed?.cfg ?? terms.cfg
}

/** Sweep, judge against the baseline (escalating as the ladder says), and publish the verdict. */
export async function runGate(deps: ActionDeps, progress: Progress, given: ActionInputs, ctx: RunContext): Promise<void> {
  const job = await openJob(deps, progress, given, ctx, (terms, inputs) => placeGate(deps, terms, inputs))
  // The base branch names a reference engine: A/B on this runner for every PR, else as the ladder's last step.
  const reference = referenceFor(job.inputs, job.cfg)
  if (reference !== null) keepSecrets(deps.core, progress, secretsInCommand(reference.command))
  const ab = (terms: Terms, ladder: AbJob['ladder']): Promise<void> => runAbDecision(deps, abJob(job, terms, reference, ladder))
  if (reference !== null && alwaysAB(job.inputs, job.terms)) return ab(job.terms, null)
  const baseline = requireBaseline(job.terms)

  const sweep = await sweepJob(deps, firstStart(job, reference !== null), true)
  const climb = await climbLadder(deps, job, baseline, sweep, { hasReference: reference !== null, hostChangeIsFinding: false })
  if (climb.escalate !== null && reference !== null) {
    deps.core.info(`servegate: escalating to A/B with the reference engine: ${climb.escalate.reason}.`)
    return ab({ ...job.terms, cfg: job.cfg }, climb.escalate)
  }
  await publishJobReport(deps, job, { outcome: climb.verdict.verdict, measured: climb.measured, verdict: climb.verdict, reportPath: sweep.reportPath })
}

/**
 * The PR's first sweep as the first engine start of a sequential test: one run per point where a
 * sequential step can follow it (an A/B with the reference engine, or more starts of the
 * candidate's engine that servegate starts), since each later step measures one run per point per
 * start and the drift lives between starts, not runs. A gate that can only look once (a base URL,
 * no reference) keeps the sweep's repeats: its one look draws its spread from them.
 */
function firstStart(job: Job, hasReference: boolean): Job {
  const sequential = hasReference || (job.inputs.confirm && job.cfg.serve != null)
  if (!sequential || job.cfg.repeats <= 1) return job
  job.notes.push(
    `The first sweep ran one run per point (the sweep's repeats: ${job.cfg.repeats}): it is the candidate's first engine start of a sequential test, and each later start adds one run per point.`,
  )
  return { ...job, cfg: { ...job.cfg, repeats: 1 } }
}

function abJob(job: Job, terms: Terms, reference: AbJob['reference'], ladder: AbJob['ladder']): AbJob {
  const { inputs, ctx, wd, notes, progress } = job
  return { inputs, ctx, wd, terms, notes, progress, status: statusTarget(progress), reference, ladder }
}
