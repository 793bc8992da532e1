/**
 * A/B against a stored baseline: the baseline gate (`servegate compare`, with
 * the Action's confirmation repeats) and the paired A/B verdict (`servegate ab`)
 * on the same simulated PRs, by Monte Carlo under the noise of
 * bench/lib/noise-model.ts (GPU: run CV 2–3 %, ~1 % day drift, 3 % of runs
 * 8–20 % worse from interference).
 *
 *   npx tsx bench/ab-power.ts [--trials N] [--seed N] [--rounds 4,6] [--histories 3,10]
 *     [--host-drift 0.04] [--job-drift 0.005] [--start-min 5] [--slot-min X] [--only ab|gate]
 *
 * The gated sweep: p95 ITL at C = 1, 16, 64 and throughput at target = 4 gated
 * metrics. Every result is built through the pipeline (bench/lib/pipeline-results.ts)
 * and decided by compareToBaseline / compareAB themselves.
 * - baseline gate: H refreshes of 3 repeats, each on its own day; the PR's
 *   3 repeats on a new day, plus the confirmation repeats an undecided
 *   verdict asks for (same day), as the Action with `confirm: true` runs them;
 * - A/B: R rounds of slots A B, B A, … (src/ab/run-ab.ts slotOrder) in one job
 *   on one day; slot r of B is paired with slot r of A.
 * Scenarios: no change; B 5 % and 10 % slower (every point); the host 4 % slower
 * since the baseline's refreshes (the PR changes nothing, or is 10 % slower);
 * the host getting 0.5 % slower with every sweep of the job (a job of 8 slots
 * ends 3.5 % slower; the gate's 3 repeats 1 %, and its confirmation goes on).
 * Every scenario sees the same random draws (trial t has the same days and run
 * noise in each), so rows differ only by what the scenario changes.
 * Exit 1 when the A/B verdict at the default rounds misses ≤ 1 % false alarms
 * per PR or ≥ 95 % detection of 10 %, with or without host drift.
 */
import { slotOrder } from '../src/ab/run-ab.js'
import { compareAB } from '../src/ab/verdict.js'
import { autoWarmupRequests } from '../src/config/defaults.js'
import { compareToBaseline } from '../src/gate/compare.js'
import { mergeResults } from '../src/gate/merge.js'
import type { Baseline, Verdict } from '../src/gate/types.js'
import { BUILTIN_PROFILES } from '../src/sim/profiles.js'
import { appendRefresh } from '../src/store/baseline.js'
import type { ResultFile } from '../src/types.js'
import { createRng, type Rng } from '../src/util/rng.js'
import { virtualRun } from '../test/sim/virtual-sweep.js'
import { arg, day, GPU, hash, pct, runLogWorse } from './lib/noise-model.js'
import { QUANT_STEP, ResultFactory } from './lib/pipeline-results.js'

function listArg(name: string, fallback: number[]): number[] {
  const i = process.argv.indexOf(`--${name}`)
  return i >= 0 ? String(process.argv[i + 1]).split(',').map(Number) : fallback
}

const TRIALS = arg('trials', 1000)
const SEED = arg('seed', 20240611)
const ROUNDS = process.argv.includes('--only') && process.argv[process.argv.indexOf('--only') + 1] === 'gate' ? [] : listArg('rounds', [4, 6])
const DEFAULT_ROUNDS = 4
/** `--only ab` or `--only gate` leaves the other method out (quicker when tuning one of them). */
const ONLY = process.argv.includes('--only') ? process.argv[process.argv.indexOf('--only') + 1] : null
const HISTORIES = ONLY === 'ab' ? [] : listArg('histories', [3, 10])
const HOST_DRIFT = arg('host-drift', 0.04)
/** Host drift during the job, per sweep measured (the same pace for both methods' jobs). */
const JOB_DRIFT = arg('job-drift', 0.005)
const REPEATS = 3
/** Minutes to start (load) a server, for A/B with exclusive slots. */
const START_MIN = arg('start-min', 5)

