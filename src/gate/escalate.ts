/**
 * Escalate rows, not sweeps (pure; docs/gate.md, "Escalate rows, not
 * sweeps"). Each gated row is its own sequential test, and a row that has
 * crossed a boundary is decided for good: later increments would not change
 * it (the test stops at the first crossing). So after each look an A/B job
 * measures only the points whose rows are still open:
 * - a per-point row (p95 ITL, …) needs its own point;
 * - a per-shape row (throughput at target) needs the points of its shape's
 *   curve around the crossing (the two that bracket it, and the next one
 *   where the crossing lies near a point; ./at-target's walk draws the same
 *   figure through them as through the whole curve), and the round is
 *   planned for that curve: the set holds the shape's label too;
 * - a row that is blind (no round could decide it) needs nothing more.
 * Rows the host spoiled so far stay open: a later round may measure them.
 *
 * The side files record what each point was planned for, `config.point_repeats`
 * (point scope → rounds), and each shape's throughput row, `config.curve_repeats`
 * (shape → rounds), so a point left out of later rounds is complete with the
 * rounds it was planned for (./completeness.ts). A round that measured part of
 * a curve keeps a run's throughput at target only where the run's crossing lies
 * between two measured points adjacent on the whole curve; elsewhere the run
 * gives no increment.
 */
import type { ResultFile } from '../types.js'
import { fingerprintOf } from './fingerprint.js'
import { mergeResults } from './merge.js'
import { KIND_INFO, parseMetricKey, pointScope, shapeLabel } from './metric-keys.js'
import type { Verdict } from './types.js'
import type { AtTargetRun } from '../types.js'
import { median } from '../util/median.js'

/** Row statuses a later round cannot change. */
const DECIDED = new Set(['pass', 'improvement', 'regression'])

/** Whether a gated row needs more rounds: not decided, and not blind. */
function open(row: Verdict['rows'][number]): boolean {
  if (DECIDED.has(row.status)) return false
  return !(row.status === 'undecided' && row.blind === true)
}

/**
 * What the next round must measure after a look whose verdict is `v`: the point scopes
 * (`64x16@c16`) of its open gated rows, and the shape label (`64x16`) of each open throughput row,
 * whose curve the round is planned for (it measures the points around that curve's crossing).
 * `result` is a side's file so far (its points name the curve of each shape, its earlier rounds
 * where the curve crossed).
 */
export function openPoints(v: Verdict, result: Pick<ResultFile, 'points' | 'at_target' | 'config'>): Set<string> {
  const need = new Set<string>()
  for (const row of v.rows) {
    if (!row.gated || !open(row)) continue
    const key = parseMetricKey(row.key)
    const kind = key?.kind
    const scope = key?.scope ?? row.key.slice(row.key.indexOf('@') + 1)
    if (kind !== undefined && KIND_INFO[kind].perShape) {
      need.add(scope)
      const block = new Set(curveBlock(result, scope))
      for (const p of result.points) if (shapeLabel(p.input_len, p.output_len) === scope && block.has(p.concurrency)) need.add(pointScope(p))
    } else {
      need.add(scope)
    }
  }
  return need
}

/** The point scopes of a set `openPoints` returned (its shape labels left out), for logs. */
export function pointScopesOf(measured: ReadonlySet<string>): string[] {
  return [...measured].filter((k) => k.includes('@'))
}

/** How far from the median crossing (as a factor on concurrency) the points measured around it reach, at least. */
const BLOCK_MARGIN = 1.25

/**
 * The concurrencies of a shape's curve that a round measures while its throughput row is open:
 * from the highest point at or below the median crossing ÷ 1.25 to the lowest at or above it × 1.25,
 * the crossing drawn from the runs of the rounds that measured the whole curve (so the points
 * only shrink as a job goes on). The whole curve where no crossing was interpolated yet, and for
 * an open-loop curve (rates).
 */
