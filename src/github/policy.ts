/**
 * What the inputs `fail-on` and `comment` decide for a given outcome. Pure.
 */
import type { CommentPolicy, FailOnPolicy } from './inputs.js'
import type { Outcome } from './summary.js'

/** The one-line reason to fail the step, or null when `fail-on` lets the outcome pass. */
export function gateFailure(outcome: Outcome, failOn: FailOnPolicy, regressions: readonly string[], reasons: readonly string[]): string | null {
  if (failOn === 'never') return null
  if (outcome === 'regression') {
    const what = regressions.length > 0 ? regressions.join('; ') : reasons[0] ?? 'see the job summary'
    return `servegate gate tripped: regression in ${what}`
  }
  if (failOn === 'inconclusive' && (outcome === 'inconclusive' || outcome === 'not_comparable')) {
    const why = reasons[0] ?? 'see the job summary'
    return `servegate gate tripped: verdict ${outcome} (fail-on: inconclusive): ${why}`
  }
  return null
}

/** What to do with the sticky comment: create or update it, only update an existing one, or leave it. */
export function commentAction(policy: CommentPolicy, outcome: Outcome): 'upsert' | 'update-only' | 'none' {
  if (policy === 'never') return 'none'
  if (policy === 'always') return 'upsert'
  // on-regression: keep an earlier regression comment truthful when the PR is fixed, but do not start one for a pass.
  return outcome === 'regression' ? 'upsert' : 'update-only'
}