/** The gated sweep (METHODOLOGY: 4096 in / 512 out; C = 1, 16, 64). */
const CONCURRENCY = [1, 16, 64] as const
const METHOD_SHAPE = { input_len: 4096, output_len: 512 }
const PROMPTS_PER_CONCURRENCY = 12
/** True p95 ITL (ms) per point: the 50 ms TPOT target is crossed between C = 16 and 64. */
const TRUE_ITL = [12, 28, 64] as const
/** Synthetic requests are short (fast to build); the gated values are what the noise model draws. */
const factory = new ResultFactory({ shape: { input_len: 64, output_len: 16 }, concurrency: CONCURRENCY })

interface Scenario {
  label: string
  /** B (the PR) is this much slower at every point (× step time). */
  factor: number
  /** The host is this much slower on the PR's day than on the refreshes' days (fraction). */
  host: number
  /** The host gets this much slower (fraction) with every sweep the job measures, from 0 at the first. */
  job: number
}

const SCENARIOS: Scenario[] = [
  { label: 'no change', factor: 1, host: 0, job: 0 },
  { label: 'B 5 % slower', factor: 1.05, host: 0, job: 0 },
  { label: 'B 10 % slower', factor: 1.1, host: 0, job: 0 },
  { label: `host +${HOST_DRIFT * 100} % since refresh, no change`, factor: 1, host: HOST_DRIFT, job: 0 },
  { label: `host +${HOST_DRIFT * 100} % since refresh, B 10 % slower`, factor: 1.1, host: HOST_DRIFT, job: 0 },
  { label: `host +${JOB_DRIFT * 100} % per sweep during the job, no change`, factor: 1, host: 0, job: JOB_DRIFT },
  { label: `host +${JOB_DRIFT * 100} % per sweep during the job, B 10 % slower`, factor: 1.1, host: 0, job: JOB_DRIFT },
]

/** One measured sweep: p95 ITL per point on a day, `logShift` (host) and `worse` (engine) applied. */
function sweep(rng: Rng, dayOffsets: readonly number[], logShift: number, worse: number): number[] {
  return TRUE_ITL.map((itl, i) => itl * Math.exp(runLogWorse(rng, GPU, i, dayOffsets[i]! + logShift, worse)))
}

/** Host drift within a job: the job's sweep s (from 0) is measured log(1 + job · s) slower. */
const ramp = (job: number, s: number): number => Math.log(1 + job * s)

type Kind = Verdict['verdict']

interface GateTrial {
  verdict: Kind
  repeats: number
}

/** The refreshes of a baseline: `days` days of 3 repeats each (the same for every scenario of a trial). */
function history(seed: number, days: number): ResultFile[] {
  const rng = createRng(seed ^ hash('history'))
  return Array.from({ length: days }, (_, d) => {
    const offs = day(rng, GPU)
    return factory.result(Array.from({ length: REPEATS }, () => sweep(rng, offs, 0, 1)), d)
  })
}

/** The baseline gate on one PR: 3 repeats on a new day, then the confirmation an undecided verdict asks for. */
function gateTrial(seed: number, baseline: Baseline, s: Scenario, prDay: number): GateTrial {
  const rng = createRng(seed ^ hash('candidate'))
  const offs = day(rng, GPU)
  const host = Math.log(1 + s.host)
  // The job's slots are its repeats; the drift keeps its pace through confirmation repeats.
  const repeat = (r: number): number[] => sweep(rng, offs, host + ramp(s.job, r), s.factor)
  let candidate = factory.result(Array.from({ length: REPEATS }, (_, r) => repeat(r)), prDay)
  let verdict = compareToBaseline(baseline, candidate)
  let repeats = REPEATS
  if (verdict.verdict === 'undecided' && verdict.confirm !== null) {
    const extra = verdict.confirm.extraRepeats
    const more = factory.result(Array.from({ length: extra }, (_, r) => repeat(REPEATS + r)), prDay)
    candidate = mergeResults(candidate, more)
    verdict = compareToBaseline(baseline, candidate)
    repeats += extra
  }
  return { verdict: verdict.verdict, repeats }
}