export function curveBlock(result: Pick<ResultFile, 'points' | 'at_target' | 'config'>, shape: string): number[] {
  const mine = result.points.filter((p) => shapeLabel(p.input_len, p.output_len) === shape)
  const concs = [...new Set(mine.map((p) => p.concurrency))].sort((a, b) => a - b)
  if (mine.some((p) => p.request_rate !== undefined) || concs.length <= 2) return concs
  const whole = wholeCurveRounds(result, shape)
  const xs = (result.at_target.find((s) => shapeLabel(s.input_len, s.output_len) === shape)?.runs ?? [])
    .filter((r) => r.repeat <= whole && (r.bound === 'interpolated' || r.bound === 'exact') && r.concurrency !== null)
    .map((r) => r.concurrency as number)
  if (xs.length === 0) return concs
  const m = median(xs)
  const lo = Math.max(concs[0]!, ...concs.filter((c) => c <= m / BLOCK_MARGIN))
  const hi = Math.min(concs.at(-1)!, ...concs.filter((c) => c >= m * BLOCK_MARGIN))
  return concs.filter((c) => c >= lo && c <= hi)
}

/** The rounds that measured a shape's whole curve: every round, unless an escalating file recorded fewer for some of its points. */
export function wholeCurveRounds(r: Pick<ResultFile, 'points' | 'config'>, shape: string): number {
  const per = pointRepeats(r)
  if (per === null) return Infinity
  const mine = r.points.filter((p) => shapeLabel(p.input_len, p.output_len) === shape).map((p) => per[pointScope(p)] ?? 0)
  return mine.length > 0 ? Math.min(...mine) : 0
}

/**
 * Whether a run's throughput at target, drawn through the measured concurrencies `measured` of a
 * curve whose points are `all`, is the figure the whole curve gives (the walk of
 * analysis/at-target.ts, on a curve that holds the target below its crossing): its crossing lies
 * between two measured points adjacent on the whole curve; a lower bound needs the curve's top
 * measured, an unreachable target its lowest point.
 */
export function crossingMeasured(run: Pick<AtTargetRun, 'bound' | 'concurrency'>, measured: ReadonlySet<number>, all: readonly number[]): boolean {
  if (all.every((c) => measured.has(c))) return true
  if (run.bound === 'unreachable') return all.length > 0 && measured.has(all[0]!)
  if (run.bound === 'lower_bound') return all.length > 0 && measured.has(all.at(-1)!)
  const c = run.concurrency
  if (c === null) return false
  for (let i = 0; i < all.length; i++) {
    const here = all[i]!
    const next = all[i + 1]
    if (c === here) return measured.has(here) && (next === undefined || measured.has(next))
    if (next !== undefined && here < c && c < next) return measured.has(here) && measured.has(next)
  }
  return false
}

/** The rounds each shape's throughput row was planned for, as recorded (`config.curve_repeats`); null when not recorded. */
export function curveRepeats(r: Pick<ResultFile, 'config'>): Record<string, number> | null {
  return roundsRecord(r, 'curve_repeats')
}

/** The rounds each point was planned for, as recorded (`config.point_repeats`); null where every point planned `repeats`. */
export function pointRepeats(r: Pick<ResultFile, 'config'>): Record<string, number> | null {
  return roundsRecord(r, 'point_repeats')
}

/** A recorded map of scope → rounds from the file's config, its whole non-negative numbers only; null when absent. */
function roundsRecord(r: Pick<ResultFile, 'config'>, key: 'point_repeats' | 'curve_repeats'): Record<string, number> | null {
  const per = r.config[key]
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
  const curvesBefore = curveRepeats(r) ?? {}
  const per: Record<string, number> = {}
  const curves: Record<string, number> = {}
  for (const p of r.points) {
    const scope = pointScope(p)
    per[scope] = measured === null || measured.has(scope) ? round : (before[scope] ?? round - 1)
    const shape = shapeLabel(p.input_len, p.output_len)
    curves[shape] = measured === null || measured.has(shape) ? round : (curvesBefore[shape] ?? round - 1)
  }
  return { ...r, config: { ...r.config, point_repeats: per, curve_repeats: curves } }
}

