/**
 * What the inputs `fail-on` and `comment` decide for a given outcome. Pure.
 * The step fails exactly when `gateExit` (the table `servegate compare` exits
 * by) is not 0, so one pair of files can never pass in one and fail in the other.
 */
import { gateExit } from '../gate/outcome.js'
import type { CommentPolicy, FailOnPolicy } from './inputs.js'
import type { Outcome } from './summary.js'

/** The one-line reason to fail the step, or null when `fail-on` lets the outcome pass. */
export function gateFailure(outcome: Outcome, failOn: FailOnPolicy, regressions: readonly string[], reasons: readonly string[]): string | null {
  // No verdict (nothing to compare with, or a refresh): nothing for fail-on to judge.
  if (outcome === 'none' || outcome === 'refreshed') return null
  if (gateExit(outcome, failOn) === 0) return null
  if (outcome === 'regression') {
    const what = regressions.length > 0 ? regressions.join('; ') : (reasons[0] ?? 'see the job summary')
    return `servegate gate tripped: regression in ${what}`
  }
  const why = reasons[0] ?? 'see the job summary'
  return `servegate gate tripped: verdict ${outcome} (fail-on: ${failOn.join(',')}): ${why}`.replace(/\s*\n\s*/g, ' ')
}

/** Title and text of the annotation a verdict that is not a certified answer raises, or null. */
export function verdictAnnotation(outcome: Outcome, reasons: readonly string[]): { title: string; message: string } | null {
  const why = reasons[0] ?? 'see the job summary'
  if (outcome === 'unmeasured') return { title: 'servegate: unmeasured — not a pass', message: `A gated metric lacks a valid measurement: ${why}` }
  if (outcome === 'undecided') return { title: 'servegate: undecided — not a pass', message: `The gate measured but could not decide: ${why}` }
  if (outcome === 'not_comparable') return { title: 'servegate: not comparable', message: `The candidate was not measured like the baseline: ${why}` }
  return null
}

/** What to do with the sticky comment: create or update it, only update an existing one, or leave it. */
export function commentAction(policy: CommentPolicy, outcome: Outcome): 'upsert' | 'update-only' | 'none' {
  if (policy === 'never') return 'none'
  if (policy === 'always') return 'upsert'
  // on-regression: keep an earlier regression comment truthful when the PR is fixed, but do not start one for a pass.
  return outcome === 'regression' ? 'upsert' : 'update-only'
}
