/**
 * Gate power: how often the decision rule cries wolf and how often it catches
 * a real regression, by Monte Carlo under realistic noise (docs/gate.md).
 *
 *   npx tsx bench/gate-power.ts [--scenario gpu|per-start] [--trials N] [--seed N] [--k X] [--pass-margin X]
 *     [--day-floor X] [--short-day-floor X] [--within-floor X] [--min-history N] ...
 *
 * A typical gate profile: one shape × 3 concurrencies of p95 ITL plus throughput
 * at target = 4 gated metrics. Baselines hold R refreshes of 3 runs, each on its
 * own day; the candidate runs 3 repeats on a new day and, with confirmation, the
 * extra repeats the verdict asks for on that same day. Two noise models:
 * - gpu: day drift (shared by every run of that day, partly shared across
 *   metrics) × run-to-run noise (CV 2–3 %) × occasional interference (a run
 *   8–20 % worse); histories of 1, 3 and 10 refreshes;
 * - per-start: the batching simulator's behaviour, runs of one start within
 *   0.3 % but 2 % or 3 % between starts; histories of 1, 2, 3, 4, 5 and 10.
 * Every row also gives the confirmation cost: the share of unchanged PRs that
 * ran extra repeats, and how many each of them ran. Exit 1 when a false-alarm
 * or detection target is missed (see `misses`).
 */
import { decideMetric, type Decision } from '../src/gate/decide.js'
import { DEFAULT_GATE_OPTIONS } from '../src/gate/options.js'
import type { GateOptions } from '../src/gate/types.js'
import { createRng, type Rng } from '../src/util/rng.js'
import { arg, day, GPU, hash, OUTLIER_MAX, OUTLIER_MIN, pct as p, runLogWorse, type NoiseModel } from './lib/noise-model.js'

/**
 * Per-start noise, as the batching simulator (`servegate sim --noise-cv`) and a server whose
 * speed is set at start (placement, clocks, memory layout) behave: runs of one start agree
 * within ~0.3 %, but every start draws its own factor, shared by all its metrics. `dayShared`
 * is set per row (2 % and 3 %).
 */
const PER_START: NoiseModel = {
  name: 'per-start',
  metrics: GPU.metrics.map((m) => ({ ...m, cv: 0.003 })),
  dayShared: 0.03,
  dayOwn: 0.002,
  outlierP: 0,
}
const REPEATS = 3

const opts: GateOptions = {
  ...DEFAULT_GATE_OPTIONS,
  k: arg('k', DEFAULT_GATE_OPTIONS.k),
  earlyK: arg('early-k', DEFAULT_GATE_OPTIONS.earlyK),
  passMargin: arg('pass-margin', DEFAULT_GATE_OPTIONS.passMargin),
  centerWindow: arg('center-window', DEFAULT_GATE_OPTIONS.centerWindow),
  dayFloor: arg('day-floor', DEFAULT_GATE_OPTIONS.dayFloor),
  shortDayFloor: arg('short-day-floor', DEFAULT_GATE_OPTIONS.shortDayFloor),
  withinFloor: arg('within-floor', DEFAULT_GATE_OPTIONS.withinFloor),
  minHistory: arg('min-history', DEFAULT_GATE_OPTIONS.minHistory),
  maxRepeats: arg('max-repeats', DEFAULT_GATE_OPTIONS.maxRepeats),
}
const TRIALS = arg('trials', 10000)
const SEED = arg('seed', 20240611)

/** One run's value (true level 100) of metric m on a day, with a regression factor applied (worse = >1). */
function run(rng: Rng, model: NoiseModel, m: number, dayOffset: number, worse: number): number {
  const logWorse = runLogWorse(rng, model, m, dayOffset, worse)
  // Worse means higher latency, lower throughput.
  return 100 * Math.exp(model.metrics[m]!.higherIsBetter ? -logWorse : logWorse)
}

type Outcome = 'regression' | 'undecided' | 'pass'

interface Trial {
  outcome: Outcome
  extra: number
}

