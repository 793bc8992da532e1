/** Compare a candidate result with a stored baseline and reach a verdict by blame (pure). */
import type { EnvRecord, ResultFile } from '../types.js'
import { CHECKS_NOT_RUN } from '../analysis/unchecked.js'
import { decideMetric, type Decision } from './decide.js'
import { diffEnv } from './env-diff.js'
import { bracketMisses, bracketWithinBaseline, expectedConcurrency } from './bracket.js'
import { extractFigures, gateAtTarget, type FigureRun } from './extract.js'
import { refreshesOnHost } from './host-history.js'
import { diffFingerprint, resultFingerprint, tokensPerChunkChanges } from './fingerprint.js'
import { completenessProblems, cutRepeats, plannedFor } from './completeness.js'
import { pointRepeats } from './escalate.js'
import { runProblems, serverExitProblem, tokenCountProblems, type Problem } from './invariants.js'
import { ITL_TOK, KIND_INFO, METRIC_KINDS, humanLabel, metricKey, parseMetricKey, pointLabel, pointScope, shapeLabel } from './metric-keys.js'
import { designFor, resolveGateOptions, toleranceFor } from './options.js'
import { mdcLimit, rowLevel } from './decide.js'
import { hostChangeCause, hostChanges, unseenHostNote } from './host-change.js'
import type { Baseline, GateOptions, GateRow, MetricKind, RowStatus, Verdict, VerdictKind } from './types.js'
import { enoughValidRuns, unmeasuredCause } from './unmeasured.js'

const pct = (logValue: number | null): number | null => (logValue === null ? null : (Math.exp(logValue) - 1) * 100)

/** A log-scale change in the worse direction as the % change of the metric itself (a fall, for throughputs). */
const worsePct = (logValue: number | null, higherIsBetter: boolean): number | null =>
  logValue === null ? null : (higherIsBetter ? 1 - Math.exp(-logValue) : Math.exp(logValue) - 1) * 100

/**
 * Scopes (point or shape labels) a metric kind is measured at in the baseline's profile; with a
 * bracketed `candidate`, only the points of it that the candidate planned (gate/bracket.ts).
 */
function scopesOf(baseline: Baseline, kind: MetricKind, candidate?: ResultFile): string[] {
  const { shapes, concurrency, request_rates: rates } = baseline.profile
  if (KIND_INFO[kind].perShape) return shapes.map((s) => shapeLabel(s.input_len, s.output_len))
  // An open-loop sweep's points are its rates.
  if (rates !== undefined)
    return shapes.flatMap((s) => rates.map((r) => pointScope({ input_len: s.input_len, output_len: s.output_len, concurrency: 0, request_rate: r })))
  return shapes.flatMap((s) => {
    const concs = candidate ? expectedConcurrency(baseline, candidate, shapeLabel(s.input_len, s.output_len)) : concurrency
    return concs.map((c) => pointLabel(s.input_len, s.output_len, c))
  })
}

/**
 * Decides one metric from the candidate's usable runs (valid, in no cut repeat) in place of
 * the baseline history's rule: `servegate ab` pairs them with the reference's (./paired.ts).
 */
export type MetricDecider = (
  dataKey: string,
  candidateRuns: FigureRun[],
  info: { higherIsBetter: boolean; tolerance: number; design: number },
  opts: GateOptions,
) => Decision

/**
 * Verdict for `candidate` against `baseline`; see docs/gate.md for the rule, the blame table and the precedence.
 * `decider` replaces the one-look rule (the sequential rows: ./paired.ts, ./seq-baseline.ts); `stored`
 * says the figures are judged against the stored baseline, so a host change since it is named.
 */
