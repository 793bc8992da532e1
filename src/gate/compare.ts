/** Compare a candidate result with a stored baseline and reach a verdict (pure). */
import type { ResultFile } from '../types.js'
import { decideMetric, type Decision } from './decide.js'
import { diffEnv } from './env-diff.js'
import { extractFigures, type FigureRun } from './extract.js'
import { invariantProblems, tokenCountProblems } from './invariants.js'
import { KIND_INFO, METRIC_KINDS, humanLabel, metricKey, parseMetricKey, pointLabel, shapeLabel } from './metric-keys.js'
import { resolveGateOptions, toleranceFor } from './options.js'
import type { Baseline, GateOptions, GateRow, MetricKind, RowStatus, Verdict, VerdictKind } from './types.js'

const pct = (logValue: number | null): number | null => (logValue === null ? null : (Math.exp(logValue) - 1) * 100)

/** A log-scale change in the worse direction as the % change of the metric itself (a fall, for throughputs). */
const worsePct = (logValue: number | null, higherIsBetter: boolean): number | null =>
  logValue === null ? null : (higherIsBetter ? 1 - Math.exp(-logValue) : Math.exp(logValue) - 1) * 100

/** Scopes (point or shape labels) a metric kind is measured at in the baseline's profile. */
function scopesOf(baseline: Baseline, kind: MetricKind): string[] {
  const { shapes, concurrency } = baseline.profile
  if (KIND_INFO[kind].perShape) return shapes.map((s) => shapeLabel(s.input_len, s.output_len))
  return shapes.flatMap((s) => concurrency.map((c) => pointLabel(s.input_len, s.output_len, c)))
}

/** Verdict for `candidate` against `baseline`; see docs/gate.md for the rule and its constants. */
export function compareToBaseline(baseline: Baseline, candidate: ResultFile, options: Partial<GateOptions> = {}): Verdict {
  const opts = resolveGateOptions(baseline, options)
  const reasons: string[] = []
  const incomparable: string[] = []
  const newest = baseline.refreshes.at(-1)
  const env = newest ? diffEnv(newest.env, candidate.env) : { changes: [], incomparable: [] }
  incomparable.push(...env.incomparable)
  const bt = baseline.target
  const ct = candidate.target
  if (bt.metric !== ct.metric || bt.percentile !== ct.percentile || bt.threshold_ms !== ct.threshold_ms) {
    incomparable.push(
      `interactivity target differs: baseline ${bt.metric} p${bt.percentile} ≤ ${bt.threshold_ms} ms, candidate ${ct.metric} p${ct.percentile} ≤ ${ct.threshold_ms} ms`,
    )
  }
  if (baseline.refreshes.length === 0) reasons.push(`baseline ${baseline.name} has no refreshes yet`)

  const figures = extractFigures(candidate)
  const rows: GateRow[] = []
  const extraRepeats: number[] = []
  let unresolvable = 0
  for (const kind of METRIC_KINDS) {
    const gated = opts.gated.includes(kind)
    for (const scope of scopesOf(baseline, kind)) {
      const key = metricKey(kind, scope)
      const runs = figures.get(key) ?? []
      const decision = decideMetric(
        {
          history: baseline.refreshes.map((r) => r.runs[key] ?? []),
          candidate: runs.flatMap((r) => (r.valid && r.value !== null ? [r.value] : [])),
          higherIsBetter: KIND_INFO[kind].higherIsBetter,
          tolerance: toleranceFor(opts, kind),
        },
        opts,
      )
      const problems = [...invariantProblems(runs, opts), ...tokenCountProblems(baseline, figures, pointScopesFor(baseline, kind, scope), opts)]
      const row = toRow(key, kind, gated, decision, runs, problems)
      rows.push(row)
      if (gated && row.status === 'inconclusive') {
        if (decision.extraRepeats === null) unresolvable++
        else extraRepeats.push(decision.extraRepeats)
      }
    }
  }
  const extra = extraPoints(baseline, figures)
  if (extra.length > 0) incomparable.push(`candidate measured points outside the baseline's gated sweep: ${extra.join(', ')}`)

  const gatedRows = rows.filter((r) => r.gated)
  const regressed = gatedRows.filter((r) => r.status === 'regression')
  const undecided = gatedRows.filter((r) => r.status === 'inconclusive' || r.status === 'missing' || r.status === 'invalid')
  let verdict: VerdictKind
  if (incomparable.length > 0) verdict = 'not_comparable'
  else if (regressed.length > 0) verdict = 'regression'
  else if (undecided.length > 0) verdict = 'inconclusive'
  else verdict = 'pass'

  if (verdict === 'not_comparable') reasons.unshift(...incomparable.map((r) => `not comparable: ${r}`))
  // Rows keep their statuses, but on incomparable hardware no regression is claimed.
  const claimed = verdict === 'regression' ? regressed : []
  for (const r of claimed) reasons.push(`${r.label}: ${describeChange(r)}, beyond the bar of ${r.higher_is_better ? '−' : '+'}${(r.bar_pct ?? 0).toFixed(1)} %`)
  for (const r of undecided) reasons.push(`${r.label}: ${r.status}${r.notes.length > 0 ? ` — ${r.notes.join('; ')}` : ''}`)
  let confirm: Verdict['confirm'] = null
  if (verdict === 'inconclusive' && extraRepeats.length > 0) {
    confirm = { extraRepeats: Math.max(...extraRepeats) }
    reasons.push(`${confirm.extraRepeats} more repeat${confirm.extraRepeats === 1 ? '' : 's'} of the gated sweep would likely settle it; decide over all runs`)
  }
  if (verdict === 'inconclusive' && unresolvable > 0) {
    reasons.push(`${unresolvable} inconclusive row${unresolvable === 1 ? '' : 's'} would not settle within ${opts.maxRepeats} runs per point`)
  }
  return { verdict, rows, envChanges: env.changes, reasons, regressions: claimed.map((r) => r.label), confirm }
}