/** One PR: baseline history of `refreshes` days, candidate on a new day; metric 1 (ITL c16) regressed by `factor`. */
function trial(rng: Rng, model: NoiseModel, refreshes: number, factor: number, confirm: boolean): Trial {
  const metrics = model.metrics
  const history = metrics.map(() => [] as number[][])
  for (let r = 0; r < refreshes; r++) {
    const d = day(rng, model)
    metrics.forEach((_, m) => history[m]!.push(Array.from({ length: REPEATS }, () => run(rng, model, m, d[m]!, 1))))
  }
  const today = day(rng, model)
  const cand = metrics.map((_, m) => Array.from({ length: REPEATS }, () => run(rng, model, m, today[m]!, m === 1 ? factor : 1)))
  const decideAll = (): Decision[] =>
    metrics.map((spec, m) =>
      decideMetric({ history: history[m]!, candidate: cand[m]!, higherIsBetter: spec.higherIsBetter, tolerance: opts.defaultTolerance }, opts),
    )
  let ds = decideAll()
  let extra = 0
  if (confirm && !ds.some((d) => d.status === 'regression') && ds.some((d) => d.status === 'undecided')) {
    const asks = ds.filter((d) => d.status === 'undecided' && d.extraRepeats !== null).map((d) => d.extraRepeats!)
    if (asks.length > 0) {
      extra = Math.max(...asks)
      metrics.forEach((_, m) => {
        for (let i = 0; i < extra; i++) cand[m]!.push(run(rng, model, m, today[m]!, m === 1 ? factor : 1))
      })
      ds = decideAll()
    }
  }
  const outcome: Outcome = ds.some((d) => d.status === 'regression')
    ? 'regression'
    : ds.some((d) => d.status === 'undecided')
      ? 'undecided'
      : 'pass'
  return { outcome, extra }
}

interface Row {
  label: string
  history: number
  confirm: boolean
  mode: string
  falseAlarm: number
  nullInconclusive: number
  /** Detection rate per injected regression factor, in the order of the scenario's factors. */
  detect: number[]
  /** Unchanged PRs: mean extra repeats over all, share that ran a confirmation, mean extra among those. */
  meanExtra: number
  confirming: number
  extraPerConfirming: number
}

/** `history` refreshes, with or without confirmation: false alarms and confirmation cost at ×1, detection at each factor. */
function scenario(model: NoiseModel, history: number, confirm: boolean, factors: readonly number[], label: string): Row {
  const rate = (factor: number, seedPart: string): { alarm: number; undecided: number; extra: number; confirming: number } => {
    // The GPU model keeps the seeds it always had, so its figures stay comparable across changes of the rule.
    const modelSeed = model.name === GPU.name ? 0 : hash(`${model.name} ${model.dayShared}`)
    const rng = createRng(SEED ^ (history * 7919) ^ (confirm ? 0x5bd1e995 : 0) ^ hash(seedPart) ^ modelSeed)
    let alarm = 0
    let undecided = 0
    let extra = 0
    let confirming = 0
    for (let t = 0; t < TRIALS; t++) {
      const tr = trial(rng, model, history, factor, confirm)
      if (tr.outcome === 'regression') alarm++
      if (tr.outcome === 'undecided') undecided++
      extra += tr.extra
      if (tr.extra > 0) confirming++
    }
    return { alarm: alarm / TRIALS, undecided: undecided / TRIALS, extra, confirming }
  }
  const none = rate(1, 'none')
  return {
    label,
    history,
    confirm,
    mode: confirm ? `${REPEATS} + confirm (≤${opts.maxRepeats})` : `${REPEATS} repeats`,
    falseAlarm: none.alarm,
    nullInconclusive: none.undecided,
    detect: factors.map((f) => rate(f, `r${Math.round((f - 1) * 100)}`).alarm),
    meanExtra: none.extra / TRIALS,
    confirming: none.confirming / TRIALS,
    extraPerConfirming: none.confirming > 0 ? none.extra / none.confirming : 0,
  }
}

const pctOf = (f: number): string => `${Math.round((f - 1) * 100)} %`