export function compareToBaseline(
  baseline: Baseline,
  candidate: ResultFile,
  options: Partial<GateOptions> = {},
  decider?: MetricDecider,
  stored = decider === undefined,
): Verdict {
  const opts = resolveGateOptions(baseline, options)
  const reasons: string[] = []
  const incomparable: string[] = []
  const newest = baseline.refreshes.at(-1)
  const candFp = resultFingerprint(candidate)
  const env = newest ? diffEnv(newest.env, candidate.env, { baseline: newest.fingerprint, candidate: candFp }) : { changes: [], incomparable: [] }
  incomparable.push(...env.incomparable)
  const bt = baseline.target
  const ct = candidate.target
  if (bt.metric !== ct.metric || bt.percentile !== ct.percentile || bt.threshold_ms !== ct.threshold_ms) {
    incomparable.push(
      `interactivity target differs: baseline ${bt.metric} p${bt.percentile} ≤ ${bt.threshold_ms} ms, candidate ${ct.metric} p${ct.percentile} ≤ ${ct.threshold_ms} ms`,
    )
  }
  // A bracketed candidate planned fewer concurrencies, all of them the baseline's: the same sweep,
  // narrowed; a planned point the baseline lacks still makes it another sweep.
  const narrowed = bracketWithinBaseline(baseline, candidate)
  // The target was compared above, also for baselines stored before fingerprints.
  for (const d of newest?.fingerprint ? diffFingerprint(newest.fingerprint, candFp) : []) {
    if (d.field === 'concurrency' && narrowed) continue
    if (d.field !== 'target') incomparable.push(`measurement settings differ: ${d.field}: baseline ${d.baseline}, candidate ${d.candidate}`)
  }
  const perToken = tokensPerChunkChanges(newest?.fingerprint, candFp)
  // Causes on the baseline's side of an unmeasured row (the candidate's come from its runs' codes).
  const baselineCauses: string[] = []
  if (baseline.refreshes.length === 0)
    baselineCauses.push(`baseline ${baseline.name} has no refreshes: nothing was measured to compare with; refresh it on this host`)
  // The spread comes from the candidate's host only; none there leaves every row without baseline data (never a pass).
  const onHost = refreshesOnHost(baseline.refreshes, candidate.env, baseline.name)
  if (onHost.note !== null && onHost.refreshes.length > 0) reasons.push(onHost.note)
  const unseen = newest ? unseenHostNote(newest.env, candidate.env) : null
  if (unseen !== null) reasons.push(unseen)

  const figures = extractFigures(candidate, opts)
  const atTargetRuns = new Map(gateAtTarget(candidate, opts).map((sh) => [shapeLabel(sh.input_len, sh.output_len), sh.runs]))
  // A dead server marks the rows of the run it cut (all unmeasured rows when it died between runs).
  const died = serverExitProblem(candidate)
  const cutRun = candidate.interrupted?.cut_run ?? null
  const cutScopes =
    cutRun === null ? null : new Set([shapeLabel(cutRun.input_len, cutRun.output_len), pointLabel(cutRun.input_len, cutRun.output_len, cutRun.concurrency)])
  const rows: GateRow[] = []
  const extraRepeats: number[] = []
  let unresolvable = 0
  const unmeasuredProblems: Problem[] = []
  /** Gated rows unmeasured for too few usable runs that no validity code explains. */
  const shortfalls: string[] = []
  // Every row first: each gated row's false-alarm level is the PR's alpha split over all of them.
  const planRows: Array<{ kind: MetricKind; gated: boolean; scope: string; rowKey: string; dataKey: string; perToken: boolean }> = []
  for (const kind of METRIC_KINDS) {
    const gated = opts.gated.includes(kind)
    for (const scope of scopesOf(baseline, kind, candidate)) {
      const key = metricKey(kind, scope)
      // Chunks carrying another number of tokens than the baseline's: the chunk gaps and the
      // per-token gaps are both measurement results now, so both are gated (a change of output
      // batching is never a silent switch from one figure to the other).
      const tpc = kind === 'itl_p95' ? perToken.get(scope) : undefined
      const variants = [{ rowKey: key, dataKey: key, perToken: false }]
      if (tpc) variants.push({ rowKey: metricKey(ITL_TOK, scope), dataKey: metricKey(ITL_TOK, scope), perToken: true })
      for (const v of variants) {
        // A reported figure neither side measured (goodput without SLOs) is no row; a gated one missing is (it fails closed).
        if (!gated && (figures.get(v.dataKey) ?? []).length === 0 && baseline.refreshes.every((r) => r.runs[v.dataKey] === undefined)) continue
        planRows.push({ kind, gated, scope, ...v })
      }
    }
  }
  const escalated = pointRepeats(candidate) !== null
  const rowOpts: GateOptions = { ...opts, rows: Math.max(1, planRows.filter((r) => r.gated).length) }
  for (const { kind, gated, scope, rowKey, dataKey, perToken: isPerToken } of planRows) {
    const tpc = kind === 'itl_p95' ? perToken.get(scope) : undefined
    // What the candidate planned for this row: its repeats, or the rounds an escalating A/B kept the row's points for.
    const planned = plannedFor(candidate, kind, scope)
    const runs = (figures.get(dataKey) ?? []).filter((r) => !escalated || planned === null || r.repeat <= planned)
    // A repeat whose curve lacks points of the sweep has a throughput at target drawn
    // through the wrong bracket: it enters no statistics (the row says incomplete).
    const cut = KIND_INFO[kind].perShape ? cutRepeats(baseline, candidate, scope) : new Map<number, Array<number | 'inf'>>()
    // A bracketed repeat whose crossing left the bracket has a figure the full sweep would not have drawn.
    const validRepeats = new Set(runs.filter((r) => r.valid).map((r) => r.repeat))
    const missed = KIND_INFO[kind].perShape
      ? new Map([...bracketMisses(candidate, scope, atTargetRuns.get(scope) ?? [])].filter(([rep]) => validRepeats.has(rep) && !cut.has(rep)))
      : new Map<number, Problem>()
    const usable = runs.filter((r) => r.valid && r.value !== null && !cut.has(r.repeat) && !missed.has(r.repeat))
    const info = { higherIsBetter: KIND_INFO[kind].higherIsBetter, tolerance: toleranceFor(opts, kind) }
    const decision = decider
      ? decider(dataKey, usable, { ...info, design: designFor(opts, kind) }, rowOpts)
      : decideMetric({ history: onHost.refreshes.map((r) => r.runs[dataKey] ?? []), candidate: usable.map((r) => r.value as number), ...info }, rowOpts)
    const { problems, notes } = runProblems(runs, opts)
    problems.push(...tokenCountProblems(baseline, figures, pointScopesFor(baseline, kind, scope), opts))
    problems.push(...completenessProblems(baseline, candidate, kind, scope, runs, planned, cut, decider !== undefined))
    problems.push(...missed.values())
    if (died !== null && (cutScopes === null ? runs.length === 0 : cutScopes.has(scope))) problems.push(died)
    if (isPerToken && tpc) {
      notes.unshift(
        `tokens per chunk changed from ${tpc.baseline.toFixed(1)} to ${tpc.candidate.toFixed(1)} (speculative decoding?): p95 ITL per token (each gap over its request's mean tokens per chunk), gated beside the chunk gaps`,
      )
    } else if (tpc) {
      notes.unshift(
        `tokens per chunk changed from ${tpc.baseline.toFixed(1)} to ${tpc.candidate.toFixed(1)}: the gaps between chunks are gated as measured, and per token in the row beside`,
      )
    }
    // Measured means enough valid runs on both sides: at least two, and two thirds of those planned.
    // A paired decision counts pairs on the reference's side, held to the same rule as the candidate's runs.
    // A sequential row (a decider) needs one increment: each carries the host's design noise.
    const measured =
      decider !== undefined
        ? enoughValidRuns(usable.length, planned, 1) && enoughValidRuns(decision.nBaseline, decision.baselinePlanned ?? planned, 1)
        : enoughValidRuns(usable.length, planned) && decision.nBaseline >= 2
    const row: GateRow = { ...toRow(rowKey, kind, gated, decision, runs, problems, notes, isPerToken, measured), tolerance_pct: info.tolerance * 100 }
    // A row unmeasured for too few usable runs, where no validity code says why (a repeat whose curve
    // gave no figure at the target, say), names the shortfall first: its decision's note alone would
    // read as a verdict the runs could not support.
    if (gated && row.status === 'unmeasured' && decision.status !== 'missing' && !measured && problems.every((p) => (p.codes ?? []).length === 0)) {
      const min = decider !== undefined ? 1 : 2
      const basePlanned = decision.baselinePlanned ?? planned
      // The refreshes keep why their runs were left out: a baseline short of runs names that cause too.
      const spoiledBy = [...new Set(onHost.refreshes.flatMap((r) => r.invalid.filter((i) => i.scope === scope).flatMap((i) => i.codes)))]
      const short = !enoughValidRuns(usable.length, planned, min)
        ? `the candidate has ${usable.length} usable run${usable.length === 1 ? '' : 's'}${planned === null ? '' : ` of the ${planned} planned`}`
        : `the baseline has ${decision.nBaseline} usable run${decision.nBaseline === 1 ? '' : 's'}${basePlanned === null ? '' : ` of the ${basePlanned} its refreshes planned`}${spoiledBy.length > 0 ? ` (the others were invalid: ${spoiledBy.join(', ')}; refresh it)` : ''}`
      const shortfall = `${short}, and a measured row needs at least ${min} and two thirds of those planned`
      row.notes.unshift(shortfall)
      shortfalls.push(`${row.label}: ${shortfall}`)
    }
    rows.push(row)
    if (gated && (row.status === 'invalid' || row.status === 'unmeasured')) {
      unmeasuredProblems.push(...problems)
      if (decision.nBaseline < 2 && baseline.refreshes.length > 0 && stored) {
        // The refreshes keep why their runs were left out: name that cause (a busy host on refresh day) too.
        const spoiledBy = [...new Set(onHost.refreshes.flatMap((r) => r.invalid.filter((i) => i.scope === scope).flatMap((i) => i.codes)))]
        if (onHost.refreshes.length === 0 && onHost.note !== null) baselineCauses.push(onHost.note)
        else if (spoiledBy.length > 0) {
          baselineCauses.push(
            `the baseline has ${decision.nBaseline} valid run${decision.nBaseline === 1 ? '' : 's'} for ${row.label}: its refreshes' runs were invalid (${spoiledBy.join(', ')}); refresh it`,
          )
          unmeasuredProblems.push({ blame: 'unmeasured', text: `baseline runs invalid (${spoiledBy.join(', ')})`, codes: spoiledBy })
        } else
          baselineCauses.push(
            `the baseline has ${decision.nBaseline} valid run${decision.nBaseline === 1 ? '' : 's'} for ${row.label} (a foreign or spoiled baseline; refresh it)`,
          )
      }
    }
    if (gated && row.status === 'undecided') {
      if (decision.extraRepeats === null) unresolvable++
      else extraRepeats.push(decision.extraRepeats)
    }
  }
  if (perToken.size > 0 && opts.gated.includes('itl_p95')) {
    const where = [...perToken.entries()].map(([sc, t]) => `${sc} (${t.baseline.toFixed(1)} → ${t.candidate.toFixed(1)})`)
    reasons.push(
      `tokens per chunk changed at ${where.join(', ')}: a change of output chunking is a measurement change, so p95 ITL is gated both between chunks and per token there`,
    )
  }
  const extra = extraPoints(baseline, figures)
  if (extra.length > 0) incomparable.push(`candidate measured points outside the baseline's gated sweep: ${extra.join(', ')}`)

  const gatedRows = rows.filter((r) => r.gated)
  // A broken or incomplete run is the candidate's, whichever metric shows it; the statistics count on gated rows only.
  const any = (list: readonly GateRow[], ...s: RowStatus[]): GateRow[] => list.filter((r) => s.includes(r.status))
  const regressed = any(gatedRows, 'regression')
  let verdict: VerdictKind
  if (incomparable.length > 0) verdict = 'not_comparable'
  else if (any(rows, 'broken').length > 0 || died !== null) verdict = 'broken'
  else if (regressed.length > 0) verdict = 'regression'
  else if (any(rows, 'missing', 'incomplete').length > 0) verdict = 'incomplete'
  // Nothing gated is nothing measured: a pass needs at least one gated metric decided.
  else if (any(gatedRows, 'unmeasured', 'invalid').length > 0 || gatedRows.length === 0) verdict = 'unmeasured'
  else if (any(gatedRows, 'undecided').length > 0) verdict = 'undecided'
  else if (any(gatedRows, 'improvement').length > 0) verdict = 'improvement'
  else verdict = 'pass'

  if (verdict === 'not_comparable') reasons.unshift(...incomparable.map((r) => `not comparable: ${r}`))
  if (verdict === 'broken' && died !== null) reasons.unshift(died.text)
  // Rows keep their statuses, but on incomparable hardware no regression is claimed.
  const claimed = verdict === 'regression' ? regressed : []
  for (const r of claimed) reasons.push(`${r.label}: ${describeChange(r)}, beyond the bar of ${r.higher_is_better ? '−' : '+'}${(r.bar_pct ?? 0).toFixed(1)} %`)
  if (verdict === 'unmeasured') {
    const cause =
      gatedRows.length === 0
        ? 'no gated metric had a row: nothing was measured that could pass'
        : unmeasuredCause(unmeasuredProblems, [...new Set(baselineCauses), ...shortfalls])
    reasons.unshift(`unmeasured: ${cause}`)
  }
  const blocking: RowStatus[] = ['broken', 'missing', 'incomplete', 'invalid', 'unmeasured', 'undecided']
  const explain = any(gatedRows, ...blocking)
  // Reported rows explain only a blame no gated row shows (a gate that left ITL out).
  for (const r of any(
    rows.filter((x) => !x.gated),
    'broken',
    'missing',
    'incomplete',
  )) {
    if (!explain.some((g) => g.status === r.status)) explain.push(r)
  }
  for (const r of explain) reasons.push(`${r.label}: ${r.status}${r.notes.length > 0 ? ` — ${r.notes.join('; ')}` : ''}`)
  // A gated row the baseline left unmeasured says why under any verdict (an unmeasured one names it
  // first, above): a regression on another row must not hide that the baseline needs a refresh.
  if (verdict !== 'unmeasured') reasons.push(...new Set(baselineCauses))
  const unverified = uncheckedReason(candidate)
  if (unverified !== null) reasons.push(unverified)
  let confirm: Verdict['confirm'] = null
  if (verdict === 'undecided' && extraRepeats.length > 0) {
    confirm = { extraRepeats: Math.max(...extraRepeats) }
    reasons.push(`${confirm.extraRepeats} more repeat${confirm.extraRepeats === 1 ? '' : 's'} of the gated sweep would likely settle it; decide over all runs`)
  }
  if (verdict === 'undecided' && unresolvable > 0 && decider === undefined) {
    reasons.push(`${unresolvable} undecided row${unresolvable === 1 ? '' : 's'} would not settle within ${opts.maxRepeats} runs per point`)
  }
  // The gate could not have seen a regression of the size it promises on these rows.
  const blind = any(gatedRows, 'undecided').filter((r) => r.blind === true)
  // First, so the comment's opening lines name the blind rows and what would give the gate power.
  if (verdict === 'undecided')
    reasons.unshift(
      decider !== undefined
        ? sequentialUndecidedLine(blind, any(gatedRows, 'undecided'))
        : undecidedLine(blind, (r) => mdcLimit(opts, (r.tolerance_pct ?? opts.defaultTolerance * 100) / 100)),
    )
  const family = { rows: rowOpts.rows, alpha: opts.alpha * opts.alphaShare, rowLevel: rowLevel(rowOpts) }
  if (gatedRows.length > 0) reasons.push(familyLine(family))
  const out: Verdict = {
    verdict,
    rows,
    envChanges: env.changes,
    reasons,
    regressions: claimed.map((r) => r.label),
    confirm,
    blind: blind.map((r) => r.label),
    family,
  }
  return stored && opts.onHostChange === 'unmeasured' && newest !== undefined ? hostChangeVerdict(out, newest.env, candidate.env) : out
}

