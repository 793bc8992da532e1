/**
 * Bracketing: fewer GPU-minutes per verdict. Throughput at target interpolates
 * between the last concurrency holding the target and the first missing it
 * (analysis/at-target.ts), so a PR sweep needs only those two points — where
 * the baseline crossed — plus the points whose p95 ITL the gate keeps. This
 * file finds the bracket from a baseline's stored per-run figures, records it,
 * and tells the gate which points a bracketed candidate planned and whether its
 * crossing stayed inside the bracket (if not, its figure is not the one the
 * full sweep would have drawn, and the gate fails closed). Pure.
 */
import { UsageError } from '../errors.js'
import type { BracketPlacement, ShapePlacement } from '../config/placement.js'
import type { ResolvedConfig } from '../config/resolve.js'
import type { AtTargetRun, ResultFile, ResultTarget } from '../types.js'
import { metricKey, pointLabel, shapeLabel } from './metric-keys.js'
import { median } from '../util/median.js'
import type { Baseline, MetricKind } from './types.js'
import type { Problem } from './invariants.js'

/**
 * Newest refreshes the crossing is found from: the median of their per-refresh medians.
 * Three smooth over one disturbed refresh, and stay recent enough to be today's engine.
 */
const BRACKET_REFRESHES = 3

/** The stored per-point figure that is the target metric, or null when the baseline does not store it (only p95 figures are stored). */
function storedTargetKind(target: ResultTarget): MetricKind | null {
  if (target.percentile !== 95) return null
  return target.metric === 'tpot' ? 'tpot_p95' : 'itl_p95'
}

const describeTarget = (t: ResultTarget): string => `p${t.percentile} ${t.metric.toUpperCase()} ≤ ${t.threshold_ms} ms`

/** Where the baseline crossed the target for one shape: the two concurrencies around it, or why none can be named. */
function baselineCrossing(baseline: Baseline, shape: string): { below: number; above: number } | { fallback: string } {
  const kind = storedTargetKind(baseline.target)
  if (kind === null) return { fallback: `the baseline stores no per-point ${describeTarget(baseline.target).split(' ≤')[0]} (only p95 figures)` }
  const refreshes = baseline.refreshes.slice(-BRACKET_REFRESHES)
  const concs = [...baseline.profile.concurrency].sort((a, b) => a - b)
  const medians = concs.map((c) => {
    const per = refreshes
      .map((r) => r.runs[metricKey(kind, `${shape}@c${c}`)] ?? [])
      .filter((v) => v.length > 0)
      .map((v) => median(v))
    return per.length > 0 ? median(per) : null
  })
  // The same walk as throughputAtTarget: up from the lowest concurrency to the first miss.
  let lastPass = -1
  while (lastPass + 1 < concs.length) {
    const v = medians[lastPass + 1]
    if (v === null || v === undefined) {
      return { fallback: `the baseline has no valid ${kind.replace('_p95', '').toUpperCase()} figure at c=${concs[lastPass + 1]} in its newest refreshes` }
    }
    if (v > baseline.target.threshold_ms) break
    lastPass++
  }
  if (lastPass < 0) return { fallback: `the baseline misses ${describeTarget(baseline.target)} already at c=${concs[0]}` }
  if (lastPass === concs.length - 1) return { fallback: `the baseline holds ${describeTarget(baseline.target)} at every concurrency up to c=${concs.at(-1)}` }
  return { below: concs[lastPass]!, above: concs[lastPass + 1]! }
}

/**
 * The bracket for a sweep: per shape the baseline's two concurrencies around its crossing plus
 * the ITL concurrencies (union, sorted); a shape without a bracket runs the whole list (one note each).
 */
