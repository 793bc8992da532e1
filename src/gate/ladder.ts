/**
 * The escalation ladder of a gated pull request (pure): what the gate does
 * when one step cannot decide a row. Every step is part of one sequential
 * test per row (./sequential.ts), whose unit is an engine start, because
 * that is where a host's drift lives:
 *
 *   baseline ──open──▶ starts (more candidate starts) ──open──▶ (undecided)
 *      │
 *      └──open, a regression to confirm, the host changed, no usable baseline──▶ A/B
 *
 * - `baseline`: the PR's first sweep, its candidate's first engine start,
 *   against the stored baseline's centre. A pass ends the ladder; so do
 *   verdicts no re-measurement can change (broken, incomplete, not
 *   comparable, a candidate whose own runs the host spoiled).
 * - `starts`: without a reference engine, and where servegate starts the
 *   candidate's engine itself, each further start of the candidate adds an
 *   increment to the same test, one run per point, until every row is decided
 *   or `maxLooks` starts are spent. A row the stored centre leaves blind (too
 *   few refreshes for its drift) does not climb: no number of starts would
 *   decide it.
 * - `ab`: with the base branch's reference engine (`gate.reference_command`),
 *   whatever the stored baseline leaves open is decided side by side on this
 *   runner, each side started afresh for every slot. A regression against the
 *   stored baseline is confirmed there before the PR is blamed, and a host
 *   change since the baseline is cancelled there. With a reference, the stored
 *   baseline never calls a regression: the A/B spends the whole false-alarm
 *   rate.
 *
 * `reference: 'always'` skips the first step (every PR is measured A/B).
 */
import type { ResultFile } from '../types.js'
import type { GateOptions, Verdict } from './types.js'

export type LadderStep = 'baseline' | 'starts' | 'ab'

/** How the gate uses a reference command: as the ladder's last step, or for every PR. */
export type ReferenceMode = 'ladder' | 'always'

export interface LadderState {
  /** The step whose verdict is in hand. */
  step: LadderStep
  /** More candidate starts are allowed (`confirm`, a serve command servegate starts, starts left). */
  canRestart: boolean
  /** A reference command is configured on the base branch. */
  hasReference: boolean
  /** The host (driver, CUDA, GPU clocks, kernel, machine) changed since the baseline's newest refresh. */
  hostChanged: boolean
}

/** The first step: the stored baseline, or A/B straight away when the base branch asks for it always. */
export function firstStep(hasReference: boolean, mode: ReferenceMode): LadderStep {
  return hasReference && mode === 'always' ? 'ab' : 'baseline'
}

/**
 * Whether an unmeasured verdict is the baseline's doing (empty, foreign or spoiled, or from
 * another host), which measuring the reference beside the candidate repairs; a candidate whose
 * own runs were spoiled or missing (a busy host now) is not, and ends the ladder.
 */
export function baselineSideUnmeasured(v: Verdict, hostChanged: boolean): boolean {
  if (v.verdict !== 'unmeasured') return false
  if (hostChanged) return true
  const gated = v.rows.filter((r) => r.gated)
  if (gated.length === 0) return false
  return gated.every((r) => r.status !== 'invalid' && r.status !== 'missing' && (r.status !== 'unmeasured' || r.n_candidate >= 1))
}

/** Whether an undecided verdict has a gated row that more candidate starts could still decide (open and not blind). */
export function startsCanDecide(v: Verdict): boolean {
  return v.verdict === 'undecided' && v.blind.length === 0 && v.rows.some((r) => r.gated && r.status === 'undecided')
}

/** The next step after `state.step` gave `verdict`; null when the verdict stands. */
export function nextStep(verdict: Verdict, state: LadderState): LadderStep | null {
  if (state.step === 'ab') return null
  const v = verdict.verdict
  const toReference: LadderStep | null = state.hasReference ? 'ab' : null
  // Broken, incomplete, not comparable: no re-measurement changes them, on this host or another.
  if (v === 'broken' || v === 'incomplete' || v === 'not_comparable') return null
  // The stored baseline on another host certifies nothing: the reference decides, or nothing can.
  if (state.hostChanged) return toReference
  if (v === 'pass' || v === 'improvement') return null
  if (v === 'undecided' || v === 'regression') {
    if (state.hasReference) return 'ab'
    return v === 'undecided' && state.canRestart && startsCanDecide(verdict) ? 'starts' : null
  }
  if (v === 'unmeasured') return baselineSideUnmeasured(verdict, state.hostChanged) ? toReference : null
  return null
}

/**
 * The options of one step's look over the config's gate settings. The stored baseline's look is
 * interim (`screen`: its open rows stay open) when a later step can decide them; `maxLooks` is
 * the starts the candidate may have in all. The A/B's looks are the job's own (./ab-looks.ts).
 */
export function stepOptions(step: LadderStep, s: { hasReference: boolean; canRestart: boolean; maxStarts: number }): Partial<GateOptions> {
  if (step === 'ab') return { alphaShare: 1 }
  const later = s.hasReference || s.canRestart
  return { look: later ? 'screen' : 'last', alphaShare: 1, maxLooks: s.canRestart && !s.hasReference ? s.maxStarts : 1 }
}

/** Why the ladder climbs from a verdict, in one line (for the report). */
export function escalationReason(v: Verdict, hostChanged: boolean): string {
  if (hostChanged) return 'the host changed since the baseline, so the stored baseline cannot tell the PR from the host'
  if (v.verdict === 'regression') return `the stored baseline shows a regression (${v.regressions.join(', ')}), confirmed side by side before the PR is blamed`
  if (v.verdict === 'unmeasured') return 'the stored baseline has no valid measurement to judge against'
  const rows = v.rows.filter((r) => r.gated && r.status === 'undecided')
  const blind = rows.filter((r) => r.blind === true).map((r) => r.label)
  return blind.length > 0
    ? `the stored baseline's centre is too uncertain to ever decide ${blind.join(', ')}`
    : `the stored baseline left ${rows.map((r) => r.label).join(', ')} between the boundaries`
}

/** GPU-minutes a sweep held: its wall time × the GPUs it ran on (at least one). */
export function sweepGpuMinutes(r: Pick<ResultFile, 'env'>): number {
  const ms = Date.parse(r.env.finished_at) - Date.parse(r.env.started_at)
  const gpus = typeof r.env.gpu.count === 'number' && r.env.gpu.count > 0 ? r.env.gpu.count : 1
  return Number.isFinite(ms) && ms > 0 ? (ms / 60000) * gpus : 0
}