/** `judged 4 gated rows at 1 % false alarms per pull request: each row one-sided at 0.25 %` */
function familyLine(f: NonNullable<Verdict['family']>): string {
  const p = (x: number): string => `${Number((x * 100).toPrecision(2))} %`
  return `judged ${f.rows} gated row${f.rows === 1 ? '' : 's'} at ${p(f.alpha)} false alarms per pull request: each row one-sided at ${p(f.rowLevel)} (Bonferroni)`
}

/**
 * A host that changed since the baseline (another machine, or its driver, CUDA, GPU clocks, kernel;
 * or GPUs one side could not see) moves the numbers as much as a pull request can, and the stored
 * baseline cannot tell the two apart: whatever the rows
 * say, the verdict is unmeasured, never a regression charged to the PR (the rows keep their
 * statuses for the reader). A broken, incomplete or incomparable candidate keeps its verdict: those
 * are not the host's. Refreshing the baseline on this host, or a reference measured beside the
 * candidate, decides it; the scheduled watch is where the host is blamed.
 */
function hostChangeVerdict(v: Verdict, baselineEnv: EnvRecord, candidateEnv: EnvRecord): Verdict {
  const changes = hostChanges(baselineEnv, candidateEnv)
  if (changes.length === 0 || !['pass', 'improvement', 'regression', 'undecided', 'unmeasured'].includes(v.verdict)) return v
  const was = v.verdict === 'unmeasured' ? '' : ` (against it the rows read ${v.verdict}${v.regressions.length > 0 ? `: ${v.regressions.join(', ')}` : ''})`
  return {
    ...v,
    verdict: 'unmeasured',
    regressions: [],
    confirm: null,
    reasons: [
      `unmeasured: ${hostChangeCause(changes)}${was}; refresh the baseline on this host, or set gate.reference_command so the gate measures the base engine beside the PR`,
      ...v.reasons.filter((r) => !r.startsWith('unmeasured: ')),
    ],
  }
}

