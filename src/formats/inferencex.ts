/**
 * A servegate result → InferenceX-style aggregated rows, one per point
 * (shape × concurrency): the median across the point's usable runs (valid, or
 * imported with no fault found) of every figure. Pure.
 *
 * - Latencies in SECONDS (`mean_ttft`, `p95_tpot`, …), as InferenceX writes them.
 * - Interactivity `*_intvty` = 1 / TPOT s (= 1000 / TPOT ms), tok/s per user,
 *   computed from the row's own TPOT figure, so `p95_intvty` = 1 / `p95_tpot`.
 * - Per GPU: `tput_per_gpu` = total (input + output) tok/s ÷ GPUs,
 *   `output_tput_per_gpu`, `input_tput_per_gpu`; GPUs unknown → null (never
 *   divided by a guessed 1). `tp` is the GPU count (servegate sees the GPUs
 *   serving one model instance, not how they are split); `ep`, `precision`: null.
 */
import { gpuCount, interactivity, perGpu } from '../analysis/per-gpu.js'
import { figuresView } from '../analysis/unchecked.js'
import type { LatencyStats, ResultFile, RunResult } from '../types.js'
import { finiteMedian } from '../util/median.js'

/** One row; keys as InferenceX names them (null where servegate does not know). */
export type InferenceXRow = Record<string, string | number | null>

const METRICS = ['ttft', 'tpot', 'itl', 'e2el'] as const
const STATS: Array<[string, keyof LatencyStats]> = [
  ['mean', 'mean'],
  ['median', 'p50'],
  ['p95', 'p95'],
  ['p99', 'p99'],
]

const seconds = (ms: number | null): number | null => (ms === null ? null : ms / 1000)

/** The rows of a result, sorted by shape then concurrency; points without a usable run are left out. */
export function inferenceXRows(result: ResultFile): InferenceXRow[] {
  const gpus = gpuCount(result.env)
  const env = result.env
  const model = typeof result.config['model'] === 'string' ? result.config['model'] : env.model.id
  const rows: InferenceXRow[] = []
  const points = [...figuresView(result.points)].sort((a, b) => a.input_len - b.input_len || a.output_len - b.output_len || a.concurrency - b.concurrency)
  for (const p of points) {
    const runs = p.runs.filter((r) => r.validity.valid)
    if (runs.length === 0) continue
    const of = (get: (r: RunResult) => number | null): number | null => finiteMedian(runs.map(get))
    const total = of((r) => r.total_token_throughput)
    const output = of((r) => r.output_throughput)
    const input = of((r) => r.total_token_throughput - r.output_throughput)
    const row: InferenceXRow = {
      hw: env.gpu.names[0] ?? 'unknown',
      conc: p.concurrency,
      image: env.container_digest,
      model,
      framework: env.engine.name,
      framework_version: env.engine.version,
      precision: null,
      isl: p.input_len,
      osl: p.output_len,
      tp: gpus,
      ep: null,
      gpus,
      repeats: runs.length,
      tput: total,
      output_tput: output,
      tput_per_gpu: perGpu(total, gpus),
      output_tput_per_gpu: perGpu(output, gpus),
      input_tput_per_gpu: perGpu(input, gpus),
      request_throughput: of((r) => r.request_throughput),
    }
    for (const m of METRICS) {
      for (const [name, key] of STATS) row[`${name}_${m}`] = seconds(of((r) => r[`${m}_ms`][key]))
    }
    for (const [name, key] of STATS) {
      const tpotMs = of((r) => r.tpot_ms[key])
      row[`${name}_intvty`] = interactivity(tpotMs)
    }
    rows.push(row)
  }
  return rows
}
