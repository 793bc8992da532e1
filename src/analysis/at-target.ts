/**
 * Throughput at the interactivity target (docs/methodology.md, "Definitions"):
 * the output tok/s the concurrency curve reaches while the target metric
 * (default p95 TPOT) stays at or under the threshold.
 *
 * Rules, over the points sorted by concurrency; a point passes when its
 * target value is ≤ the threshold, and a point without a value (null: not
 * measured, e.g. every request failed) counts as failing:
 * - the passing region is the run of passing points from the lowest
 *   concurrency up to the first failure. Non-monotonic curves: a point that
 *   passes again after a failure is ignored — one failure is enough to say
 *   the target no longer holds there, and a later pass is more likely noise
 *   than a real recovery, so the claim stays conservative;
 * - 'exact': the last passing point sits exactly on the threshold → its
 *   throughput and concurrency;
 * - 'interpolated': the last passing point is followed by a failing point
 *   with a value → the crossing is found linearly in concurrency:
 *   f = (threshold − v_pass)/(v_fail − v_pass), concurrency = c_pass +
 *   f·(c_fail − c_pass), throughput = t_pass + f·(t_fail − t_pass);
 * - 'lower_bound': every point passes, or the first failing point has no
 *   value to interpolate with → the last passing point's figures (the true
 *   figure is at least this);
 * - 'unreachable': the lowest concurrency already misses → nulls.
 *
 * Open loop: the curve runs over request rates instead of concurrencies and is
 * interpolated the same way; the figure carries `request_rate` (the implied rate)
 * and a null concurrency. A crossing between the highest finite rate and `inf`
 * keeps its interpolated throughput with a null rate (no finite rate implied).
 *
 * An invalid run (METHODOLOGY: an invalid number is not a measurement) is
 * left out of its repeat's curve, so no figure is ever built from an invalid
 * run's numbers: the curve runs through the valid points only. When an
 * invalid run sits at or below the crossing, the bracket the figure comes from
 * is wider than the sweep planned; `repeatsCutByInvalidRuns` names those
 * repeats so the report can say so and the gate can refuse to decide on them.
 * An invalid run beyond the crossing changes nothing.
 */
import type { AtTargetBound, AtTargetRun, AtTargetShape, PointResult, ResultTarget, RunResult } from '../types.js'

export interface CurvePoint {
  concurrency: number
  /** Output tok/s at this concurrency. */
  outputThroughput: number
  /** The target metric at this point, ms; null when not measured. */
  targetValueMs: number | null
}

export interface AtTargetValue {
  throughput: number | null
  concurrency: number | null
  bound: AtTargetBound
}

/** Output tok/s (and implied concurrency) where the target metric crosses `thresholdMs`; rules in the file header. */
export function throughputAtTarget(points: ReadonlyArray<CurvePoint>, thresholdMs: number): AtTargetValue {
  const sorted = [...points].sort((a, b) => a.concurrency - b.concurrency)
  for (let i = 1; i < sorted.length; i++) {
    if ((sorted[i] as CurvePoint).concurrency === (sorted[i - 1] as CurvePoint).concurrency) {
      throw new Error(`throughputAtTarget: concurrency ${(sorted[i] as CurvePoint).concurrency} appears twice on one curve`)
    }
  }
  const passes = (p: CurvePoint): boolean => p.targetValueMs !== null && p.targetValueMs <= thresholdMs
  let lastPass = -1
  while (lastPass + 1 < sorted.length && passes(sorted[lastPass + 1] as CurvePoint)) lastPass++
  if (lastPass < 0) return { throughput: null, concurrency: null, bound: 'unreachable' }
  const pass = sorted[lastPass] as CurvePoint
  if (pass.targetValueMs === thresholdMs) {
    return { throughput: pass.outputThroughput, concurrency: pass.concurrency, bound: 'exact' }
  }
  const fail = sorted[lastPass + 1]
  if (fail === undefined || fail.targetValueMs === null) {
    return { throughput: pass.outputThroughput, concurrency: pass.concurrency, bound: 'lower_bound' }
  }
  const f = (thresholdMs - (pass.targetValueMs as number)) / (fail.targetValueMs - (pass.targetValueMs as number))
  return {
    throughput: pass.outputThroughput + f * (fail.outputThroughput - pass.outputThroughput),
    concurrency: pass.concurrency + f * (fail.concurrency - pass.concurrency),
    bound: 'interpolated',
  }
}