export function bracketPlacement(
  baseline: Baseline,
  cfg: Pick<ResolvedConfig, 'shapes' | 'concurrency' | 'itlConcurrency'>,
): { bracket: BracketPlacement; notes: string[] } {
  const itl = [...(cfg.itlConcurrency ?? [Math.min(...cfg.concurrency)])].sort((a, b) => a - b)
  const shapes: Record<string, ShapePlacement> = {}
  const notes: string[] = []
  for (const s of cfg.shapes) {
    const label = shapeLabel(s.inputLen, s.outputLen)
    const crossing = baselineCrossing(baseline, label)
    if ('fallback' in crossing) {
      shapes[label] = { concurrency: [...cfg.concurrency].sort((a, b) => a - b), below: null, above: null, fallback: crossing.fallback }
      notes.push(`${label}: no bracket (${crossing.fallback}); running the whole list ${cfg.concurrency.join(', ')}`)
      continue
    }
    const concurrency = [...new Set([...itl, crossing.below, crossing.above])].sort((a, b) => a - b)
    shapes[label] = { concurrency, below: crossing.below, above: crossing.above }
    notes.push(
      `${label}: the baseline crossed ${describeTarget(baseline.target)} between c=${crossing.below} and c=${crossing.above}; running c=${concurrency.join(', ')} instead of ${cfg.concurrency.join(', ')}`,
    )
  }
  return { bracket: { baseline: baseline.name, refreshes: Math.min(BRACKET_REFRESHES, baseline.refreshes.length), itlConcurrency: itl, shapes }, notes }
}

/**
 * `cfg` with its points placed around `baseline`'s crossing (cfg.bracket set, cfg.concurrency
 * the union it runs). Refuses a baseline measured for another target, another list, or without the
 * ITL concurrencies: the gate could not compare what such a sweep measures.
 */
export function applyBracket(cfg: ResolvedConfig, baseline: Baseline, source: string): { cfg: ResolvedConfig; notes: string[] } {
  const t = cfg.target
  const bt = baseline.target
  const problems: string[] = []
  if (bt.metric !== t.metric || bt.percentile !== t.percentile || bt.threshold_ms !== t.thresholdMs) {
    problems.push(
      `its target is ${describeTarget(bt)}, the sweep's ${describeTarget({ metric: t.metric, percentile: t.percentile, threshold_ms: t.thresholdMs })}`,
    )
  }
  const measured = new Set(baseline.profile.concurrency)
  const outside = cfg.concurrency.filter((c) => !measured.has(c))
  if (outside.length > 0)
    problems.push(`the sweep's concurrencies ${outside.join(', ')} are not in the baseline's list (${baseline.profile.concurrency.join(', ')})`)
  if (problems.length > 0) {
    throw new UsageError(
      `${source}: cannot bracket against baseline ${baseline.name}: ${problems.join('; ')}`,
      'Bracket against the baseline this sweep is gated on, with the same target and concurrency list.',
    )
  }
  if (baseline.refreshes.length === 0) {
    return {
      cfg: { ...cfg, bracket: null },
      notes: [`baseline ${baseline.name} has no refreshes yet: no bracket, running the whole list ${cfg.concurrency.join(', ')}`],
    }
  }
  const { bracket, notes } = bracketPlacement(baseline, cfg)
  const union = [...new Set(Object.values(bracket.shapes).flatMap((s) => s.concurrency))].sort((a, b) => a - b)
  return { cfg: { ...cfg, concurrency: union, bracket }, notes }
}

/** The bracket a candidate recorded (`config.placement`), or null for a sweep of the whole list. */
export function recordedBracket(result: ResultFile): { itlConcurrency: number[]; shapes: Map<string, ShapePlacement> } | null {
  const p = result.config['placement'] as { mode?: unknown; itl_concurrency?: unknown; shapes?: unknown } | undefined
  if (typeof p !== 'object' || p === null || p.mode !== 'bracket' || typeof p.shapes !== 'object' || p.shapes === null) return null
  const ints = (x: unknown): number[] | null =>
    Array.isArray(x) && x.every((c) => Number.isInteger(c) && c > 0) ? [...(x as number[])].sort((a, b) => a - b) : null
  const edge = (x: unknown): number | null => (Number.isInteger(x) && (x as number) > 0 ? (x as number) : null)
  const shapes = new Map<string, ShapePlacement>()
  for (const [label, raw] of Object.entries(p.shapes as Record<string, unknown>)) {
    const s = raw as { concurrency?: unknown; below?: unknown; above?: unknown; fallback?: unknown } | null
    const concurrency = ints(s?.concurrency)
    // A record the gate cannot read plans nothing: every point of the baseline is then expected.
    if (concurrency === null) return null
    shapes.set(label, { concurrency, below: edge(s?.below), above: edge(s?.above), ...(typeof s?.fallback === 'string' ? { fallback: s.fallback } : {}) })
  }
  return { itlConcurrency: ints(p.itl_concurrency) ?? [], shapes }
}

