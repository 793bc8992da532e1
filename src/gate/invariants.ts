/**
 * Blame: why the candidate runs of one row cannot support a pass, and whose fault
 * that is. Hard invariants, checked without statistics. The table (docs/gate.md,
 * "Blame"):
 *
 * | cause                                                  | blame          |
 * |--------------------------------------------------------|----------------|
 * | `requests_failed` beyond the failed-request budget     | broken         |
 * | `requests_failed` within the budget                    | none: the run keeps its figures, the row notes it |
 * | a run with requests but none completed (dead server)   | broken         |
 * | `output_len_mismatch` (stopped early despite ignore_eos) | broken       |
 * | `input_len_mismatch` (served another prompt length, e.g. truncated) | broken |
 * | `token_count_mismatch` (the server's own counts disagree) | broken      |
 * | output tokens per request changed vs the baseline      | broken         |
 * | the server servegate started exited mid-sweep (`interrupted.reason: server_exited`) | broken |
 * | no candidate runs for a gated row                      | incomplete     |
 * | fewer runs than planned (config repeats, baseline's runs per refresh) | incomplete |
 * | a throughput-at-target repeat whose curve stopped early | incomplete    |
 * | `client_saturated`, `gpu_shared`, `gpu_throttled`, `ramp_dominated`, `too_few_requests`, `prefix_cache_contaminated` | unmeasured (host or harness) |
 * | other GPU model/count, target, measurement fingerprint, extra points | not_comparable (compare.ts) |
 */
import { SERVER_EXITED, type ResultFile, type ValidityCode } from '../types.js'
import type { FailedBudget, FigureRun } from './extract.js'
import { OUT_TOK, metricKey } from './metric-keys.js'
import { median } from '../util/median.js'
import type { Baseline, GateOptions } from './types.js'

export type Blame = 'not_comparable' | 'broken' | 'incomplete' | 'unmeasured'

/** One reason a row is not decided by the statistics, with its blame and its evidence. */
export interface Problem {
  blame: Blame
  text: string
  /** The validity codes behind an unmeasured run (client_saturated, …), so the advice can name the cause. */
  codes?: string[]
}

/**
 * Blame of each validity code of a candidate run. `requests_failed` is broken only
 * beyond the budget (see runProblems). `token_count_mismatch` is the server's fault:
 * every count it compares (usage, the streamed chunks, /tokenize, /metrics) comes from
 * the server, so when they disagree the server mis-accounted its own output.
 * `prefix_cache_contaminated` is the harness's: it re-sent prompts the cache held.
 */
export const CODE_BLAME: Record<ValidityCode, Exclude<Blame, 'not_comparable' | 'incomplete'>> = {
  requests_failed: 'broken',
  output_len_mismatch: 'broken',
  // A server that ignores part of the prompt did less work, just as one that stops early does.
  input_len_mismatch: 'broken',
  token_count_mismatch: 'broken',
  client_saturated: 'unmeasured',
  gpu_shared: 'unmeasured',
  gpu_throttled: 'unmeasured',
  ramp_dominated: 'unmeasured',
  too_few_requests: 'unmeasured',
  prefix_cache_contaminated: 'unmeasured',
  prompt_uncalibrated: 'unmeasured',
  // The shards' schedule (or their clocks) failed, not the engine: the harness's gap.
  shards_unaligned: 'unmeasured',
  // Never a problem on its own: gate/extract.ts accepts a run whose only issue it is (docs/validity.md).
  checks_not_run: 'unmeasured',
}

const blameOf = (code: string): Blame => CODE_BLAME[code as ValidityCode] ?? 'unmeasured'

function budgetText(opts: FailedBudget): string {
  return opts.maxFailedRequests !== null ? `at most ${opts.maxFailedRequests} allowed` : `budget ${(opts.failedRequestBudget * 100).toFixed(1)} %`
}

function failedText(r: FigureRun): string {
  return `${r.failed} request${r.failed === 1 ? '' : 's'} failed (${(r.failedShare * 100).toFixed(1)} %)`
}

