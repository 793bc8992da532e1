/**
 * The escalation ladder of a gated pull request (pure): what the gate does
 * when the stored baseline cannot decide a row.
 *
 *   baseline ──undecided──▶ confirm ──still not decided──▶ A/B
 *      │                                                  ▲
 *      └──regression, host changed, baseline unusable─────┘
 *
 * - `baseline`: the candidate's sweep against the stored baseline. A pass or
 *   an improvement ends the ladder; so do verdicts no re-measurement can
 *   change (broken, incomplete, not comparable, a candidate whose own runs
 *   the host spoiled).
 * - `confirm`: more repeats of the candidate on this runner, decided over all
 *   of its runs. Only for an undecided verdict on an unchanged host: repeats
 *   cannot remove the drift between the baseline's day and today.
 * - `ab`: the base branch's engine (`gate.reference_command`) and the PR's
 *   measured side by side on this runner in alternating slots, decided from
 *   paired differences. Day-to-day drift and a changed host cancel out, so a
 *   regression against the stored baseline is confirmed there before the PR
 *   is blamed. Without a reference command the ladder ends one step earlier,
 *   and whatever is left undecided fails.
 *
 * `reference: 'always'` skips the first two steps (every PR is measured A/B).
 */
import type { ResultFile } from '../types.js'
import type { GateOptions, Verdict } from './types.js'

export type LadderStep = 'baseline' | 'confirm' | 'ab'

/** How the gate uses a reference command: as the ladder's last step, or for every PR. */
export type ReferenceMode = 'ladder' | 'always'

export interface LadderState {
  /** The step whose verdict is in hand. */
  step: LadderStep
  /** Confirmation is enabled (`confirm`), and the verdict names extra repeats that would likely settle it. */
  canConfirm: boolean
  /** A reference command is configured on the base branch. */
  hasReference: boolean
  /** The host (driver, CUDA, GPU clocks, kernel) changed since the baseline's newest refresh. */
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
  return gated.every((r) => r.status !== 'invalid' && r.status !== 'missing' && (r.status !== 'unmeasured' || r.n_candidate >= 2))
}

/** The next step after `state.step` gave `verdict`; null when the verdict stands. */
export function nextStep(verdict: Verdict, state: LadderState): LadderStep | null {
  if (state.step === 'ab') return null
  const v = verdict.verdict
  const toReference: LadderStep | null = state.hasReference ? 'ab' : null
  if (v === 'pass' || v === 'improvement') return state.hostChanged ? toReference : null
  if (v === 'undecided') {
    if (state.step === 'baseline' && state.canConfirm && !state.hostChanged) return 'confirm'
    return toReference
  }
  if (v === 'regression') return toReference
  if (v === 'unmeasured') return baselineSideUnmeasured(verdict, state.hostChanged) ? toReference : null
  return null
}

/**
 * The options of one look on the ladder, over the config's gate settings. With a reference to
 * escalate to, the stored baseline only screens: its band stays open (a row passes only clearly
 * below its bar, and only while it could see twice its tolerance), and the A/B spends the whole
 * false-alarm rate. Without
 * one, the baseline's look and the confirmation's can each fail the check, so they split it; with
 * confirmation off the baseline's look is the last.
 */
export function stepOptions(step: LadderStep, s: { hasReference: boolean; confirm: boolean; tolerance: number }): Partial<GateOptions> {
  if (step === 'ab') return { look: 'last', alphaShare: 1 }
  // The A/B decides what the baseline passes on: a row passes here only if it could see twice its tolerance.
  if (s.hasReference) return { look: 'screen', alphaShare: 1, screenMdc: 2 * s.tolerance }
  if (step === 'baseline' && !s.confirm) return { look: 'last', alphaShare: 1 }
  return { look: step === 'baseline' ? 'screen' : 'last', alphaShare: 0.5 }
}

/** Why the ladder climbs from a verdict, in one line (for the report). */
export function escalationReason(v: Verdict, hostChanged: boolean): string {
  if (hostChanged) return 'the host changed since the baseline, so the stored baseline cannot tell the PR from the host'
  if (v.verdict === 'regression') return `the stored baseline shows a regression (${v.regressions.join(', ')}), confirmed side by side before the PR is blamed`
  if (v.verdict === 'unmeasured') return 'the stored baseline has no valid measurement to judge against'
  const rows = v.rows.filter((r) => r.gated && r.status === 'undecided')
  const blind = rows.filter((r) => r.blind === true).map((r) => `${r.label} (MDC ${r.mdc_pct === null ? 'unknown' : `${r.mdc_pct.toFixed(1)} %`})`)
  return blind.length > 0
    ? `the stored baseline could not have seen the promised regression on ${blind.join(', ')}`
    : `the stored baseline left ${rows.map((r) => r.label).join(', ')} undecided`
}

/** GPU-minutes a sweep held: its wall time × the GPUs it ran on (at least one). */
export function sweepGpuMinutes(r: Pick<ResultFile, 'env'>): number {
  const ms = Date.parse(r.env.finished_at) - Date.parse(r.env.started_at)
  const gpus = typeof r.env.gpu.count === 'number' && r.env.gpu.count > 0 ? r.env.gpu.count : 1
  return Number.isFinite(ms) && ms > 0 ? (ms / 60000) * gpus : 0
}