/** The A/B verdict on one PR: R rounds of counterbalanced slots in one job, each side's result merged slot by slot. */
function abTrial(seed: number, rounds: number, s: Scenario, prDay: number): Kind {
  const rng = createRng(seed ^ hash(`ab ${rounds}`))
  const offs = day(rng, GPU)
  // Both sides are measured today: the host's change since any refresh moves A and B alike.
  const host = Math.log(1 + s.host)
  const order = slotOrder(rounds)
  const acc: { A?: ResultFile; B?: ResultFile } = {}
  for (const [i, side] of order.entries()) {
    const slot = factory.result([sweep(rng, offs, host + ramp(s.job, i), side === 'B' ? s.factor : 1)], prDay)
    const merged = acc[side] === undefined ? slot : mergeResults(acc[side]!, slot)
    merged.config = { ...merged.config, repeats: rounds }
    acc[side] = merged
  }
  return compareAB(acc.A!, acc.B!).verdict
}

interface Tally {
  regression: number
  undecided: number
  pass: number
  other: number
  repeats: number
}

const tally = (): Tally => ({ regression: 0, undecided: 0, pass: 0, other: 0, repeats: 0 })
function count(t: Tally, v: Kind, repeats = 0): void {
  if (v === 'regression') t.regression++
  else if (v === 'undecided') t.undecided++
  else if (v === 'pass' || v === 'improvement') t.pass++
  else t.other++
  t.repeats += repeats
}

const started = performance.now()
console.log(
  `A/B vs baseline power: ${TRIALS} PRs per scenario, seed ${SEED}; noise: run CV ${GPU.metrics.slice(0, 3).map((m) => m.cv * 100).join('/')} % ` +
    `(p95 ITL c1/c16/c64), day drift ${(GPU.dayShared * 100).toFixed(1)} % shared + ${(GPU.dayOwn * 100).toFixed(1)} % own, ` +
    `${(GPU.outlierP * 100).toFixed(0)} % of runs 8–20 % worse; throughput at target follows from the curve.`,
)
console.log(`Runs built through summarizeRun/assessValidity (values rounded to ${QUANT_STEP * 100} % in log space), decided by compareToBaseline and compareAB.\n`)

const maxHistory = Math.max(0, ...HISTORIES)
const gate = new Map<string, Tally>()
const ab = new Map<string, Tally>()
for (const s of SCENARIOS) {
  for (const h of HISTORIES) gate.set(`${s.label}|${h}`, tally())
  for (const r of ROUNDS) ab.set(`${s.label}|${r}`, tally())
}
for (let t = 0; t < TRIALS; t++) {
  const seed = (SEED ^ Math.imul(t + 1, 0x9e3779b1)) >>> 0
  const days = history(seed, maxHistory)
  const baselines = new Map<number, Baseline>()
  for (const h of HISTORIES) {
    let b: Baseline | null = null
    for (const r of days.slice(-h)) b = appendRefresh(b, r, { maxHistory: h })
    baselines.set(h, b!)
  }
  for (const s of SCENARIOS) {
    for (const h of HISTORIES) {
      const g = gateTrial(seed, baselines.get(h)!, s, maxHistory)
      count(gate.get(`${s.label}|${h}`)!, g.verdict, g.repeats)
    }
    for (const r of ROUNDS) count(ab.get(`${s.label}|${r}`)!, abTrial(seed, r, s, maxHistory))
  }
}

const cell = (t: Tally): string => `${pct(t.regression / TRIALS)} / ${pct(t.undecided / TRIALS)}${t.other > 0 ? ` (+${t.other} other)` : ''}`
const head = ['scenario', ...HISTORIES.map((h) => `baseline gate, ${h} refreshes`), ...ROUNDS.map((r) => `A/B, ${r} rounds`)]
console.log('Share of PRs with verdict regression / undecided (the rest pass). A regression on "no change" is a false alarm;')
console.log('on "B … slower" it is a detection. Host drift "since refresh" happens between the baseline and the PR.\n')
console.log(`| ${head.join(' | ')} |`)
console.log(`|${head.map(() => '---').join('|')}|`)
for (const s of SCENARIOS) {
  console.log(`| ${[s.label, ...HISTORIES.map((h) => cell(gate.get(`${s.label}|${h}`)!)), ...ROUNDS.map((r) => cell(ab.get(`${s.label}|${r}`)!))].join(' | ')} |`)
}

