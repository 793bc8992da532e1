/**
 * The price of a verdict (pure): engine starts, point-runs and GPU-minutes are
 * a first-class output, stated by every verdict, its markdown and the PR's
 * comment, because on a serving GPU they are what a team pays for every pull
 * request. `gate.max_gpu_minutes` (base branch) caps a PR's spend: a job
 * that reaches it stops, and rows still open are `undecided` with the figure.
 */
import type { VerdictCost } from './types.js'

/** A verdict's cost from what was spent (counts, GPU-minutes) and the cap in force. */
export function costOf(spent: { engineStarts: number; pointRuns: number }, gpuMinutes: number, maxGpuMinutes: number | null, capped: boolean): VerdictCost {
  return {
    engine_starts: spent.engineStarts,
    point_runs: spent.pointRuns,
    gpu_minutes: Math.round(gpuMinutes * 100) / 100,
    max_gpu_minutes: maxGpuMinutes,
    capped,
  }
}

/** `cost: 9 engine starts, 54 point-runs, 61.2 GPU-minutes (cap 120)`: one line for every report. */
export function costLine(c: VerdictCost): string {
  const cap = c.max_gpu_minutes === null ? '' : ` (cap ${c.max_gpu_minutes}${c.capped ? ', reached' : ''})`
  const plural = (n: number, w: string): string => `${n} ${w}${n === 1 ? '' : 's'}`
  return `cost: ${plural(c.engine_starts, 'engine start')}, ${plural(c.point_runs, 'point-run')}, ${c.gpu_minutes.toFixed(1)} GPU-minutes${cap}`
}

/** Why a job stopped at its cap, in one line. */
export function capLine(maxGpuMinutes: number, spent: number): string {
  return `the spend cap gate.max_gpu_minutes ${maxGpuMinutes} was reached at ${spent.toFixed(1)} GPU-minutes before every gated row was decided`
}
