/**
 * Result files shaped as `servegate run` writes them, from the p95 ITL of each
 * run of a gated sweep: every run goes through the pipeline (request records →
 * summarizeRun → assessValidity, test/gate/fixtures.ts pipelineResult), the
 * result gets its throughput at target from atTargetForResult and its
 * fingerprint from fingerprintOf, so compareToBaseline and compareAB see what
 * they would see in production.
 *
 * Building a run from its records costs milliseconds; a Monte Carlo of
 * thousands of PRs needs hundreds of thousands of runs. Runs are therefore
 * built once per (shape, concurrency, value rounded to QUANT_STEP in log space)
 * and reused by every factory of the process: the rounding (±0.05 %) is a
 * hundredth of the 2–3 % run noise. A sweep of several shapes measures each
 * shape at every concurrency (SweepSpec.moreShapes).
 */
import { atTargetForResult } from '../../src/analysis/at-target.js'
import { defaultRequestTimeoutS } from '../../src/config/defaults.js'
import { fingerprintOf } from '../../src/gate/fingerprint.js'
import type { PointResult, ResultFile, RunResult } from '../../src/types.js'
import { makeEnv, pipelineResult, TARGET } from '../../test/gate/fixtures.js'

/** Log-space rounding of a run's value before its run is built (0.1 %). */
export const QUANT_STEP = 1e-3

export interface Shape {
  input_len: number
  output_len: number
}

export interface SweepSpec {
  /** The shape the synthetic requests have (small, so runs build fast; the verdict does not depend on it). */
  shape: Shape
  /** Further shapes of the sweep, each measured at every concurrency after `shape` (a sweep of several shapes). */
  moreShapes?: readonly Shape[]
  concurrency: readonly number[]
}

/** Builds pipeline-shaped results of one gated sweep from per-run p95 ITLs. */
export class ResultFactory {
  /**
   * Runs by shape, concurrency and rounded value, shared by every factory of the process: a
   * run's records depend on nothing else, so sweeps of other concurrency lists reuse them.
   */
  private static readonly runs = new Map<string, RunResult>()
  private readonly config: Record<string, unknown>

  /** Every shape of the sweep, `spec.shape` first. */
  readonly shapes: readonly Shape[]

  constructor(readonly spec: SweepSpec) {
    this.shapes = [spec.shape, ...(spec.moreShapes ?? [])]
    const config = pipelineResult({ shape: spec.shape, concurrency: [...spec.concurrency], repeats: 1, itl: () => 10 }).config
    // Several shapes: recorded as the product's configForResult records them (one deadline, or one per shape when they differ).
    const deadlines = this.shapes.map((sh) => [`${sh.input_len}x${sh.output_len}`, defaultRequestTimeoutS(sh.input_len, sh.output_len)] as const)
    this.config = {
      ...config,
      shapes: this.shapes.map((sh) => ({ ...sh })),
      request_timeout_s: new Set(deadlines.map(([, v]) => v)).size <= 1 ? deadlines[0]![1] : Object.fromEntries(deadlines),
    }
  }

  /** Points of one sweep (shapes × concurrencies, shape-major): the length of each repeat's value list. */
  get points(): number {
    return this.shapes.length * this.spec.concurrency.length
  }

  /** How many distinct runs were built through the pipeline so far (by every factory of the process). */
  get built(): number {
    return ResultFactory.runs.size
  }

  /**
   * A result of `values.length` repeats: values[r][i] is the p95 ITL (ms) of repeat r at point i,
   * shape-major (point s · concurrency.length + j is shape s at concurrency[j]; with one shape,
   * simply concurrency[i]). `day` dates the result (refreshes are ordered by it).
   */
  result(values: ReadonlyArray<readonly number[]>, day: number): ResultFile {
    const nc = this.spec.concurrency.length
    const points: PointResult[] = this.shapes.flatMap((shape, s) =>
      this.spec.concurrency.map((c, j) => ({
        ...shape,
        concurrency: c,
        runs: values.map((v, r) => this.run(shape, c, v[s * nc + j]!, r + 1)),
      })),
    )
    const result: ResultFile = {
      schema: 'servegate.result/v1',
      harness: { name: 'servegate', version: '0.1.0' },
      env: makeEnv((e) => {
        e.finished_at = new Date(Date.UTC(2025, 0, 1) + day * 86_400_000).toISOString()
      }),
      config: { ...this.config, repeats: values.length },
      target: TARGET,
      points,
      at_target: atTargetForResult(points, TARGET),
    }
    result.fingerprint = fingerprintOf(result)
    return result
  }

  /** Run `repeat` of `shape` at concurrency c whose chunks come every `itlMs` (rounded to QUANT_STEP). */
  private run(shape: Shape, c: number, itlMs: number, repeat: number): RunResult {
    const q = Math.round(Math.log(itlMs) / QUANT_STEP)
    const key = `${shape.input_len}x${shape.output_len}:${c}:${q}`
    let run = ResultFactory.runs.get(key)
    if (run === undefined) {
      const value = Math.exp(q * QUANT_STEP)
      run = pipelineResult({ shape, concurrency: [c], repeats: 1, itl: () => value }).points[0]!.runs[0]!
      ResultFactory.runs.set(key, run)
    }
    // The same records measured as another repeat: only the repeat's number and seed differ.
    return { ...run, repeat, seed: 1000 + repeat }
  }
}