/** Problems of a row's candidate runs, and notes that do not block (failures within the budget). */
export function runProblems(runs: readonly FigureRun[], opts: FailedBudget): { problems: Problem[]; notes: string[] } {
  const problems: Problem[] = []
  const notes: string[] = []
  for (const r of runs) {
    if (r.completed <= 0 && r.failed > 0) {
      problems.push({ blame: 'broken', text: `run ${r.repeat}: no request completed (${r.failed} failed): the server did not serve` })
    } else if (r.failed > 0) {
      // failedShare is the worst point's share for throughput at target, so each point is held to the budget.
      const within = opts.maxFailedRequests !== null ? r.failed <= opts.maxFailedRequests : r.failedShare <= opts.failedRequestBudget
      if (within) notes.push(`run ${r.repeat}: ${failedText(r)}, within the ${budgetText(opts)}`)
      else problems.push({ blame: 'broken', text: `run ${r.repeat}: ${failedText(r)}, beyond the ${budgetText(opts)}` })
    }
    const broken = r.codes.filter((c) => c !== 'requests_failed' && blameOf(c) === 'broken')
    if (broken.length > 0) problems.push({ blame: 'broken', text: `run ${r.repeat}: ${[...new Set(broken)].join(', ')}` })
    if (!r.valid) {
      // checks_not_run is no fault: it only says an imported run was not checked.
      const host = r.codes.filter((c) => c !== 'checks_not_run' && blameOf(c) === 'unmeasured')
      if (host.length > 0) problems.push({ blame: 'unmeasured', text: `run ${r.repeat} invalid (${[...new Set(host)].join(', ')})`, codes: [...new Set(host)] })
      else if (r.codes.length === 0) problems.push({ blame: 'unmeasured', text: `run ${r.repeat} invalid (no code given)` })
    }
  }
  return { problems, notes }
}

/**
 * Output tokens per request of each given point scope, baseline centre vs candidate:
 * a change means the two did different work (early stop, other tokenizer), so the
 * latencies are not comparable whatever they say — the candidate broke the shape.
 */
export function tokenCountProblems(
  baseline: Baseline,
  candidate: ReadonlyMap<string, FigureRun[]>,
  pointScopes: readonly string[],
  opts: Pick<GateOptions, 'tokenCountTolerance' | 'centerWindow'>,
): Problem[] {
  const problems: Problem[] = []
  for (const scope of pointScopes) {
    const key = metricKey(OUT_TOK, scope)
    const hist = baseline.refreshes.map((r) => r.runs[key] ?? []).filter((v) => v.length > 0)
    const cand = (candidate.get(key) ?? []).flatMap((r) => (r.value === null ? [] : [r.value]))
    if (hist.length === 0 || cand.length === 0) continue
    const b = median(hist.slice(-Math.max(1, opts.centerWindow)).map((v) => median(v)))
    const c = median(cand)
    if (b > 0 && Math.abs(c / b - 1) > opts.tokenCountTolerance) {
      problems.push({ blame: 'broken', text: `${scope}: output tokens per request changed from ${fmt(b)} to ${fmt(c)}` })
    }
  }
  return problems
}

function fmt(x: number): string {
  return Number.isInteger(x) ? String(x) : x.toFixed(1)
}

/**
 * The server servegate started exited while the sweep ran (`interrupted.reason:
 * server_exited`): the candidate broke, whatever its finished runs say — a dead
 * server is the clearest failure a gate can report, never "incomplete".
 */
export function serverExitProblem(candidate: ResultFile): Problem | null {
  const i = candidate.interrupted
  if (i === undefined || i.reason !== SERVER_EXITED) return null
  const how =
    i.server === undefined ? 'exited' : i.server.signal !== null ? `was killed by ${i.server.signal}` : `exited with status ${i.server.exit_code ?? 'unknown'}`
  const c = i.cut_run
  const where = c === null ? 'between runs' : `during ${c.input_len} in / ${c.output_len} out, C=${c.concurrency}, repeat ${c.repeat}`
  return { blame: 'broken', text: `the server ${how} ${where} (${i.finished_runs} of ${i.planned_runs} runs finished)` }
}
