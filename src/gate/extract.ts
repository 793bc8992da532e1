/**
 * Per-run figures of a result, keyed the way baselines store them. Invalid runs
 * are kept (flagged) so the caller can say why a row is not decided.
 *
 * With a failed-request budget, a run whose only validity issue is
 * `requests_failed` within that budget counts as valid for the gate: its figures
 * are kept (the row notes the failures), and throughput at target is drawn again
 * through it with the same pure function the sweep uses (analysis/at-target.ts).
 * Without a budget (baseline refreshes) every invalid run stays out.
 */
import { atTargetForResult, repeatsCutByInvalidRuns } from '../analysis/at-target.js'
import { CHECKS_NOT_RUN } from '../analysis/unchecked.js'
import type { AtTargetShape, Goodput, LatencyStats, PointResult, ResultFile, RunResult } from '../types.js'
import { ITL_TOK, OUT_TOK, metricKey, pointScope, shapeLabel } from './metric-keys.js'
import type { GateOptions, MetricKind } from './types.js'

/** The failed-request budget of a candidate run. */
export type FailedBudget = Pick<GateOptions, 'failedRequestBudget' | 'maxFailedRequests'>

/** Whether a run's failed requests stay within the budget (a run that completed nothing never does). */
function withinFailedBudget(run: Pick<RunResult, 'failed' | 'completed'>, budget: FailedBudget): boolean {
  if (run.completed <= 0) return run.failed === 0
  if (budget.maxFailedRequests !== null) return run.failed <= budget.maxFailedRequests
  return failedShare(run) <= budget.failedRequestBudget
}

/**
 * Valid for the gate: valid; or imported with no fault found (only `checks_not_run`: its figures
 * count, unverified, and the verdict notes it — docs/validity.md); or invalid only through failed
 * requests within the budget.
 */
function gateValid(run: RunResult, budget: FailedBudget | null): boolean {
  if (run.validity.valid) return true
  const faults = run.validity.issues.filter((i) => i.code !== CHECKS_NOT_RUN)
  if (faults.length === 0) return true
  if (budget === null || run.failed === 0) return false
  return faults.every((i) => i.code === 'requests_failed') && withinFailedBudget(run, budget)
}

/** One run's value of one figure. */
export interface FigureRun {
  repeat: number
  /** null when the run produced no such figure (e.g. no p95 without requests). */
  value: number | null
  valid: boolean
  /** Validity codes of the run (for throughput at target: of every point of that repeat; it is invalid only when an invalid run comes before the crossing). */
  codes: string[]
  /** Failed / (completed + failed) requests; for throughput at target the worst point of the repeat. */
  failedShare: number
  /** Failed requests (for throughput at target: the most of any point of the repeat). */
  failed: number
  /** Completed requests (for throughput at target: the fewest of any point of the repeat). */
  completed: number
}

/** A run's value of a figure: null when it produced none; undefined when the run does not measure it at all (no key is stored). */
const POINT_FIGURES: Array<[MetricKind | typeof OUT_TOK | typeof ITL_TOK, (r: RunResult) => number | null | undefined]> = [
  ['itl_p95', (r) => p95(r.itl_ms)],
  ['ttft_p95', (r) => p95(r.ttft_ms)],
  ['tpot_p95', (r) => p95(r.tpot_ms)],
  ['e2el_p95', (r) => p95(r.e2el_ms)],
  ['req_tput', (r) => usable(r.request_throughput)],
  ['output_tput', (r) => usable(r.output_throughput)],
  [OUT_TOK, outputTokensPerRequest],
  [ITL_TOK, (r) => p95(r.itl_per_token_ms)],
  // Without --goodput SLOs there is no goodput to gate. With them, completed requests none of which met the SLOs are a
  // goodput of zero (the worst it can be, decided like an unreachable target); nothing completed is no figure.
  ['goodput', (r) => (r.goodput === undefined ? undefined : goodputFigure(r.goodput))],
]

// A figure the gate takes the log of must be finite and positive; the result parser refuses
// anything else, and a hand-built result must not smuggle one in.
const usable = (x: number | null): number | null => (x !== null && Number.isFinite(x) && x > 0 ? x : null)

function goodputFigure(g: Goodput): number | null {
  const x = g.request_throughput
  return g.share !== null && Number.isFinite(x) && x >= 0 ? x : null
}

function p95(s: LatencyStats): number | null {
  return usable(s.p95)
}