/**
 * The concurrencies of a shape the gate expects from the candidate: the baseline's, or those of
 * them a bracketed candidate planned when its plan is exactly what the placement rule yields from
 * this baseline (bracketRule). The candidate chose its own list, so a plan that leaves out more
 * (a PR sweep of c=1, 4 against a baseline of 1, 2, 4, whose fallback "runs the whole list" was
 * its own) narrows nothing: every baseline point is then expected, and a missing one is incomplete.
 */
export function expectedConcurrency(baseline: Baseline, candidate: ResultFile, shape: string): number[] {
  const recorded = recordedBracket(candidate)
  const planned = recorded?.shapes.get(shape)?.concurrency
  const all = [...baseline.profile.concurrency].sort((a, b) => a - b)
  if (recorded === null || planned === undefined) return all
  const rule = bracketRule(baseline, shape, recorded.itlConcurrency)
  return sameList(rule, planned) ? all.filter((c) => planned.includes(c)) : all
}

/**
 * What the placement rule places for a shape from `baseline` (its full list, its crossing in
 * its newest refreshes): the ITL concurrencies and the two around the crossing, or the baseline's
 * whole list when it has no crossing. The candidate's ITL concurrencies are taken as recorded;
 * in the Action they are the base branch's (github/base-terms.ts).
 */
function bracketRule(baseline: Baseline, shape: string, itlConcurrency: readonly number[]): number[] {
  const all = [...baseline.profile.concurrency].sort((a, b) => a - b)
  if (baseline.refreshes.length === 0) return all
  const crossing = baselineCrossing(baseline, shape)
  if ('fallback' in crossing) return all
  return [...new Set([...itlConcurrency, crossing.below, crossing.above])].sort((a, b) => a - b)
}

const sameList = (a: readonly number[], b: readonly number[]): boolean => a.length === b.length && a.every((x, i) => x === b[i])

/** Whether a bracketed candidate's planned concurrencies all lie in the baseline's list (then a narrower list is no other sweep: see expectedConcurrency for which points are gated). */
export function bracketWithinBaseline(baseline: Baseline, candidate: ResultFile): boolean {
  const b = recordedBracket(candidate)
  if (b === null) return false
  const known = new Set(baseline.profile.concurrency)
  return [...b.shapes.values()].every((s) => s.concurrency.every((c) => known.has(c)))
}

/**
 * Repeats of a bracketed shape whose crossing left the bracket, with the problem each is: the
 * figure would then be drawn through other points than the full sweep's (or be a bound), so the
 * row cannot decide on it and says incomplete — never a pass (docs/gate.md "Bracketing").
 */
export function bracketMisses(candidate: ResultFile, shape: string, atTarget: readonly AtTargetRun[]): Map<number, Problem> {
  const out = new Map<number, Problem>()
  const placed = recordedBracket(candidate)?.shapes.get(shape)
  if (!placed || placed.below === null || placed.above === null) return out
  const { below, above } = placed
  const t = describeTarget(candidate.target)
  for (const run of atTarget) {
    const c = run.concurrency
    const inside = (run.bound === 'interpolated' || run.bound === 'exact') && c !== null && c >= below && c <= above
    if (inside) continue
    const low = run.bound === 'unreachable' || (c !== null && c < below)
    const text = low
      ? `repeat ${run.repeat}: the crossing moved below the bracket: ${t} already misses at ${pointLabel(...dims(shape), below)}, where the baseline held it — likely a regression; run the whole list to measure it`
      : `repeat ${run.repeat}: the crossing moved above the bracket: ${t} still holds at ${pointLabel(...dims(shape), above)}, where the baseline missed it — likely an improvement; run the whole list to measure it`
    out.set(run.repeat, { blame: 'incomplete', text })
  }
  return out
}

function dims(shape: string): [number, number] {
  const [i, o] = shape.split('x').map(Number)
  return [i ?? 0, o ?? 0]
}