/**
 * A slot's throughput at target where it measured part of a shape's curve: kept for a curve the
 * round was planned for (its shape label in `measured`) and only the runs whose crossing lies
 * between measured points adjacent on the whole curve (crossingMeasured); dropped for any other
 * partial curve. `measured`: what the slot measured (null: all); `sweep`: a file holding every
 * point of the sweep (the side's earlier rounds).
 */
export function dropPartialCurves(slot: ResultFile, measured: ReadonlySet<string> | null, sweep: Pick<ResultFile, 'points'> | undefined): ResultFile {
  if (measured === null) return slot
  const points = sweep?.points ?? slot.points
  const at_target = slot.at_target.flatMap((s) => {
    const mine = points.filter((p) => p.input_len === s.input_len && p.output_len === s.output_len)
    if (mine.every((p) => measured.has(pointScope(p)))) return [s]
    if (!measured.has(shapeLabel(s.input_len, s.output_len)) || mine.some((p) => p.request_rate !== undefined)) return []
    const all = [...new Set(mine.map((p) => p.concurrency))].sort((a, b) => a - b)
    const got = new Set(mine.filter((p) => measured.has(pointScope(p))).map((p) => p.concurrency))
    const runs = s.runs.filter((run) => crossingMeasured(run, got, all))
    return runs.length > 0 ? [{ ...s, runs }] : []
  })
  const out: ResultFile = { ...slot, at_target }
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
export function keepPlanned(r: ResultFile, planned: Readonly<Record<string, number>>, curves: Readonly<Record<string, number>> = {}): ResultFile {
  const of = (scope: string): number => planned[scope] ?? 0
  const points = r.points.map((p) => ({ ...p, runs: p.runs.filter((run) => run.repeat <= of(pointScope(p))) }))
  // Per shape: the rounds that measured its whole curve, and those planned for its throughput row.
  const shapeOf = (p: { input_len: number; output_len: number }): string => shapeLabel(p.input_len, p.output_len)
  const curveRounds: Record<string, number> = {}
  const wholeRounds: Record<string, number> = {}
  for (const sh of new Set(r.points.map(shapeOf))) {
    wholeRounds[sh] = Math.min(...r.points.filter((p) => shapeOf(p) === sh).map((p) => of(pointScope(p))))
    curveRounds[sh] = Math.max(wholeRounds[sh], curves[sh] ?? 0)
  }
  const at_target = r.at_target.map((s) => {
    const mine = r.points.filter((p) => shapeOf(p) === shapeOf(s))
    const all = [...new Set(mine.map((p) => p.concurrency))].sort((a, b) => a - b)
    const whole = wholeRounds[shapeOf(s)] ?? 0
    const curve = curveRounds[shapeOf(s)] ?? 0
    // Round k measured the points planned for k rounds or more (a point once left out is never measured again).
    const kept = (run: AtTargetRun): boolean =>
      run.repeat <= whole ||
      (run.repeat <= curve && crossingMeasured(run, new Set(mine.filter((p) => of(pointScope(p)) >= run.repeat).map((p) => p.concurrency)), all))
    return { ...s, runs: s.runs.filter(kept) }
  })
  const out: ResultFile = { ...r, points, at_target, config: { ...r.config, point_repeats: { ...planned }, curve_repeats: curveRounds } }
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
  const curves: Record<string, number> = Object.fromEntries(a.points.map((p) => [shapeLabel(p.input_len, p.output_len), 0]))
  let measured = new Set([...Object.keys(planned), ...Object.keys(curves)])
  let pointRuns = 0
  for (let round = 1; ; round++) {
    for (const k of measured) {
      if (k in planned) planned[k] = round
      else if (k in curves) curves[k] = round
    }
    pointRuns += 2 * pointScopesOf(measured).length
    if (round < firstLook && round < maxRounds) continue
    const sideA = keepPlanned(a, planned, curves)
    const out = look(sideA, keepPlanned(b, planned, curves), round)
    if (out.done || round >= maxRounds) return { verdict: out.verdict, rounds: round, planned, pointRuns }
    measured = openPoints(out.verdict, sideA)
  }
}
