import { compareToBaseline } from '../src/gate/compare.js'
import { appendRefresh } from '../src/store/baseline.js'
import type { Baseline } from '../src/gate/types.js'
import { createRng } from '../src/util/rng.js'
import { day, GPU, runLogWorse, type NoiseModel } from '../bench/lib/noise-model.js'
import { ResultFactory } from '../bench/lib/pipeline-results.js'
const drift = Number(process.argv[2] ?? 0), h = Number(process.argv[3] ?? 10), trials = Number(process.argv[4] ?? 10)
const C = [1, 16, 64], ITL = [12, 28, 64]
const factory = new ResultFactory({ shape: { input_len: 64, output_len: 16 }, concurrency: C })
const model: NoiseModel = { name: 'x', metrics: [0.02, 0.025, 0.03].map((cv, i) => ({ name: 'm' + i, higherIsBetter: false, cv })), dayShared: drift, dayOwn: GPU.dayOwn, outlierP: GPU.outlierP }
const sweep = (rng: any, start: number[]) => ITL.map((v, k) => v * Math.exp(runLogWorse(rng, model, k, start[k]!, 1)))
const blindCount = new Map<string, number>()
let red = 0
for (let t = 0; t < trials; t++) {
  const rng = createRng(500 + t)
  let b: Baseline | null = null
  for (let d = 0; d < h; d++) { const st = day(rng, model); b = appendRefresh(b, factory.result([sweep(rng, st), sweep(rng, st), sweep(rng, st)], d), { maxHistory: h }) }
  const st = day(rng, model)
  const v = compareToBaseline(b!, factory.result([sweep(rng, st), sweep(rng, st), sweep(rng, st)], h))
  if (v.verdict !== 'pass' && v.verdict !== 'improvement') red++
  for (const r of v.rows.filter((r) => r.gated)) {
    const k = `${r.label} ${r.status}${r.blind ? ' blind' : ''}`
    blindCount.set(k, (blindCount.get(k) ?? 0) + 1)
    if (t < 3) console.log(r.label, r.status, 'd', r.delta_pct?.toFixed(1), 'σ', r.sigma_pct?.toFixed(2), 'bar', r.bar_pct?.toFixed(1), 'mdc', r.mdc_pct?.toFixed(1))
  }
}
console.log('red', red, '/', trials); console.log([...blindCount.entries()].sort())
