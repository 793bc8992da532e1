/**
 * The escalation ladder (gate/ladder.ts) as a gate, full or watch run climbs
 * it after its sweep: the candidate's first engine start against the stored
 * baseline, then — without a reference engine, where servegate starts the
 * candidate's engine (`server.command`) and `confirm` is on — more engine
 * starts of the candidate, one run per point each, added to the same
 * sequential test (gate/seq-baseline.ts), and — for a gate whose base branch
 * names a reference engine — A/B, which the caller runs.
 */
import type { Baseline, Verdict } from '../gate/types.js'
import { escalationReason } from '../gate/ladder.js'
import { capLine, costOf } from '../gate/cost.js'
import { hostChangedSince } from '../gate/host-change.js'
import { climbStarts, sum } from '../sweep/climb.js'
import type { ResultFile } from '../types.js'
import type { ActionDeps } from './deps.js'
import type { Job } from './job.js'
import type { JobSweep } from './job-sweep.js'
import type { AbJob } from './mode-ab.js'

export interface Climb {
  /** The last verdict reached (the one to publish, unless `escalate` says A/B decides). */
  verdict: Verdict
  /** The result the verdict was decided on (with the candidate's later starts, when they ran). */
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

/** Compare with the baseline, add candidate starts while they can decide, and say whether to escalate to A/B. */
export async function climbLadder(deps: ActionDeps, job: Job, baseline: Baseline, sweep: JobSweep, opts: ClimbOptions): Promise<Climb> {
  const { core, stages } = deps
  const { inputs, cfg } = job
  const { result } = sweep
  const hostChanged = !opts.hostChangeIsFinding && hostChangedSince(baseline, result)
  const climbed = await climbStarts(
    {
      runSweep: stages.runSweep.bind(stages),
      mergeResults: stages.mergeResults.bind(stages),
      writeResultFile: stages.writeResultFile.bind(stages),
      compareStarts: (b, candidate, step, startOf) => stages.compareStarts(b, candidate, cfg, step, startOf),
      log: (line: string) => core.info(line),
      ...(deps.signal ? { signal: deps.signal } : {}),
    },
    {
      cfg,
      baseline,
      result,
      resultPath: sweep.resultPath,
      hasReference: opts.hasReference,
      // More starts of the candidate are engine starts only where servegate starts its engine.
      canRestart: inputs.confirm && cfg.serve != null,
      maxStarts: inputs.maxRounds,
      hostChangeIsFinding: opts.hostChangeIsFinding,
      hostChanged,
    },
  )
  const { verdict, measured, starts, spent, capped } = climbed
  const cap = cfg.gate.maxGpuMinutes ?? null
  if (starts > 1)
    job.notes.push(
      `The candidate's engine was started ${starts} times (one run per point after the first sweep); every start is an increment of the same sequential test.`,
    )
  const pointRuns = measured.points.reduce((n, p) => n + p.runs.length, 0)
  const engineStarts = cfg.serve != null ? starts : 0
  verdict.cost = costOf({ engineStarts, pointRuns }, sum(spent), cap, capped && verdict.verdict === 'undecided')
  if (verdict.cost.capped) verdict.reasons.unshift(`undecided: ${capLine(cap!, sum(spent))}`)
  const escalate =
    climbed.next === 'ab' && opts.hasReference
      ? {
          from: verdict,
          reason: escalationReason(verdict, hostChanged),
          gpuMinutes: sum(spent),
          baselineRel: job.terms.baselineRel,
          engineStarts,
          pointRuns,
          // One start of the candidate's engine so far: the A/B may take it as its first B slot.
          ...(starts === 1 ? { first: measured } : {}),
        }
      : null
  return { verdict, measured, escalate }
}