/** What an undecided verdict means for the check: it fails, naming the blind rows and what would give them power. */
function undecidedLine(blind: readonly GateRow[], limitOf: (row: GateRow) => number): string {
  if (blind.length === 0)
    return 'undecided: every row could see a regression of the promised size, but a change lies between the pass threshold and the bar; the check fails (more repeats or a reference command decide it)'
  // Each row's own limit: gate.max_mdc_pct (three times its tolerance unless set), or twice it on a screening look.
  const what = blind
    .map((r) => `${r.label} (MDC ${r.mdc_pct === null ? 'unknown' : `${r.mdc_pct.toFixed(1)} %`} > ${Number(limitOf(r).toFixed(2))} %)`)
    .join(', ')
  return `undecided and blind: ${what} could not have shown a regression of the size its limit promises (gate.max_mdc_pct), so the check fails; more refreshes, more repeats or a reference command give the gate power`
}

/** The first line of a sequential verdict left undecided: the blind rows, or the rows still between their boundaries. */
function sequentialUndecidedLine(blind: readonly GateRow[], open: readonly GateRow[]): string {
  if (blind.length > 0)
    return `undecided and blind: ${blind.map((r) => r.label).join(', ')} could not rule out the change ${blind.length === 1 ? 'it is' : 'they are'} designed to catch however many rounds followed (sides that are never restarted keep their start offsets); the check fails, and engine starts of both sides (serve commands) give the gate power`
  return `undecided: ${open.map((r) => r.label).join(', ')} ${open.length === 1 ? 'is' : 'are'} still between the pass and regression boundaries after the last round allowed; the check fails, and more rounds (max-rounds) decide`
}

