/**
 * Escalate rows, not sweeps (pure; docs/gate.md, "Escalate rows, not
 * sweeps"). Each gated row is its own sequential test, and a row that has
 * crossed a boundary is decided for good: later increments would not change
 * it (the test stops at the first crossing). So after each look an A/B job
 * measures only the points whose rows are still open:
 * - a per-point row (p95 ITL, …) needs its own point;
 * - a per-shape row (throughput at target) needs its shape's whole curve,
 *   since the crossing is drawn through the curve's points;
 * - a row that is blind (no round could decide it) needs nothing more.
 * Rows the host spoiled so far stay open: a later round may measure them.
 *
 * The side files record what each point was planned for, `config.point_repeats`
 * (point scope → rounds), so a point left out of later rounds is complete with
 * the rounds it was planned for, and a shape's throughput at target counts only
 * the rounds that measured its whole curve (./completeness.ts).
 */
import type { ResultFile } from '../types.js'
import { fingerprintOf } from './fingerprint.js'
import { mergeResults } from './merge.js'
import { KIND_INFO, parseMetricKey, pointScope, shapeLabel } from './metric-keys.js'
import type { Verdict } from './types.js'

/** Row statuses a later round cannot change. */
const DECIDED = new Set(['pass', 'improvement', 'regression'])

/** Whether a gated row needs more rounds: not decided, and not blind. */
function open(row: Verdict['rows'][number]): boolean {
  if (DECIDED.has(row.status)) return false
  return !(row.status === 'undecided' && row.blind === true)
}

/**
 * The point scopes (`64x16@c16`) the next round must measure after a look whose verdict is `v`:
 * the points of its open gated rows. `result` is a side's file so far (its points name the curve
 * of each shape).
 */
export function openPoints(v: Verdict, result: Pick<ResultFile, 'points'>): Set<string> {
  const need = new Set<string>()
  for (const row of v.rows) {
    if (!row.gated || !open(row)) continue
    const key = parseMetricKey(row.key)
    const kind = key?.kind
    const scope = key?.scope ?? row.key.slice(row.key.indexOf('@') + 1)
    if (kind !== undefined && KIND_INFO[kind].perShape) {
      for (const p of result.points) if (shapeLabel(p.input_len, p.output_len) === scope) need.add(pointScope(p))
    } else {
      need.add(scope)
    }
  }
  return need
}

/** The rounds each point was planned for, as recorded (`config.point_repeats`); null where every point planned `repeats`. */
export function pointRepeats(r: Pick<ResultFile, 'config'>): Record<string, number> | null {
  const per = r.config['point_repeats']
  if (per === null || typeof per !== 'object' || Array.isArray(per)) return null
  const out: Record<string, number> = {}
  for (const [k, n] of Object.entries(per as Record<string, unknown>)) if (typeof n === 'number' && Number.isInteger(n) && n >= 0) out[k] = n
  return out
}

/**
 * A side's file after round `round` with the points `measured` this round: every point's planned
 * rounds grow by one if it was measured, and stay where they were if it was left out. `repeats`
 * (the job's rounds) goes on counting every round.
 */
export function notePlanned(r: ResultFile, measured: ReadonlySet<string> | null, round: number): ResultFile {
  const before = pointRepeats(r) ?? {}
  const per: Record<string, number> = {}
  for (const p of r.points) {
    const scope = pointScope(p)
    per[scope] = measured === null || measured.has(scope) ? round : (before[scope] ?? round - 1)
  }
  return { ...r, config: { ...r.config, point_repeats: per } }
}

/**
 * Throughput-at-target runs of a slot that measured only part of a shape's curve are dropped: a
 * crossing drawn through part of the curve is not the sweep's figure. `measured`: the point
 * scopes of the slot (null: all); `sweep`: a file holding every point of the sweep (the side's
 * earlier rounds).
 */
