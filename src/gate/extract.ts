/**
 * Per-run figures of a result, keyed the way baselines store them. Invalid runs
 * are kept (flagged) so the caller can say why a row is not decided.
 */
import { repeatsCutByInvalidRuns } from '../analysis/at-target.js'
import type { LatencyStats, ResultFile, RunResult } from '../types.js'
import { OUT_TOK, metricKey, pointLabel, shapeLabel } from './metric-keys.js'
import type { MetricKind } from './types.js'

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
}

const POINT_FIGURES: Array<[MetricKind | typeof OUT_TOK, (r: RunResult) => number | null]> = [
  ['itl_p95', (r) => p95(r.itl_ms)],
  ['ttft_p95', (r) => p95(r.ttft_ms)],
  ['tpot_p95', (r) => p95(r.tpot_ms)],
  ['e2el_p95', (r) => p95(r.e2el_ms)],
  ['req_tput', (r) => r.request_throughput],
  ['output_tput', (r) => r.output_throughput],
  [OUT_TOK, outputTokensPerRequest],
]

function p95(s: LatencyStats): number | null {
  return s.p95
}

/** Output tokens per completed request: the server's count when it reported one, else the client's chunks. */
function outputTokensPerRequest(r: RunResult): number | null {
  if (r.completed <= 0) return null
  return (r.tokens.server_usage ?? r.tokens.client_chunks) / r.completed
}

function failedShare(r: RunResult): number {
  const total = r.completed + r.failed
  return total > 0 ? r.failed / total : 1
}

/** Every figure of every run of a result, by metric key. */
export function extractFigures(result: ResultFile): Map<string, FigureRun[]> {
  const out = new Map<string, FigureRun[]>()
  const push = (key: string, run: FigureRun): void => {
    const list = out.get(key)
    if (list) list.push(run)
    else out.set(key, [run])
  }
  // Per shape and repeat: codes and failures of all its points, so throughput at target reports them.
  const repeatState = new Map<string, { codes: Set<string>; failedShare: number; failed: number }>()
  for (const pt of result.points) {
    const scope = pointLabel(pt.input_len, pt.output_len, pt.concurrency)
    for (const run of pt.runs) {
      const codes = run.validity.issues.map((i) => i.code)
      const share = failedShare(run)
      for (const [kind, get] of POINT_FIGURES) {
        push(metricKey(kind, scope), { repeat: run.repeat, value: get(run), valid: run.validity.valid, codes, failedShare: share, failed: run.failed })
      }
      const rk = `${shapeLabel(pt.input_len, pt.output_len)}#${run.repeat}`
      const st = repeatState.get(rk) ?? { codes: new Set<string>(), failedShare: 0, failed: 0 }
      for (const c of codes) st.codes.add(c)
      st.failedShare = Math.max(st.failedShare, share)
      st.failed = Math.max(st.failed, run.failed)
      repeatState.set(rk, st)
    }
  }
  for (const sh of result.at_target) {
    const scope = shapeLabel(sh.input_len, sh.output_len)
    // Only an invalid run met before the crossing spoils the figure (analysis/at-target.ts).
    const cut = repeatsCutByInvalidRuns(result.points, sh.input_len, sh.output_len, result.target)
    for (const run of sh.runs) {
      const st = repeatState.get(`${scope}#${run.repeat}`)
      // An unreachable target is a throughput of zero at the target, not a missing figure.
      const value = run.throughput ?? (run.bound === 'unreachable' ? 0 : null)
      push(metricKey('tput_at_target', scope), {
        repeat: run.repeat,
        value,
        valid: !cut.has(run.repeat),
        codes: st ? [...st.codes] : [],
        failedShare: st?.failedShare ?? 0,
        failed: st?.failed ?? 0,
      })
    }
  }
  return out
}