/** Point scopes whose output-token counts a row depends on (a shape row depends on all its points). */
function pointScopesFor(baseline: Baseline, kind: MetricKind, scope: string): string[] {
  if (!KIND_INFO[kind].perShape) return [scope]
  const rates = baseline.profile.request_rates
  if (rates !== undefined) return rates.map((r) => `${scope}@rate${r}`)
  return baseline.profile.concurrency.map((c) => `${scope}@c${c}`)
}

/**
 * The row's status, by precedence: broken, then a regression the valid runs show (broken
 * runs cannot cancel it), incomplete, spoiled by host or harness (invalid), then the rule's.
 */
function rowStatus(d: Decision, runs: readonly FigureRun[], problems: readonly Problem[], measured: boolean): RowStatus {
  const blames = new Set(problems.map((p) => p.blame))
  if (runs.length === 0 && problems.length === 0) return 'missing'
  if (blames.has('broken')) return 'broken'
  // A regression stands on the valid runs, unless the host spoiled or the sweep never measured all
  // but one of them: one run is a draw, and the runs that would have confirmed or refuted it are missing.
  if (d.status === 'regression' && !((blames.has('unmeasured') || blames.has('incomplete')) && d.nCandidate < 2)) return 'regression'
  if (blames.has('incomplete')) return 'incomplete'
  // Spoiled runs leave the row unmeasured unless enough valid ones remain on both sides.
  if (blames.has('unmeasured') && !measured) return 'invalid'
  // No figure on a side (an empty or foreign baseline, no valid value), or too few valid runs: never a pass.
  if (d.status === 'missing' || !measured) return 'unmeasured'
  return d.status
}

