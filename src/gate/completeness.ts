/**
 * Incomplete candidates (blame `incomplete`, see invariants.ts): fewer runs than
 * planned, and throughput-at-target curves cut short. Pure.
 */
import type { PointResult, ResultFile } from '../types.js'
import { expectedConcurrency } from './bracket.js'
import type { FigureRun } from './extract.js'
import type { Problem } from './invariants.js'
import { KIND_INFO, metricKey, pointScope, shapeLabel } from './metric-keys.js'
import { curveRepeats, pointRepeats, wholeCurveRounds } from './escalate.js'
import type { Baseline, MetricKind } from './types.js'

/** Repeats the candidate planned per point (its recorded config), when known. */
export function plannedRepeats(candidate: ResultFile): number | null {
  const r = candidate.config['repeats']
  return typeof r === 'number' && Number.isInteger(r) && r > 0 ? r : null
}

/**
 * Repeats the candidate planned for one row: an escalating job records the rounds each point was
 * planned for and the rounds each shape's throughput row was (./escalate.ts; a file that recorded
 * only the points planned a curve for the rounds every one of its points was); otherwise the
 * candidate's repeats.
 */
export function plannedFor(candidate: ResultFile, kind: MetricKind, scope: string): number | null {
  const all = plannedRepeats(candidate)
  const per = pointRepeats(candidate)
  if (per === null) return all
  if (!KIND_INFO[kind].perShape) return per[scope] ?? all
  const curve = curveRepeats(candidate)?.[scope]
  if (curve !== undefined) return curve
  const mine = candidate.points.filter((p) => shapeLabel(p.input_len, p.output_len) === scope).map((p) => per[pointScope(p)] ?? all ?? 0)
  return mine.length > 0 ? Math.min(...mine) : all
}

/** Runs (valid or not) the newest refresh had for a key: its stored values and the runs it left out. */
function refreshRuns(baseline: Baseline, key: string, scope: string): number {
  const newest = baseline.refreshes.at(-1)
  if (!newest) return 0
  return (newest.runs[key]?.length ?? 0) + newest.invalid.filter((i) => i.scope === scope).length
}

/**
 * Incomplete candidates: fewer runs than planned, and for throughput at target a repeat whose curve
 * lacks points of the gated sweep. Planned is the candidate's own repeats, or the baseline's runs
 * per refresh, whichever is more, for the one-look comparison (whose spread comes from the runs);
 * a sequential verdict (`ownPlan`) holds the candidate to its own plan alone, since its steps
 * measure one run per point per engine start whatever a refresh measured.
 */