/** Point scopes whose output-token counts a row depends on (a shape row depends on all its points). */
function pointScopesFor(baseline: Baseline, kind: MetricKind, scope: string): string[] {
  if (!KIND_INFO[kind].perShape) return [scope]
  return baseline.profile.concurrency.map((c) => `${scope}@c${c}`)
}

function toRow(key: string, kind: MetricKind, gated: boolean, d: Decision, runs: readonly FigureRun[], problems: string[]): GateRow {
  const scope = parseMetricKey(key)?.scope ?? key
  let status: RowStatus = d.status
  const notes = [...d.notes]
  if (runs.length === 0) {
    status = 'missing'
    notes.splice(0, notes.length, 'candidate has no runs for this point')
  } else if (problems.length > 0) {
    notes.push(...problems)
    // Valid runs that already show a regression keep it: the broken runs cannot undo it.
    if (status !== 'regression' && d.baseline !== null) status = 'invalid'
  }
  const delta = d.baseline !== null && d.candidate !== null && d.baseline > 0 ? (d.candidate / d.baseline - 1) * 100 : null
  return {
    key,
    kind,
    label: humanLabel(kind, scope),
    unit: KIND_INFO[kind].unit,
    higher_is_better: KIND_INFO[kind].higherIsBetter,
    gated,
    baseline: d.baseline,
    candidate: d.candidate,
    delta_pct: delta,
    bar_pct: worsePct(d.bar, KIND_INFO[kind].higherIsBetter),
    sigma_pct: pct(d.sigma),
    n_baseline: d.nBaseline,
    n_candidate: d.nCandidate,
    history: d.history,
    mdc_pct: worsePct(d.mdc, KIND_INFO[kind].higherIsBetter),
    status,
    notes,
  }
}

function describeChange(r: GateRow): string {
  if (r.delta_pct === null) return 'change'
  return `${r.delta_pct >= 0 ? '+' : '−'}${Math.abs(r.delta_pct).toFixed(1)} %`
}

/** Scopes the candidate measured that the baseline's profile does not have: a different sweep, not a subset. */
function extraPoints(baseline: Baseline, figures: ReadonlyMap<string, FigureRun[]>): string[] {
  const known = new Set(METRIC_KINDS.flatMap((k) => scopesOf(baseline, k)))
  const extra = new Set<string>()
  for (const key of figures.keys()) {
    const parsed = parseMetricKey(key)
    if (parsed && !known.has(parsed.scope)) extra.add(parsed.scope)
  }
  return [...extra]
}