// Cost: the sweep's time at the methodology's shape, from the simulator's default profile in
// virtual time (illustrative, like the profile), or --slot-min from a real GPU's logs.
const profile = BUILTIN_PROFILES.default!
const pointMin = CONCURRENCY.map((c) => {
  const n = PROMPTS_PER_CONCURRENCY * c
  const v = virtualRun(profile, c, METHOD_SHAPE.input_len, METHOD_SHAPE.output_len, PROMPTS_PER_CONCURRENCY)
  const measuredMs = (n * METHOD_SHAPE.output_len * 1000) / v.outputTokPerS
  // Warmup requests run at the same pace before the measured ones.
  return (measuredMs * (n + autoWarmupRequests(c))) / n / 60_000
})
const modelled = pointMin.reduce((a, b) => a + b, 0)
const T = arg('slot-min', modelled)
const noChange = SCENARIOS[0]!.label
console.log(
  `\nGPU time per verdict at ${METHOD_SHAPE.input_len} in / ${METHOD_SHAPE.output_len} out, C = ${CONCURRENCY.join(', ')}, ` +
    `${PROMPTS_PER_CONCURRENCY} prompts per concurrency + auto warmup: one sweep T = ${T.toFixed(2)} min ` +
    (process.argv.includes('--slot-min')
      ? '(--slot-min)'
      : `(the sim's default profile in virtual time: ${pointMin.map((m, i) => `C=${CONCURRENCY[i]} ${m.toFixed(2)}`).join(', ')} min; illustrative, pass --slot-min from your GPU)`) +
    `; server start S = ${START_MIN} min (--start-min). Minutes of the gate's GPUs (× GPUs per server for GPU-minutes):\n`,
)
console.log('| method | formula | sweeps per verdict (no change, mean) | minutes per verdict |')
console.log('|---|---|---|---|')
for (const h of HISTORIES) {
  const mean = gate.get(`${noChange}|${h}`)!.repeats / TRIALS
  console.log(`| baseline gate, ${h} refreshes | repeats × T (3 + confirmation) | ${mean.toFixed(2)} | ${(mean * T).toFixed(1)} |`)
}
for (const r of ROUNDS) {
  console.log(`| A/B, ${r} rounds, both servers up | 2 × rounds × T (two replicas held: × 2 GPUs) | ${2 * r} | ${(2 * r * T).toFixed(1)} (${(4 * r * T).toFixed(1)} on two replicas) |`)
  console.log(`| A/B, ${r} rounds, exclusive | 2 × rounds × (T + S) | ${2 * r} | ${(2 * r * (T + START_MIN)).toFixed(1)} |`)
}
console.log(`\nThe baseline gate's refreshes cost 3 × T each on top, shared by the PRs between them. (${factory.built} distinct runs built; ${((performance.now() - started) / 1000).toFixed(1)} s)`)

const misses: string[] = []
const abAt = (label: string): Tally => ab.get(`${label}|${DEFAULT_ROUNDS}`)!
if (ROUNDS.includes(DEFAULT_ROUNDS)) {
  for (const s of SCENARIOS) {
    const t = abAt(s.label)
    if (s.factor === 1 && t.regression / TRIALS > 0.01) misses.push(`A/B ${DEFAULT_ROUNDS} rounds, ${s.label}: ${pct(t.regression / TRIALS).trim()} false alarms`)
    if (s.factor >= 1.1 && t.regression / TRIALS < 0.95) misses.push(`A/B ${DEFAULT_ROUNDS} rounds, ${s.label}: ${pct(t.regression / TRIALS).trim()} detected`)
  }
}
if (misses.length > 0) {
  console.log(`TARGETS MISSED (A/B at the default rounds: ≤ 1 % false alarms per PR, ≥ 95 % detection of 10 %): ${misses.join('; ')}`)
  process.exitCode = 1
}