const finiteOrNull = (x: number | null): number | null => (x !== null && Number.isFinite(x) ? x : null)

function toRow(
  key: string,
  kind: MetricKind,
  gated: boolean,
  d: Decision,
  runs: readonly FigureRun[],
  problems: readonly Problem[],
  extraNotes: readonly string[],
  perToken: boolean,
  measured: boolean,
): GateRow {
  // Row keys of the per-token ITL (itl_tok_p95@…) are no metric kind of their own: the scope follows the first '@'.
  const scope = key.includes('@') ? key.slice(key.indexOf('@') + 1) : key
  const status = rowStatus(d, runs, problems, measured)
  const notes = status === 'missing' ? ['candidate has no runs for this point'] : [...extraNotes, ...d.notes, ...problems.map((p) => p.text)]
  if (d.status === 'regression' && status !== 'regression' && status !== 'broken') {
    notes.push(`worse in its only valid run (${d.nCandidate} of ${runs.length}); not called a regression on one run`)
  }
  const delta = d.baseline !== null && d.candidate !== null && d.baseline > 0 ? (d.candidate / d.baseline - 1) * 100 : null
  return {
    key,
    kind,
    label: perToken ? humanLabel(kind, scope).replace(KIND_INFO[kind].name, `${KIND_INFO[kind].name} per token`) : humanLabel(kind, scope),
    unit: KIND_INFO[kind].unit,
    higher_is_better: KIND_INFO[kind].higherIsBetter,
    gated,
    baseline: finiteOrNull(d.baseline),
    candidate: finiteOrNull(d.candidate),
    delta_pct: finiteOrNull(delta),
    bar_pct: finiteOrNull(worsePct(d.bar, KIND_INFO[kind].higherIsBetter)),
    sigma_pct: finiteOrNull(pct(d.sigma)),
    n_baseline: d.nBaseline,
    n_candidate: d.nCandidate,
    history: d.history,
    mdc_pct: finiteOrNull(worsePct(d.mdc, KIND_INFO[kind].higherIsBetter)),
    blind: d.blind,
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

/** One line when candidate runs were imported (`checks_not_run`): the verdict rests on figures servegate could not check. */
function uncheckedReason(candidate: ResultFile): string | null {
  const runs = candidate.points.flatMap((p) => p.runs)
  const n = runs.filter((r) => r.validity.issues.some((i) => i.code === CHECKS_NOT_RUN)).length
  if (n === 0) return null
  const tool = candidate.source?.tool ?? 'another tool'
  return `${n} of ${runs.length} candidate runs were measured by ${tool} and imported: the checks that file could not support were not made (checks_not_run), so the figures are unverified`
}
