/**
 * Runs servegate did not measure itself (imported from `vllm bench serve`):
 * their validity carries one `checks_not_run` issue naming the checks the
 * file gave no evidence for, so such a run is never marked valid. Its
 * figures are still what that tool measured, so reports and the gate use
 * them, marked unverified (docs/validity.md, "Imported runs"). Pure.
 */
import type { PointResult, RunResult, ValidityIssue } from '../types.js'

export const CHECKS_NOT_RUN = 'checks_not_run'

/** Whether the run's only validity issue is that checks could not be made (an imported run no check faulted). */
function uncheckedOnly(run: Pick<RunResult, 'validity'>): boolean {
  const issues = run.validity.issues
  return issues.length > 0 && issues.every((i) => i.code === CHECKS_NOT_RUN)
}

/** The issue an imported run carries: which checks could not be made, and why. */
export function checksNotRunIssue(tool: string, checks: readonly string[], why: string): ValidityIssue {
  return { code: CHECKS_NOT_RUN, detail: `Imported from ${tool}: ${checks.join(', ')} could not be checked (${why}).` }
}

/** The points with unverified-only runs counted as valid: the view reports and curves draw figures from. */
export function figuresView(points: readonly PointResult[]): PointResult[] {
  return points.map((p) => ({
    ...p,
    runs: p.runs.map((r) => (uncheckedOnly(r) ? { ...r, validity: { valid: true, issues: [] } } : r)),
  }))
}
