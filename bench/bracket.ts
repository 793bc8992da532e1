/**
 * Fewer GPU-minutes per verdict: what bracketing the baseline's crossing of the
 * target costs and what it catches, against the fixed list, on one simulated engine.
 *
 *   npx tsx bench/bracket.ts [--trials 300] [--seed N] [--time-scale 0.2] [--history 10]
 *
 * 1. The engine: one real sweep of the whole list against the batching simulator
 *    (a profile whose step costs 10 ms + 0.5 ms per running sequence, model
 *    time; 256 in / 32 out, C = 1, 8, 16, 32, 64, 96, 128, 12 prompts per slot),
 *    run at --time-scale and mapped back: GPU-seconds of a point = (its measured
 *    duration + its warmup wave) / time scale. Its p95 TPOT per point is the
 *    engine's curve (the target, p95 TPOT ≤ 50 ms of model time, is crossed
 *    between two of its concurrencies).
 * 2. The gate: per trial a baseline of --history refreshes (3 repeats of the whole
 *    list, each refresh a day), drawn from that curve with bench/lib's GPU noise
 *    model (run-to-run CV 2.5 % per point, ~1 % day drift, 3 % of runs disturbed
 *    8–20 %), every run built through the pipeline (bench/lib/pipeline-results.ts);
 *    then a PR of 3 repeats on a new day, unchanged or 10 % slower (every step ×
 *    1.1, as `servegate sim --slowdown 1.1`), measured twice from the same draws:
 *    the whole list (fixed), and the bracket src/gate/bracket.ts places from that
 *    baseline (+ the ITL point C = 1). compareToBaseline decides; "blocks" is a
 *    verdict in the default fail-on (regression, broken, incomplete, not_comparable).
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { bracketForResult } from '../src/config/placement.js'
import { resolveConfig } from '../src/config/resolve.js'
import { applyBracket } from '../src/gate/bracket.js'
import { compareToBaseline } from '../src/gate/compare.js'
import { fingerprintOf } from '../src/gate/fingerprint.js'
import { DEFAULT_FAIL_ON, gateExit } from '../src/gate/outcome.js'
import type { Baseline, VerdictKind } from '../src/gate/types.js'
import { BUILTIN_PROFILES, startSim, type SimProfile } from '../src/sim/index.js'
import { appendRefresh } from '../src/gate/refresh.js'
import { readResultFile } from '../src/store/result-file.js'
import { runSweep } from '../src/sweep/run-sweep.js'
import type { ResultFile } from '../src/types.js'
import { createRng } from '../src/util/rng.js'
import { arg, day, GPU, pct, runLogWorse, type NoiseModel } from './lib/noise-model.js'
import { ResultFactory } from './lib/pipeline-results.js'

const TRIALS = arg('trials', 300)
const SEED = arg('seed', 20250611)
const TIME_SCALE = arg('time-scale', 0.2)
const HISTORY = arg('history', 10)
const REPEATS = 3
const LIST = [1, 8, 16, 32, 64, 96, 128]
const ITL_POINTS = [1]
const SHAPE = { input_len: 256, output_len: 32 }
const PROFILE: SimProfile = { ...BUILTIN_PROFILES.default!, name: 'bench-bracket', baseStepMs: 10, perSeqMs: 0.5 }

// --- 1. the engine, measured once ----------------------------------------------------------
const dir = mkdtempSync(join(tmpdir(), 'servegate-bench-bracket-'))
const sim = await startSim({ profile: PROFILE, timeScale: TIME_SCALE, seed: 5 })
let measured: ResultFile
try {
  const out = join(dir, 'engine.json')
  const cfg = resolveConfig({
    file: null,
    filePath: null,
    flags: {
      baseUrl: sim.url,
      inputLen: String(SHAPE.input_len),
      outputLen: String(SHAPE.output_len),
      concurrency: LIST.join(','),
      repeats: '1',
      seed: '1',
      out,
      target: `tpot:p95:${50 * TIME_SCALE}`,
    },
    env: {},
  })
  process.stderr.write(`measuring the engine: ${LIST.length} points against the simulator at time scale ${TIME_SCALE} …\n`)
  await runSweep(cfg, { log: () => {} })
  measured = await readResultFile(out)
} finally {
  await sim.close()
  rmSync(dir, { recursive: true, force: true })
}
const engine = LIST.map((c) => {
  const run = measured.points.find((p) => p.concurrency === c)!.runs[0]!
  const tpotModelMs = run.tpot_ms.p95! / TIME_SCALE
  // The warmup wave runs before the measured requests at the same load: GPU time too.
  const gpuS = (run.duration_s * (1 + (run.warmup_requests ?? 0) / run.num_prompts)) / TIME_SCALE
  return { c, tpotModelMs, gpuS }
})
const gpuMin = (concs: readonly number[]): number => (engine.filter((e) => concs.includes(e.c)).reduce((s, e) => s + e.gpuS, 0) * REPEATS) / 60

// --- 2. the gate, by Monte Carlo ------------------------------------------------------------
const model: NoiseModel = { ...GPU, name: 'gpu-per-point', metrics: LIST.map((c) => ({ name: `tpot c${c}`, higherIsBetter: false, cv: 0.025 })) }
const rng = createRng(SEED)
const full = new ResultFactory({ shape: SHAPE, concurrency: LIST })
const factories = new Map<string, ResultFactory>()

/** Per-run p95 TPOT (ms, model time) of one day's sweep of the whole list: values[repeat][point]. */
function drawDay(worse: number): number[][] {
  const offsets = day(rng, model)
  return Array.from({ length: REPEATS }, () => LIST.map((_, i) => engine[i]!.tpotModelMs * Math.exp(runLogWorse(rng, model, i, offsets[i]!, worse))))
}

