/**
 * The escalation ladder's first steps as the Action and `servegate gate` climb them (gate/ladder.ts):
 * the candidate's first engine start (its sweep) judged against the stored baseline, then, where
 * servegate starts the candidate's engine and no reference engine is named, more starts of it, one
 * run per point of the rows still open (gate/escalate.ts), each an increment of the same
 * sequential test (gate/seq-baseline.ts), until every row is decided, the starts are spent or
 * `gate.max_gpu_minutes` is reached. Every effect is a parameter.
 */
import type { ResolvedConfig } from '../config/resolve.js'
import { openPoints } from '../gate/escalate.js'
import { nextStep, stepOptions, sweepGpuMinutes, type LadderStep } from '../gate/ladder.js'
import type { Baseline, GateOptions, Verdict } from '../gate/types.js'
import type { ResultFile } from '../types.js'
import { confirmVerdict, type ConfirmDeps } from './confirm.js'

export interface ClimbDeps extends ConfirmDeps {
  /** The stored baseline's sequential look over the candidate's starts (gate/seq-baseline.ts compareStarts). */
  compareStarts(baseline: Baseline, candidate: ResultFile, step: Partial<GateOptions>, startOf: (repeat: number) => number): Verdict
}

export interface ClimbInput {
  cfg: ResolvedConfig
  baseline: Baseline
  /** The first sweep (the candidate's first engine start) and where it is written. */
  result: ResultFile
  resultPath: string
  /** A reference engine will decide what the stored baseline leaves open (A/B, the caller's). */
  hasReference: boolean
  /** servegate may start the candidate's engine again (a serve command, and confirm on). */
  canRestart: boolean
  /** Engine starts of the candidate in all, the first sweep's included. */
  maxStarts: number
  /** The scheduled watch judges a host change itself instead of abstaining. */
  hostChangeIsFinding: boolean
  /** Whether the host changed since the baseline (then the stored baseline certifies nothing). */
  hostChanged: boolean
}

export interface ClimbOutcome {
  verdict: Verdict
  /** The result the verdict was decided on (with the candidate's later starts). */
  measured: ResultFile
  /** Engine starts of the candidate (the first sweep's included). */
  starts: number
  /** GPU-minutes of each start's sweep. */
  spent: number[]
  /** `gate.max_gpu_minutes` stopped the climb. */
  capped: boolean
  /** The step after the last look: 'ab' when the reference engine is to decide, else null. */
  next: LadderStep | null
}

/** Judge the first sweep against the stored baseline and add candidate starts while they can decide. */
export async function climbStarts(deps: ClimbDeps, input: ClimbInput): Promise<ClimbOutcome> {
  const { cfg, baseline, hasReference, hostChanged } = input
  const climb = { hasReference, canRestart: input.canRestart, maxStarts: input.maxStarts }
  const look = (step: LadderStep, last = false): Partial<GateOptions> => ({
    ...stepOptions(step, climb),
    ...(last ? { look: 'last' as const } : {}),
    ...(input.hostChangeIsFinding ? { onHostChange: 'judge' as const } : {}),
  })
  // Which engine start measured each repeat: the first sweep's repeats are start 0.
  const starts: Array<Set<number>> = [repeatsOf(input.result)]
  const startOf = (repeat: number): number =>
    Math.max(
      0,
      starts.findIndex((s) => s.has(repeat)),
    )
  const spent = [sweepGpuMinutes(input.result)]
  const cap = cfg.gate.maxGpuMinutes ?? null
  let measured = input.result
  let step: LadderStep = 'baseline'
  let verdict = deps.compareStarts(baseline, measured, look('baseline'), startOf)
  let capped = false
  for (;;) {
    const canRestart = input.canRestart && starts.length < climb.maxStarts && !(capped = cap !== null && sum(spent) >= cap)
    if (nextStep(verdict, { step, canRestart, hasReference, hostChanged }) !== 'starts') break
    const open = openPoints(verdict, measured)
    // Rows, not sweeps: the new start measures only the points of rows still open.
    const extra = await confirmVerdict(deps, cfg, measured, input.resultPath, 1, open.size > 0 ? open : null)
    const before = repeatsOf(measured)
    measured = extra.measured
    starts.push(new Set([...repeatsOf(measured)].filter((r) => !before.has(r))))
    spent.push(sweepGpuMinutes(extra.extra))
    step = 'starts'
    const last = starts.length >= climb.maxStarts || (cap !== null && sum(spent) >= cap)
    verdict = deps.compareStarts(baseline, measured, look('baseline', last), startOf)
  }
  const next = nextStep(verdict, { step, canRestart: false, hasReference, hostChanged })
  return { verdict, measured, starts: starts.length, spent, capped, next: next === 'ab' && hasReference ? 'ab' : null }
}

/** Repeats of a result (its runs' repeat numbers). */
function repeatsOf(r: ResultFile): Set<number> {
  return new Set(r.points.flatMap((p) => p.runs.map((x) => x.repeat)))
}

export function sum(xs: readonly number[]): number {
  return xs.reduce((a, x) => a + x, 0)
}
