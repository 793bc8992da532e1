/**
 * Hard invariants checked without statistics: a row whose candidate runs broke
 * one can be a regression (the valid runs said so) or invalid, never a pass.
 */
import type { FigureRun } from './extract.js'
import { OUT_TOK, metricKey } from './metric-keys.js'
import { median } from './stats.js'
import type { Baseline, GateOptions } from './types.js'

/** Why the candidate runs of one row cannot support a pass; empty when none. */
export function invariantProblems(
  runs: readonly FigureRun[],
  opts: Pick<GateOptions, 'failedRequestBudget' | 'maxFailedRequests'>,
): string[] {
  const problems: string[] = []
  for (const r of runs) {
    if (!r.valid) problems.push(`run ${r.repeat} invalid (${r.codes.join(', ') || 'no code given'})`)
    if (opts.maxFailedRequests !== null) {
      if (r.failed > opts.maxFailedRequests) {
        problems.push(`run ${r.repeat}: ${r.failed} requests failed (at most ${opts.maxFailedRequests} allowed)`)
      }
    } else if (r.failedShare > opts.failedRequestBudget) {
      problems.push(
        `run ${r.repeat}: ${(r.failedShare * 100).toFixed(1)} % of requests failed (budget ${(opts.failedRequestBudget * 100).toFixed(1)} %)`,
      )
    }
  }
  return problems
}

/**
 * Output tokens per request of each given point scope, baseline centre vs candidate:
 * a change means the two did different work (early stop, other tokenizer), so the
 * latencies are not comparable whatever they say.
 */
export function tokenCountProblems(
  baseline: Baseline,
  candidate: ReadonlyMap<string, FigureRun[]>,
  pointScopes: readonly string[],
  opts: Pick<GateOptions, 'tokenCountTolerance' | 'centerWindow'>,
): string[] {
  const problems: string[] = []
  for (const scope of pointScopes) {
    const key = metricKey(OUT_TOK, scope)
    const hist = baseline.refreshes.map((r) => r.runs[key] ?? []).filter((v) => v.length > 0)
    const cand = (candidate.get(key) ?? []).flatMap((r) => (r.value === null ? [] : [r.value]))
    if (hist.length === 0 || cand.length === 0) continue
    const b = median(hist.slice(-Math.max(1, opts.centerWindow)).map((v) => median(v)))
    const c = median(cand)
    if (b > 0 && Math.abs(c / b - 1) > opts.tokenCountTolerance) {
      problems.push(`${scope}: output tokens per request changed from ${fmt(b)} to ${fmt(c)}`)
    }
  }
  return problems
}

function fmt(x: number): string {
  return Number.isInteger(x) ? String(x) : x.toFixed(1)
}