/** Output tokens per completed request: the server's count when it reported one, else the client's chunks. */
function outputTokensPerRequest(r: RunResult): number | null {
  if (r.completed <= 0) return null
  const tokens = r.tokens.server_usage ?? r.tokens.client_chunks
  return tokens === null ? null : tokens / r.completed
}

function failedShare(r: Pick<RunResult, 'failed' | 'completed'>): number {
  const total = r.completed + r.failed
  return total > 0 ? r.failed / total : 1
}

/** The result's points as the gate sees them: runs accepted by the budget marked valid. */
function gateView(points: readonly PointResult[], budget: FailedBudget | null): { points: PointResult[]; accepted: Set<string> } {
  const accepted = new Set<string>()
  const view = points.map((p) => ({
    ...p,
    runs: p.runs.map((r) => {
      if (r.validity.valid || !gateValid(r, budget)) return r
      accepted.add(shapeLabel(p.input_len, p.output_len))
      return { ...r, validity: { valid: true, issues: [] } }
    }),
  }))
  return { points: view, accepted }
}

/** Throughput at target per shape as the gate sees it: a shape with runs accepted by the budget is drawn again through them. */
export function gateAtTarget(result: ResultFile, budget: FailedBudget | null = null): AtTargetShape[] {
  return atTargetView(result, gateView(result.points, budget))
}

function atTargetView(result: ResultFile, view: { points: PointResult[]; accepted: Set<string> }): AtTargetShape[] {
  return result.at_target.map((sh) => {
    if (!view.accepted.has(shapeLabel(sh.input_len, sh.output_len))) return sh
    const again = atTargetForResult(
      view.points.filter((p) => p.input_len === sh.input_len && p.output_len === sh.output_len),
      result.target,
    )
    return again[0] ?? { ...sh, runs: [] }
  })
}

/** Every figure of every run of a result, by metric key; `budget` lets runs with few failed requests count (see the file comment). */
export function extractFigures(result: ResultFile, budget: FailedBudget | null = null): Map<string, FigureRun[]> {
  const view = gateView(result.points, budget)
  const atTarget = atTargetView(result, view)
  const out = new Map<string, FigureRun[]>()
  const push = (key: string, run: FigureRun): void => {
    const list = out.get(key)
    if (list) list.push(run)
    else out.set(key, [run])
  }
  // Per shape and repeat: codes and failures of all its points, so throughput at target reports them.
  const repeatState = new Map<string, { codes: Set<string>; failedShare: number; failed: number; completed: number }>()
  for (const [pi, pt] of result.points.entries()) {
    const scope = pointScope(pt)
    for (const [ri, run] of pt.runs.entries()) {
      const codes = run.validity.issues.map((i) => i.code)
      const share = failedShare(run)
      const valid = view.points[pi]!.runs[ri]!.validity.valid
      for (const [kind, get] of POINT_FIGURES) {
        const value = get(run)
        if (value === undefined) continue
        push(metricKey(kind, scope), { repeat: run.repeat, value, valid, codes, failedShare: share, failed: run.failed, completed: run.completed })
      }
      const rk = `${shapeLabel(pt.input_len, pt.output_len)}#${run.repeat}`
      const st = repeatState.get(rk) ?? { codes: new Set<string>(), failedShare: 0, failed: 0, completed: Infinity }
      for (const c of codes) st.codes.add(c)
      st.failedShare = Math.max(st.failedShare, share)
      st.failed = Math.max(st.failed, run.failed)
      st.completed = Math.min(st.completed, run.completed)
      repeatState.set(rk, st)
    }
  }
  for (const sh of atTarget) {
    const scope = shapeLabel(sh.input_len, sh.output_len)
    // Only an invalid run met before the crossing spoils the figure (analysis/at-target.ts).
    const cut = repeatsCutByInvalidRuns(view.points, sh.input_len, sh.output_len, result.target)
    for (const run of sh.runs) {
      const st = repeatState.get(`${scope}#${run.repeat}`)
      // An unreachable target is a throughput of zero at the target, not a missing figure.
      const raw = run.throughput ?? (run.bound === 'unreachable' ? 0 : null)
      const value = raw !== null && Number.isFinite(raw) && raw >= 0 ? raw : null
      push(metricKey('tput_at_target', scope), {
        repeat: run.repeat,
        value,
        valid: !cut.has(run.repeat),
        codes: st ? [...st.codes] : [],
        failedShare: st?.failedShare ?? 0,
        failed: st?.failed ?? 0,
        completed: st && Number.isFinite(st.completed) ? st.completed : 0,
      })
    }
  }
  return out
}
