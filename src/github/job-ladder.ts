/**
 * The escalation ladder (gate/ladder.ts) as a gate, full or watch run climbs
 * it after its sweep: the candidate's first engine start against the stored
 * baseline, then — without a reference engine, where servegate starts the
 * candidate's engine (`server.command`) and `confirm` is on — more engine
 * starts of the candidate, one run per point each, added to the same
 * sequential test (gate/seq-baseline.ts), and — for a gate whose base branch
 * names a reference engine — A/B, which the caller runs.
 */
import type { GateOptions, Baseline, Verdict } from '../gate/types.js'
import { escalationReason, nextStep, stepOptions, sweepGpuMinutes, type LadderStep } from '../gate/ladder.js'
import { capLine, costOf } from '../gate/cost.js'
import { hostChangedSince } from '../gate/host-change.js'
import { openPoints } from '../gate/escalate.js'
import { confirmVerdict } from '../sweep/confirm.js'
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

/** Repeats of a result (its runs' repeat numbers). */
function repeatsOf(r: ResultFile): Set<number> {
  return new Set(r.points.flatMap((p) => p.runs.map((x) => x.repeat)))
}

/** Compare with the baseline, add candidate starts while they can decide, and say whether to escalate to A/B. */
export async function climbLadder(deps: ActionDeps, job: Job, baseline: Baseline, sweep: JobSweep, opts: ClimbOptions): Promise<Climb> {
  const { core, stages } = deps
  const { inputs, cfg } = job
  const { result } = sweep
  // More starts of the candidate are engine starts only where servegate starts its engine.
  const restartable = inputs.confirm && cfg.serve != null
  const climb = { hasReference: opts.hasReference, canRestart: restartable, maxStarts: inputs.maxRounds }
  const look = (step: LadderStep, last = false): Partial<GateOptions> => ({
    ...stepOptions(step, climb),
    ...(last ? { look: 'last' as const } : {}),
    ...(opts.hostChangeIsFinding ? { onHostChange: 'judge' as const } : {}),
  })
  const hostChanged = !opts.hostChangeIsFinding && hostChangedSince(baseline, result)
  // Which engine start measured each repeat: the first sweep's repeats are start 0.
  const starts: Array<Set<number>> = [repeatsOf(result)]
  const startOf = (repeat: number): number =>
    Math.max(
      0,
      starts.findIndex((s) => s.has(repeat)),
    )
  const spent = [sweepGpuMinutes(result)]
  const cap = cfg.gate.maxGpuMinutes ?? null
  let measured = result
  let step: LadderStep = 'baseline'
  let verdict = stages.compareStarts(baseline, result, cfg, look('baseline'), startOf)
  let capped = false
  for (;;) {
    const canRestart = restartable && starts.length < climb.maxStarts && !(capped = cap !== null && sum(spent) >= cap)
    const next = nextStep(verdict, { step, canRestart, hasReference: climb.hasReference, hostChanged })
    if (next !== 'starts') break
    const open = openPoints(verdict, measured)
    const extra = await confirmVerdict(
      {
        runSweep: stages.runSweep.bind(stages),
        mergeResults: stages.mergeResults.bind(stages),
        writeResultFile: stages.writeResultFile.bind(stages),
        log: (line: string) => core.info(line),
        ...(deps.signal ? { signal: deps.signal } : {}),
      },
      cfg,
      measured,
      sweep.resultPath,
      1,
      // Rows, not sweeps: the new start measures only the points of rows still open.
      open.size > 0 ? open : null,
    )
    const before = repeatsOf(measured)
    measured = extra.measured
    starts.push(new Set([...repeatsOf(measured)].filter((r) => !before.has(r))))
    spent.push(sweepGpuMinutes(extra.extra))
    step = 'starts'
    const last = starts.length >= climb.maxStarts || (cap !== null && sum(spent) >= cap)
    verdict = stages.compareStarts(baseline, measured, cfg, look('baseline', last), startOf)
  }
  if (starts.length > 1)
    job.notes.push(
      `The candidate's engine was started ${starts.length} times (one run per point after the first sweep); every start is an increment of the same sequential test.`,
    )
  const pointRuns = measured.points.reduce((n, p) => n + p.runs.length, 0)
  const engineStarts = cfg.serve != null ? starts.length : 0
  verdict.cost = costOf({ engineStarts, pointRuns }, sum(spent), cap, capped && verdict.verdict === 'undecided')
  if (verdict.cost.capped) verdict.reasons.unshift(`undecided: ${capLine(cap!, sum(spent))}`)
  const next = nextStep(verdict, { step, canRestart: false, hasReference: climb.hasReference, hostChanged })
  const escalate =
    next === 'ab' && opts.hasReference
      ? {
          from: verdict,
          reason: escalationReason(verdict, hostChanged),
          gpuMinutes: sum(spent),
          baselineRel: job.terms.baselineRel,
          engineStarts,
          pointRuns,
          // One start of the candidate's engine so far: the A/B may take it as its first B slot.
          ...(starts.length === 1 ? { first: measured } : {}),
        }
      : null
  return { verdict, measured, escalate }
}

function sum(xs: readonly number[]): number {
  return xs.reduce((a, x) => a + x, 0)
}
