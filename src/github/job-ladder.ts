/**
 * The escalation ladder (gate/ladder.ts) as a gate, full or watch run climbs
 * it after its sweep: the verdict against the stored baseline, then
 * confirmation repeats on this runner (sweep/confirm.ts), then — for a gate
 * whose base branch names a reference engine — A/B, which the caller runs.
 */
import type { GateOptions, Baseline, Verdict } from '../gate/types.js'
import { escalationReason, nextStep, stepOptions, sweepGpuMinutes, type LadderStep } from '../gate/ladder.js'
import { hostChangedSince } from '../gate/host-change.js'
import { confirmVerdict } from '../sweep/confirm.js'
import type { ResultFile } from '../types.js'
import type { ActionDeps } from './deps.js'
import type { Job } from './job.js'
import type { JobSweep } from './job-sweep.js'
import type { AbJob } from './mode-ab.js'

export interface Climb {
  /** The last verdict reached (the one to publish, unless `escalate` says A/B decides). */
  verdict: Verdict
  /** The result the verdict was decided on (with confirmation repeats, when they ran). */
  measured: ResultFile
  /** Non-null: the ladder's last step, A/B with the reference engine, is to decide. */
  escalate: NonNullable<AbJob['ladder']> | null
}

export interface ClimbOptions {
  /** The gate can escalate to A/B (a gate whose base branch names a reference engine). */
  hasReference: boolean
  /** The scheduled watch judges the host's drift itself: there a host change is the finding, not a reason to abstain. */
  hostChangeIsFinding: boolean
}

/** Compare with the baseline, confirm when undecided and allowed, and say whether to escalate to A/B. */
export async function climbLadder(deps: ActionDeps, job: Job, baseline: Baseline, sweep: JobSweep, opts: ClimbOptions): Promise<Climb> {
  const { core, stages } = deps
  const { inputs, cfg } = job
  const { result } = sweep
  const climb = { hasReference: opts.hasReference, confirm: inputs.confirm, tolerance: (cfg.gate.tolerancePct.itl ?? 5) / 100 }
  const look = (step: LadderStep): Partial<GateOptions> => ({
    ...stepOptions(step, climb),
    ...(opts.hostChangeIsFinding ? { onHostChange: 'judge' as const } : {}),
  })
  const hostChanged = !opts.hostChangeIsFinding && hostChangedSince(baseline, result)
  const spent = [sweepGpuMinutes(result)]
  let measured = result
  let verdict = stages.compareToBaseline(baseline, result, cfg, look('baseline'))
  let next = nextStep(verdict, { step: 'baseline', canConfirm: inputs.confirm && verdict.confirm !== null, hasReference: climb.hasReference, hostChanged })
  if (next === 'confirm' && verdict.confirm !== null) {
    const confirmDeps = {
      runSweep: stages.runSweep.bind(stages),
      mergeResults: stages.mergeResults.bind(stages),
      writeResultFile: stages.writeResultFile.bind(stages),
      log: (line: string) => core.info(line),
      ...(deps.signal ? { signal: deps.signal } : {}),
    }
    const extra = await confirmVerdict(confirmDeps, cfg, result, sweep.resultPath, verdict.confirm.extraRepeats)
    job.notes.push(extra.note)
    measured = extra.measured
    spent.push(sweepGpuMinutes(extra.extra))
    verdict = stages.compareToBaseline(baseline, measured, cfg, look('confirm'))
    next = nextStep(verdict, { step: 'confirm', canConfirm: false, hasReference: climb.hasReference, hostChanged })
  }
  const escalate =
    next === 'ab' && opts.hasReference
      ? { from: verdict, reason: escalationReason(verdict, hostChanged), gpuMinutes: spent.reduce((a, x) => a + x, 0), baselineRel: job.terms.baselineRel }
      : null
  return { verdict, measured, escalate }
}