export function dropPartialCurves(slot: ResultFile, measured: ReadonlySet<string> | null, sweep: Pick<ResultFile, 'points'> | undefined): ResultFile {
  if (measured === null) return slot
  const points = sweep?.points ?? slot.points
  const whole = (input: number, output: number): boolean =>
    points.filter((p) => p.input_len === input && p.output_len === output).every((p) => measured.has(pointScope(p)))
  const out: ResultFile = { ...slot, at_target: slot.at_target.filter((s) => whole(s.input_len, s.output_len)) }
  if (slot.fingerprint !== undefined) out.fingerprint = fingerprintOf(out)
  return out
}

/**
 * `first` with a further engine start's `slot` merged in, as an escalating job keeps it: a partial
 * curve's throughput at target dropped, and, once any start measured part of the sweep, each
 * point's planned repeats recorded (the slot's repeat is the merged file's newest). `measured`:
 * the point scopes the slot measured (null: all); `merge` appends the slot's runs (./merge.ts).
 */
export function mergeStart(
  first: ResultFile | undefined,
  slot: ResultFile,
  measured: ReadonlySet<string> | null,
  merge: (first: ResultFile, extra: ResultFile) => ResultFile = mergeResults,
): ResultFile {
  const kept = dropPartialCurves(slot, measured, first)
  const merged = first === undefined ? kept : merge(first, kept)
  if (measured === null && pointRepeats(merged) === null) return merged
  const newest = Math.max(0, ...merged.points.flatMap((p) => p.runs.map((r) => r.repeat)))
  return notePlanned(merged, measured, newest)
}

/**
 * A side's file as an escalating job would have written it: point `scope`'s runs kept up to its
 * planned rounds, throughput at target kept up to the rounds that measured its shape's whole
 * curve, and `config.point_repeats` recorded. For callers that hold every round's runs (the
 * bench, replays).
 */
export function keepPlanned(r: ResultFile, planned: Readonly<Record<string, number>>): ResultFile {
  const of = (scope: string): number => planned[scope] ?? 0
  const points = r.points.map((p) => ({ ...p, runs: p.runs.filter((run) => run.repeat <= of(pointScope(p))) }))
  const shapeRounds = (s: { input_len: number; output_len: number }): number =>
    Math.min(...r.points.filter((p) => p.input_len === s.input_len && p.output_len === s.output_len).map((p) => of(pointScope(p))))
  const at_target = r.at_target.map((s) => ({ ...s, runs: s.runs.filter((run) => run.repeat <= shapeRounds(s)) }))
  const out: ResultFile = { ...r, points, at_target, config: { ...r.config, point_repeats: { ...planned } } }
  if (r.fingerprint !== undefined) out.fingerprint = fingerprintOf(out)
  return out
}

/** What an escalating job did: its last look's verdict, the rounds it ran, each point's planned rounds, the point-runs of both sides. */
export interface EscalatedJob {
  verdict: Verdict
  rounds: number
  planned: Record<string, number>
  pointRuns: number
}

/**
 * An A/B job replayed over sides that hold every round's runs, as `servegate ab` runs it live
 * (src/ab/run-ab.ts): every point until the first look (`firstLook`), then after each look only
 * the open rows' points, until a look ends the job or `maxRounds` is reached. `look` is the
 * job's look (./ab-looks.ts lookAt with its options). For the bench and for replays.
 */
export function replayEscalating(
  a: ResultFile,
  b: ResultFile,
  firstLook: number,
  maxRounds: number,
  look: (a: ResultFile, b: ResultFile, round: number) => { verdict: Verdict; done: boolean },
): EscalatedJob {
  const planned: Record<string, number> = Object.fromEntries(a.points.map((p) => [pointScope(p), 0]))
  let measured = new Set(Object.keys(planned))
  let pointRuns = 0
  for (let round = 1; ; round++) {
    for (const k of measured) planned[k] = round
    pointRuns += 2 * measured.size
    if (round < firstLook && round < maxRounds) continue
    const out = look(keepPlanned(a, planned), keepPlanned(b, planned), round)
    if (out.done || round >= maxRounds) return { verdict: out.verdict, rounds: round, planned, pointRuns }
    measured = openPoints(out.verdict, a)
  }
}
