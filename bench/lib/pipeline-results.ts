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
 * built once per (concurrency, value rounded to QUANT_STEP in log space) and
 * reused: the rounding (±0.05 %) is a hundredth of the 2–3 % run noise.
 */
import { atTargetForResult } from '../../src/analysis/at-target.js'
import { fingerprintOf } from '../../src/gate/fingerprint.js'
import type { PointResult, ResultFile, RunResult } from '../../src/types.js'
import { makeEnv, pipelineResult, TARGET } from '../../test/gate/fixtures.js'

/** Log-space rounding of a run's value before its run is built (0.1 %). */
export const QUANT_STEP = 1e-3

export interface SweepSpec {
  /** The shape the synthetic requests have (small, so runs build fast; the verdict does not depend on it). */
  shape: { input_len: number; output_len: number }
  concurrency: readonly number[]
}

/** Builds pipeline-shaped results of one gated sweep from per-run p95 ITLs. */
export class ResultFactory {
  private readonly runs = new Map<string, RunResult>()
  private readonly config: Record<string, unknown>

  constructor(readonly spec: SweepSpec) {
    this.config = pipelineResult({ shape: spec.shape, concurrency: [...spec.concurrency], repeats: 1, itl: () => 10 }).config
  }

  /** How many distinct runs were built through the pipeline so far. */
  get built(): number {
    return this.runs.size
  }

  /**
   * A result of `values.length` repeats: values[r][i] is the p95 ITL (ms) of repeat r at
   * concurrency[i]. `day` dates the result (refreshes are ordered by it).
   */
  result(values: ReadonlyArray<readonly number[]>, day: number): ResultFile {
    const points: PointResult[] = this.spec.concurrency.map((c, i) => ({
      ...this.spec.shape,
      concurrency: c,
      runs: values.map((v, r) => this.run(c, v[i]!, r)),
    }))
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

  /** Run `repeat` at concurrency c whose chunks come every `itlMs` (rounded to QUANT_STEP). */
  private run(c: number, itlMs: number, repeat: number): RunResult {
    const q = Math.round(Math.log(itlMs) / QUANT_STEP)
    const key = `${c}:${q}`
    let run = this.runs.get(key)
    if (run === undefined) {
      const value = Math.exp(q * QUANT_STEP)
      run = pipelineResult({ shape: this.spec.shape, concurrency: [c], repeats: 1, itl: () => value }).points[0]!.runs[0]!
      this.runs.set(key, run)
    }
    // The same records measured as another repeat: only the repeat's number and seed differ.
    return { ...run, repeat, seed: 1000 + repeat }
  }
}