function bracketedResult(baseline: Baseline, values: number[][], d: number): { result: ResultFile; concurrency: number[] } {
  const file = { sweeps: { gate: { shapes: [SHAPE], concurrency: LIST, placement: 'bracket' as const, itl_concurrency: ITL_POINTS } } }
  const { cfg } = applyBracket(resolveConfig({ file, filePath: 'servegate.yaml', flags: { sweep: 'gate' }, env: {} }), baseline, 'bench')
  const key = cfg.concurrency.join(',')
  let f = factories.get(key)
  if (!f) factories.set(key, (f = new ResultFactory({ shape: SHAPE, concurrency: cfg.concurrency })))
  const idx = cfg.concurrency.map((c) => LIST.indexOf(c))
  const result = f.result(
    values.map((v) => idx.map((i) => v[i]!)),
    d,
  )
  // As run-sweep records a bracketed sweep: its planned concurrencies and the placement.
  result.config = { ...result.config, concurrency: cfg.concurrency, ...(cfg.bracket ? { placement: bracketForResult(cfg.bracket) } : {}) }
  result.fingerprint = fingerprintOf(result)
  return { result, concurrency: cfg.concurrency }
}

interface Tally {
  blocked: number
  verdicts: Map<VerdictKind, number>
  gpuMin: number
}
const tally = (): Tally => ({ blocked: 0, verdicts: new Map(), gpuMin: 0 })
const cells = { fixed0: tally(), fixed10: tally(), bracket0: tally(), bracket10: tally() }
const count = (t: Tally, v: VerdictKind, minutes: number): void => {
  t.verdicts.set(v, (t.verdicts.get(v) ?? 0) + 1)
  if (gateExit(v, DEFAULT_FAIL_ON) !== 0) t.blocked++
  t.gpuMin += minutes
}
const started = Date.now()
for (let t = 0; t < TRIALS; t++) {
  let baseline: Baseline | null = null
  for (let d = 0; d < HISTORY; d++) baseline = appendRefresh(baseline, full.result(drawDay(1), d), { name: 'gate' })
  for (const [worse, fixedCell, bracketCell] of [
    [1, cells.fixed0, cells.bracket0],
    [1.1, cells.fixed10, cells.bracket10],
  ] as const) {
    const values = drawDay(worse)
    count(fixedCell, compareToBaseline(baseline!, full.result(values, HISTORY)).verdict, gpuMin(LIST))
    const b = bracketedResult(baseline!, values, HISTORY)
    count(bracketCell, compareToBaseline(baseline!, b.result).verdict, gpuMin(b.concurrency))
  }
}

// --- report ---------------------------------------------------------------------------------
const describe = (t: Tally): string =>
  [...t.verdicts.entries()]
    .sort((a, b) => b[1] - a[1])
    .map(([v, n]) => `${v} ${((n / TRIALS) * 100).toFixed(1)}%`)
    .join(', ')
process.stdout.write(`\nengine (model time): ${engine.map((e) => `C=${e.c} p95 TPOT ${e.tpotModelMs.toFixed(1)} ms, ${e.gpuS.toFixed(0)} GPU-s`).join('; ')}\n`)
process.stdout.write(
  `${TRIALS} PRs per cell, baselines of ${HISTORY} refreshes × ${REPEATS} repeats, PR ${REPEATS} repeats, no confirmation; ${((Date.now() - started) / 1000).toFixed(0)} s\n\n`,
)
process.stdout.write('| placement | GPU-min per PR | false alarms (0 %) | detects 10 % | verdicts at 0 % | verdicts at 10 % |\n|---|---|---|---|---|---|\n')
for (const [name, zero, ten] of [
  ['fixed list', cells.fixed0, cells.fixed10],
  ['bracket', cells.bracket0, cells.bracket10],
] as const) {
  process.stdout.write(
    `| ${name} | ${(zero.gpuMin / TRIALS).toFixed(1)} | ${pct(zero.blocked / TRIALS).trim()} | ${pct(ten.blocked / TRIALS).trim()} | ${describe(zero)} | ${describe(ten)} |\n`,
  )
}