const PERCENTILE_KEYS: Record<number, 'p50' | 'p95' | 'p99'> = { 50: 'p50', 95: 'p95', 99: 'p99' }

/** The run's value of the target metric at the target percentile, ms (null when not measured). */
export function targetValueMs(run: RunResult, target: ResultTarget): number | null {
  const key = PERCENTILE_KEYS[target.percentile]
  if (key === undefined) {
    throw new Error(`target percentile ${target.percentile} is not supported: use 50, 95 or 99`)
  }
  const stats = target.metric === 'tpot' ? run.tpot_ms : run.itl_ms
  return stats[key]
}

/**
 * Repeats of one shape whose throughput at target an invalid run may have
 * moved: walking up the concurrencies, an invalid run comes before (or at) the
 * first valid point that misses the target, so the figure's bracket is wider
 * than planned or its starting point unknown.
 */
export function repeatsCutByInvalidRuns(points: readonly PointResult[], inputLen: number, outputLen: number, target: ResultTarget): Set<number> {
  const byRepeat = new Map<number, Array<{ concurrency: number; run: RunResult }>>()
  for (const p of points) {
    if (p.input_len !== inputLen || p.output_len !== outputLen) continue
    for (const run of p.runs) {
      const list = byRepeat.get(run.repeat) ?? []
      list.push({ concurrency: p.concurrency, run })
      byRepeat.set(run.repeat, list)
    }
  }
  const cut = new Set<number>()
  for (const [repeat, list] of byRepeat) {
    list.sort((a, b) => a.concurrency - b.concurrency)
    for (const { run } of list) {
      if (!run.validity.valid) {
        cut.add(repeat)
        break
      }
      const v = targetValueMs(run, target)
      if (v === null || v > target.threshold_ms) break
    }
  }
  return cut
}

/** Throughput at target per shape (first-seen order) and per repeat (ascending), from a result's points. */
export function atTargetForResult(points: PointResult[], target: ResultTarget): AtTargetShape[] {
  const shapes = new Map<string, { input_len: number; output_len: number; byRepeat: Map<number, CurvePoint[]>; rates: boolean }>()
  for (const point of points) {
    const key = `${point.input_len}x${point.output_len}`
    let shape = shapes.get(key)
    if (shape === undefined) {
      shape = { input_len: point.input_len, output_len: point.output_len, byRepeat: new Map(), rates: point.request_rate !== undefined }
      shapes.set(key, shape)
    }
    // The x-axis: the concurrency, or an open-loop point's request rate (inf: Infinity, the highest).
    const x = point.request_rate === undefined ? point.concurrency : point.request_rate === 'inf' ? Infinity : point.request_rate
    for (const run of point.runs) {
      const curve = shape.byRepeat.get(run.repeat) ?? []
      if (run.validity.valid) {
        curve.push({ concurrency: x, outputThroughput: run.output_throughput, targetValueMs: targetValueMs(run, target) })
      }
      shape.byRepeat.set(run.repeat, curve)
    }
  }
  return [...shapes.values()].map((shape) => ({
    input_len: shape.input_len,
    output_len: shape.output_len,
    // A repeat without a single valid point has no figure at all (not "unreachable").
    runs: [...shape.byRepeat.entries()]
      .filter(([, curve]) => curve.length > 0)
      .sort((a, b) => a[0] - b[0])
      .map(([repeat, curve]): AtTargetRun => {
        const v = throughputAtTarget(curve, target.threshold_ms)
        if (!shape.rates) return { repeat, ...v }
        const rate = v.concurrency !== null && Number.isFinite(v.concurrency) ? v.concurrency : null
        return { repeat, throughput: v.throughput, concurrency: null, bound: v.bound, request_rate: rate }
      }),
  }))
}
