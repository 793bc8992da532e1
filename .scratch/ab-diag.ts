import { plannedStarts, slotOrder } from '../src/ab/schedule.js'
import { compareAB } from '../src/ab/verdict.js'
import { mergeResults } from '../src/gate/merge.js'
import { createRng } from '../src/util/rng.js'
import { day, GPU, runLogWorse, type NoiseModel } from '../bench/lib/noise-model.js'
import { ResultFactory } from '../bench/lib/pipeline-results.js'
import { stepOptions } from '../src/gate/ladder.js'
import { DEFAULT_GATE_OPTIONS } from '../src/gate/options.js'
const drift = Number(process.argv[2] ?? 0), rounds = Number(process.argv[3] ?? 6), trials = Number(process.argv[4] ?? 5)
const C = [1, 16, 64], ITL = [12, 28, 64]
const factory = new ResultFactory({ shape: { input_len: 64, output_len: 16 }, concurrency: C })
const model: NoiseModel = { name: 'x', metrics: [0.02, 0.025, 0.03].map((cv, i) => ({ name: 'm' + i, higherIsBetter: false, cv })), dayShared: drift, dayOwn: GPU.dayOwn, outlierP: GPU.outlierP }
const opts = stepOptions('ab', { hasReference: true, confirm: true, tolerance: DEFAULT_GATE_OPTIONS.defaultTolerance })
for (let t = 0; t < trials; t++) {
  const rng = createRng(1000 + t)
  const order = slotOrder(rounds)
  const firstSlots = new Set(plannedStarts(order, 'exclusive').map((s) => s.slots[0]! - 1))
  const acc: any = {}
  let start: number[] = []
  for (const [i, side] of order.entries()) {
    if (firstSlots.has(i)) start = day(rng, model)
    const slot = factory.result([ITL.map((v, k) => v * Math.exp(runLogWorse(rng, model, k, start[k]!, 1)))], 10)
    acc[side] = acc[side] === undefined ? slot : mergeResults(acc[side], slot)
    acc[side].config = { ...acc[side].config, repeats: rounds }
  }
  const v = compareAB(acc.A, acc.B, opts)
  console.log(v.verdict, v.rows.filter((r) => r.gated).map((r) => `${r.label} ${r.status} d=${r.delta_pct?.toFixed(1)} bar=${r.bar_pct?.toFixed(1)} σ=${r.sigma_pct?.toFixed(2)} mdc=${r.mdc_pct?.toFixed(1)} n=${r.n_candidate}`).join(' | '))
}
