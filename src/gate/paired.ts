/**
 * The A/B rows (`servegate ab`, and the A/B step of the gate's ladder): the
 * reference A and the candidate B are measured in alternating slots on the
 * same host in one job (A B, B A, A B, …), so the drift between the
 * baseline's day and today is absent. Each round r gives one increment per
 * row, the paired log change x_r = ln(B_r / A_r) oriented so positive is
 * worse, and the row is decided by the sequential test over the rounds in
 * order (./sequential.ts via ./seq-row.ts): it stops `regression` or `pass`
 * at the first look whose evidence says so. A side servegate starts afresh
 * for every slot makes each round independent; a side that is never
 * restarted (a base URL, resident engines) shares its start offset with every
 * round, which the design counts as shared variance (./seq-noise.ts). Pure.
 */
import type { Decision } from './decide.js'
import type { FigureRun } from './extract.js'
import { rowNoise } from './seq-noise.js'
import { decideAtZeros, decideSequentialRow, type SequentialOptions } from './seq-row.js'
import type { GateOptions } from './types.js'

export interface PairedInput {
  /** [A, B] values of the rounds where both runs are valid, in round order. */
  pairs: ReadonlyArray<readonly [number, number]>
  /** Whether each side was started afresh for every slot. */
  restarted: { A: boolean; B: boolean }
  /** The host's history of this row (log values per refresh, oldest first; empty: the priors). */
  history: readonly number[][]
  higherIsBetter: boolean
  /** Fractions: the row's tolerance and the change it is designed to catch. */
  tolerance: number
  design: number
}

type PairedOptions = SequentialOptions & Pick<GateOptions, 'centerWindow' | 'minHistory' | 'dayFloor' | 'withinFloor'>

/** Decide one metric from paired rounds; the Decision's baseline/candidate are the geometric means of A and B. */
export function decidePaired(input: PairedInput, opts: PairedOptions): Decision {
  const zeros = decideAtZeros(input.pairs, input.higherIsBetter, input.history.length)
  if (zeros !== null) return zeros
  const sign = input.higherIsBetter ? -1 : 1
  const geo = (xs: number[]): number | null => (xs.length === 0 ? null : Math.exp(xs.reduce((a, x) => a + Math.log(x), 0) / xs.length))
  return decideSequentialRow(
    {
      increments: input.pairs.map(([a, b]) => ({ x: sign * (Math.log(b) - Math.log(a)), runs: 1 })),
      noise: rowNoise(input.history, { kind: 'ab', restarted: input.restarted }, opts),
      design: input.design,
      tolerance: input.tolerance,
      baseline: geo(input.pairs.map(([a]) => a)),
      candidate: geo(input.pairs.map(([, b]) => b)),
      unit: 'round',
    },
    opts,
  )
}

/** [A, B] values of the repeats valid on both sides, in repeat order, with each pair's round (its repeat). */
export function pairUp(a: readonly FigureRun[], b: readonly FigureRun[]): { pairs: Array<[number, number]>; rounds: number[] } {
  const usable = (r: FigureRun): boolean => r.valid && r.value !== null
  const byRepeat = new Map(a.filter(usable).map((r) => [r.repeat, r.value as number]))
  const kept = b
    .filter(usable)
    .filter((r) => byRepeat.has(r.repeat))
    .sort((x, y) => x.repeat - y.repeat)
  return { pairs: kept.map((r) => [byRepeat.get(r.repeat) as number, r.value as number]), rounds: kept.map((r) => r.repeat) }
}