function table(rows: readonly Row[], factors: readonly number[], withLabel: boolean): void {
  const head = [
    ...(withLabel ? ['day drift'] : []),
    'history',
    'candidate runs',
    'false alarm / PR',
    'undecided (no change)',
    ...factors.map((f) => `detect ${pctOf(f)}`),
    'mean extra repeats',
    'PRs confirming',
    'extra repeats per confirming PR',
  ]
  console.log(`| ${head.join(' | ')} |`)
  console.log(`|${head.map(() => '---').join('|')}|`)
  for (const r of rows) {
    const cells = [
      ...(withLabel ? [r.label] : []),
      String(r.history),
      r.mode,
      p(r.falseAlarm),
      p(r.nullInconclusive),
      ...r.detect.map(p),
      r.meanExtra.toFixed(2),
      r.confirm ? p(r.confirming) : '–',
      r.confirm ? r.extraPerConfirming.toFixed(2) : '–',
    ]
    console.log(`| ${cells.join(' | ')} |`)
  }
}

const started = performance.now()
const only = process.argv.includes('--scenario') ? process.argv[process.argv.indexOf('--scenario') + 1] : null
console.log(
  `gate power: ${TRIALS} PRs per cell, seed ${SEED}, k=${opts.k}, earlyK=${opts.earlyK}, passMargin=${opts.passMargin}, centerWindow=${opts.centerWindow}, ` +
    `dayFloor=${opts.dayFloor}, shortDayFloor=${opts.shortDayFloor}, withinFloor=${opts.withinFloor}, minHistory=${opts.minHistory}, tolerance=${opts.defaultTolerance}`,
)
const misses: string[] = []

const GPU_FACTORS = [1.05, 1.1, 1.15]
if (only === null || only === GPU.name) {
  console.log(
    `\n[gpu] run CV ${GPU.metrics.map((m) => m.cv * 100).join('/')} %, day drift ${(GPU.dayShared * 100).toFixed(1)} % shared + ${(GPU.dayOwn * 100).toFixed(1)} % own, ` +
      `${(GPU.outlierP * 100).toFixed(1)} % of runs ${OUTLIER_MIN * 100}–${OUTLIER_MAX * 100} % worse; regression injected into one metric (p95 ITL c16)\n`,
  )
  const rows: Row[] = []
  for (const history of [1, 3, 10]) for (const confirm of [false, true]) rows.push(scenario(GPU, history, confirm, GPU_FACTORS, 'gpu'))
  table(rows, GPU_FACTORS, false)
  // The gate's targets hold for a full history (the default 10 refreshes); shorter histories
  // are shown for what they are. Refuse to present figures that miss the targets silently.
  for (const r of rows.filter((r) => r.history >= 10)) {
    if (r.falseAlarm > 0.01 || (r.confirm && r.detect[1]! < 0.95)) misses.push(`gpu, history ${r.history}, ${r.mode}`)
  }
}

const PER_START_FACTORS = [1.1, 1.2]
const PER_START_HISTORIES = [1, 2, 3, 4, 5, 10]
if (only === null || only === PER_START.name) {
  console.log(
    `\n[per-start] run CV ${PER_START.metrics[0]!.cv * 100} %, one factor per start (refresh or candidate sweep) of 2 % or 3 % shared by all metrics ` +
      `+ ${(PER_START.dayOwn * 100).toFixed(1)} % own, no interference; regression injected into one metric (p95 ITL c16)\n`,
  )
  const rows: Row[] = []
  for (const drift of [0.02, 0.03]) {
    const model = { ...PER_START, dayShared: drift }
    for (const history of PER_START_HISTORIES) for (const confirm of [false, true]) rows.push(scenario(model, history, confirm, PER_START_FACTORS, `${drift * 100} %`))
  }
  table(rows, PER_START_FACTORS, true)
  // A short history must not cry wolf: per-start drift of 2–3 % is plausible for any server.
  for (const r of rows) if (r.history < opts.minHistory && r.falseAlarm > 0.01) misses.push(`per-start ${r.label}, history ${r.history}, ${r.mode}`)
}

console.log(`\n(${((performance.now() - started) / 1000).toFixed(1)} s)`)
if (misses.length > 0) {
  console.log(`TARGETS MISSED (≤ 1 % false alarms everywhere, ≥ 95 % detection of 10 % with confirmation at a full history) in: ${misses.join('; ')}`)
  process.exitCode = 1
}