export function completenessProblems(
  baseline: Baseline,
  candidate: ResultFile,
  kind: MetricKind,
  scope: string,
  runs: readonly FigureRun[],
  planned: number | null,
  cut: ReadonlyMap<number, Array<number | 'inf'>>,
  ownPlan = false,
): Problem[] {
  const problems: Problem[] = []
  const fromBaseline = refreshRuns(baseline, metricKey(kind, scope), scope)
  const expected = ownPlan && planned !== null ? planned : Math.max(planned ?? 0, fromBaseline)
  const why = (planned ?? 0) >= expected ? `the ${planned} repeats it planned` : `the baseline's ${fromBaseline} runs per refresh`
  if (!KIND_INFO[kind].perShape) {
    if (runs.length > 0 && runs.length < expected) {
      problems.push({ blame: 'incomplete', text: `${scope}: the candidate has ${runs.length} of ${why}` })
    }
    return problems
  }
  const shapePoints = candidate.points.filter((p) => shapeLabel(p.input_len, p.output_len) === scope)
  // An escalating job measured the curve (whole, then around its crossing) only in the rounds its throughput row was open.
  const curve = pointRepeats(candidate) === null ? Infinity : (planned ?? Infinity)
  const repeats = [...new Set(shapePoints.flatMap((p) => p.runs.map((r) => r.repeat)))].filter((r) => r <= curve).sort((a, b) => a - b)
  if (repeats.length > 0 && repeats.length < expected) {
    problems.push({ blame: 'incomplete', text: `${scope}: the candidate has ${repeats.length} of ${why}` })
  }
  const { xs, name } = curveAxis(baseline, candidate, scope)
  // Rounds after the whole curve measured only the points around its crossing: a run whose crossing
  // left them gives no increment, which is no one's fault unless the row is left short of them.
  const whole = wholeCurveRounds(candidate, scope)
  const left: number[] = []
  for (const rep of repeats) {
    const have = cut.get(rep)
    const spoiled = shapePoints.some((p) => p.runs.some((r) => r.repeat === rep && !r.validity.valid))
    if (have === undefined && rep > whole && !spoiled && !runs.some((r) => r.repeat === rep)) {
      left.push(rep)
    } else if (have !== undefined) {
      problems.push({ blame: 'incomplete', text: `repeat ${rep}: the curve stopped early (measured ${name}=${have.join(', ') || 'none'} of ${xs.join(', ')})` })
    } else if (!runs.some((r) => r.repeat === rep)) {
      // Name why, as a point's row names its invalid runs: a busy host's codes are the cause a reader needs.
      const codes = [
        ...new Set(
          shapePoints.flatMap((p) => p.runs.filter((r) => r.repeat === rep && !r.validity.valid).flatMap((r) => r.validity.issues.map((i) => i.code))),
        ),
      ]
      const because = codes.length > 0 ? ` (its runs were invalid: ${codes.join(', ')})` : ''
      problems.push({
        blame: 'unmeasured',
        text: `repeat ${rep}: no valid point to draw the curve through${because}, so no throughput at target`,
        ...(codes.length > 0 ? { codes } : {}),
      })
    }
  }
  const valid = runs.filter((r) => r.valid).length
  if (left.length > 0 && valid < Math.max(1, Math.ceil((2 / 3) * expected))) {
    problems.push({
      blame: 'incomplete',
      text: `repeat ${left.join(', ')}: the crossing left the points measured around it, so ${valid} of ${why} drew a figure; the whole curve would be needed to measure it`,
    })
  }
  return problems
}

/**
 * The points a shape's curve runs through: the baseline's request rates for an open-loop sweep,
 * else its concurrencies (a bracketed candidate: those it planned), and how to read a point's.
 */
function curveAxis(
  baseline: Baseline,
  candidate: ResultFile,
  shape: string,
): { xs: Array<number | 'inf'>; name: string; of(p: PointResult): number | 'inf' | undefined } {
  const rates = baseline.profile.request_rates
  if (rates !== undefined) return { xs: rates, name: 'rate', of: (p) => p.request_rate }
  return { xs: expectedConcurrency(baseline, candidate, shape), name: 'c', of: (p) => p.concurrency }
}

/** Repeats of a shape whose curve lacks some of the baseline's points (concurrencies or rates) → the points it has. */
export function cutRepeats(baseline: Baseline, candidate: ResultFile, shape: string): Map<number, Array<number | 'inf'>> {
  const shapePoints = candidate.points.filter((p) => shapeLabel(p.input_len, p.output_len) === shape)
  // Rounds of an escalating job that measured part of the curve on purpose are not cut: each kept only the runs whose crossing they measured.
  const whole = wholeCurveRounds(candidate, shape)
  const repeats = new Set(shapePoints.flatMap((p) => p.runs.map((r) => r.repeat)).filter((r) => r <= whole))
  const axis = curveAxis(baseline, candidate, shape)
  const out = new Map<number, Array<number | 'inf'>>()
  for (const rep of repeats) {
    const have = axis.xs.filter((x) => shapePoints.some((p) => axis.of(p) === x && p.runs.some((r) => r.repeat === rep)))
    if (have.length < axis.xs.length) out.set(rep, have)
  }
  return out
}
