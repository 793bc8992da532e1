/**
 * Gate false alarms, power and price: how often the gate AS THE PRODUCT RUNS
 * IT turns an unchanged pull request red, how often it calls a real
 * regression one, and what each PR costs in engine starts, point-runs and
 * GPU-minutes, by Monte Carlo on pipeline-shaped result files
 * (bench/lib/pipeline-results.ts: every run built from request records
 * through summarizeRun/assessValidity, throughput at target from the curve,
 * fingerprints), decided by the product's own functions only: compareStarts
 * (the stored baseline's sequential rows over the candidate's engine starts)
 * on a baseline built with appendRefresh, lookAt/compareAB for the A/B (each
 * side started afresh for every slot, looks after every round), nextStep and
 * stepOptions for the ladder, and gateExit(verdict, DEFAULT_FAIL_ON) for
 * red/green. Every verdict is checked to gate exactly the sweep's rows.
 *
 *   npm run bench -- gate-false-alarms
 *   npx tsx bench/gate-false-alarms.ts [--trials N] [--seed N] [--only ladder|starts]
 *     [--rounds 2] [--max-rounds 32] [--max-starts 8] [--workers 2] [--first-repeats 1]
 *     [--noise-history 30] [--rows 4,7,14] [--drifts 0,0.02,0.03,0.05]
 *
 * Noise model. Every ENGINE START draws a log offset ~ N(0, drift) shared by
 * every metric of that start (drift 0 / 2 / 3 / 5 %: placement, clocks,
 * memory layout set at start), plus the GPU model of bench/lib/noise-model.ts:
 * a small per-metric offset per start (N(0, 0.7 %)), run-to-run noise per run
 * and point (CV 2 % at the lowest concurrency to 3 % at the highest) and
 * interference (3 % of point-runs 8–20 % worse). Throughput at target is not
 * drawn: it follows from each repeat's curve, as the product computes it.
 * - a baseline refresh is one start with 3 repeats; refreshes are the last
 *   1 / 3 / 10 of the same 10 starts (one baseline per history length);
 * - every baseline also holds a noise history of 30 earlier starts of the
 *   base engine, 3 repeats each (--noise-history; what a nightly
 *   `noise-only` refresh records in a month): σ's history, about 90 degrees
 *   of freedom with the refreshes, whatever the refreshes forming the centre;
 * - the candidate's first sweep is one start with 1 run per point (as the
 *   Action runs it where a sequential step can follow; --first-repeats); every
 *   later candidate start, one run per point;
 * - the A/B starts each side afresh for every slot, one run per point, in
 *   slotOrder (A B, B A, …), looking after every round from --rounds on; after
 *   each look the next round measures only the points of rows still open
 *   (replayEscalating, as servegate ab runs it), and only those count.
 * Scenarios (the candidate B; A is always the base engine):
 * - `u`: unchanged; `r`: one gated p95 ITL row × 1.10 (C = 16 of the first
 *   shape, which brackets the crossing, so its throughput row moves too);
 * - `all`: every point × 1.10 (a uniform slowdown);
 * - `faster`: every other point 10 % faster, the regressed point unchanged
 *   (must stay green);
 * - `step`: unchanged, but the host gets 5 % slower for both sides from the
 *   A/B's third round on (must stay green);
 * - `apart`: B drifts 0.5 % worse per round against A (reported).
 * What runs per PR:
 * (a) ladder with a reference command: baseline (the first sweep against the
 *     stored baseline) → A/B when it leaves a row open, as the Action with
 *     `gate.reference_command` runs it;
 * (b) starts: no reference, servegate starts the candidate's engine: baseline
 *     → more candidate starts (up to --max-starts in all); reported, with its
 *     95th percentile of starts; `compare` alone is its first look.
 * A false alarm is a red check on an unchanged (`u`, `faster`, `step`)
 * candidate; a detection is the final verdict `regression`. Cost per PR: engine
 * starts of the candidate and both A/B sides (the baseline's refreshes are
 * the base branch's), point-runs, and GPU-minutes at 1 minute per point-run
 * plus 1, 3 or 5 minutes per engine start.
 * Trials share their random draws across cells (common random numbers).
 * Trials run in --workers processes (default 2); every trial has its own seed.
 * A measurement, not a test: always exits 0; goals missed are listed at the end.
 */
import { execFileSync, fork } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { slotOrder } from '../src/plan/ab-schedule.js'
import { DEFAULT_MAX_ROUNDS, lookAt } from '../src/gate/ab-looks.js'
import { mergeStart, openPoints, replayEscalating } from '../src/gate/escalate.js'
import { pointScope } from '../src/gate/metric-keys.js'
import { firstStep, nextStep, stepOptions, type LadderStep } from '../src/gate/ladder.js'
import { DEFAULT_FAIL_ON, gateExit } from '../src/gate/outcome.js'
import { compareStarts } from '../src/gate/seq-baseline.js'
import type { Baseline, Verdict } from '../src/gate/types.js'
import { appendNoise, appendRefresh } from '../src/gate/refresh.js'
import type { ResultFile } from '../src/types.js'
import { createRng, type Rng } from '../src/util/rng.js'
import { arg, day, GPU, hash, runLogWorse, type NoiseModel } from './lib/noise-model.js'
import { ResultFactory, type Shape } from './lib/pipeline-results.js'

// ---------------------------------------------------------------------------
// Settings
// ---------------------------------------------------------------------------

function strArg(name: string): string | null {
  const i = process.argv.indexOf(`--${name}`)
  return i >= 0 ? (process.argv[i + 1] ?? null) : null
}

const DEFAULT_TRIALS = 200
const TRIALS = arg('trials', DEFAULT_TRIALS)
const SEED = arg('seed', 20250611)
const ONLY = strArg('only')
if (ONLY !== null && !['ladder', 'starts'].includes(ONLY)) throw new Error(`--only ${ONLY}: expected ladder or starts`)
const RUN_LADDER = ONLY === null || ONLY === 'ladder'
const RUN_STARTS = ONLY === null || ONLY === 'starts'
/** The A/B's first look (its --rounds), then a look after every round up to MAX_ROUNDS (the Action's max-rounds). */
const ROUNDS = arg('rounds', 2)
const MAX_ROUNDS = arg('max-rounds', DEFAULT_MAX_ROUNDS)
/** Candidate engine starts in all (the first sweep included) without a reference command. */
const MAX_STARTS = arg('max-starts', 8)
const WORKERS = Math.max(1, Math.floor(arg('workers', 2)))
/** `--worker i/n`: this process runs trials t ≡ i (mod n) and reports its counts to the parent. */
const WORKER = strArg('worker')

const STARTED = performance.now()
/** `--rows 14` / `--drifts 0.03`: a subset of the grid (comma-separated), for a quick look at one cell. */
const listArg = (name: string, all: number[]): number[] => {
  const v = strArg(name)
  if (v === null) return all
  const xs = v.split(',').map(Number)
  if (xs.some((x) => !all.includes(x))) throw new Error(`--${name} ${v}: expected some of ${all.join(', ')}`)
  return xs
}
const DRIFTS = listArg('drifts', [0, 0.02, 0.03, 0.05])
const ROWS = listArg('rows', [4, 7, 14])
const REFRESHES = [1, 3, 10]
const MAX_REFRESHES = Math.max(...REFRESHES)
/** Runs per point of a baseline refresh. */
const REFRESH_REPEATS = 3
/**
 * Earlier starts of the base engine in the baseline's noise history (`--noise-history`; each one
 * start of REFRESH_REPEATS runs, as the scheduled watch records them): σ's history, as deep as
 * the design needs, whatever the refreshes that form the centre.
 */
const NOISE_STARTS = arg('noise-history', 30)
/**
 * Runs per point of the PR's first sweep (`--first-repeats`): one, as the Action runs it where a
 * sequential step can follow (a reference command, or starts of the candidate's engine).
 */
const FIRST_REPEATS = arg('first-repeats', 1)
/** The Action keeps a one-run first sweep as the A/B's first B slot (src/github/mode-ab.ts). */
const REUSE_FIRST = FIRST_REPEATS === 1
const SCENARIOS = ['u', 'r', 'all', 'faster', 'step', 'apart'] as const
type Scenario = (typeof SCENARIOS)[number]
/** Scenarios that must stay green, and those that must be called a regression. */
const UNCHANGED: readonly Scenario[] = ['u', 'faster', 'step']
const REGRESSED: readonly Scenario[] = ['r', 'all']
const START_MINUTES = [1, 3, 5]
/** Goals: drift up to this is "plausible"; beyond it the cells are a stress test. */
const GOAL_DRIFT = 0.03
const GOAL_FALSE_ALARMS = 0.01
const GOAL_DETECTION = 0.9
/** Mean cost goals per PR with a reference, at 3 % drift: rows → point-runs, starts unchanged, starts regressed. */
const GOAL_COST: Record<number, { pointRuns: number; starts: number; startsRegressed: number }> = {
  4: { pointRuns: 30, starts: 12, startsRegressed: Infinity },
  14: { pointRuns: 110, starts: 16, startsRegressed: 20 },
}

// ---------------------------------------------------------------------------
// Gated sweeps
// ---------------------------------------------------------------------------

interface Profile {
  rows: number
  factory: ResultFactory
  /** True p95 ITL (ms) per point, shape-major; the 50 ms TPOT target is crossed inside every shape's curve. */
  itl: number[]
  /** Run-to-run CV per point. */
  cv: number[]
  /** The point the regression slows down. */
  regressed: number
}

const SHAPE_1: Shape = { input_len: 64, output_len: 16 }
const SHAPE_2: Shape = { input_len: 256, output_len: 16 }
const C3 = [1, 16, 64]
const C6 = [1, 4, 8, 16, 32, 64]
const ITL3 = [12, 28, 64]
const ITL6 = [12, 16, 20, 28, 42, 64]
const cvRamp = (n: number): number[] => Array.from({ length: n }, (_, i) => 0.02 + (0.01 * i) / Math.max(1, n - 1))

function profile(rows: number): Profile {
  if (rows === 4) return { rows, factory: new ResultFactory({ shape: SHAPE_1, concurrency: C3 }), itl: ITL3, cv: cvRamp(3), regressed: C3.indexOf(16) }
  if (rows === 7) return { rows, factory: new ResultFactory({ shape: SHAPE_1, concurrency: C6 }), itl: ITL6, cv: cvRamp(6), regressed: C6.indexOf(16) }
  if (rows === 14) {
    return {
      rows,
      factory: new ResultFactory({ shape: SHAPE_1, moreShapes: [SHAPE_2], concurrency: C6 }),
      // The second shape runs 10 % faster per chunk; its crossing stays between C = 32 and 64.
      itl: [...ITL6, ...ITL6.map((v) => v * 0.9)],
      cv: [...cvRamp(6), ...cvRamp(6)],
      regressed: C6.indexOf(16),
    }
  }
  throw new Error(`no gated sweep of ${rows} rows`)
}

const PROFILES = new Map<number, Profile>()
const profileOf = (rows: number): Profile => {
  let p = PROFILES.get(rows)
  if (p === undefined) PROFILES.set(rows, (p = profile(rows)))
  return p
}

/** The noise of one sweep's points: drift per start (shared), the GPU model's own part per start and metric, run CV, interference. */
function noise(p: Profile, drift: number, scale: number): NoiseModel {
  return {
    name: 'per-start',
    metrics: p.cv.map((cv, i) => ({ name: `itl_p95 point ${i}`, higherIsBetter: false, cv: cv * scale })),
    dayShared: drift * scale,
    dayOwn: GPU.dayOwn,
    outlierP: GPU.outlierP,
  }
}

/** One measured sweep on a start: p95 ITL per point, the regressed point × `worse`. */
function sweep(rng: Rng, model: NoiseModel, p: Profile, start: readonly number[], worse: number): number[] {
  return p.itl.map((itl, i) => itl * Math.exp(runLogWorse(rng, model, i, start[i]!, i === p.regressed ? worse : 1)))
}

// ---------------------------------------------------------------------------
// One trial
// ---------------------------------------------------------------------------

const red = (v: Verdict): boolean => gateExit(v.verdict, DEFAULT_FAIL_ON) !== 0

/** Every verdict must gate exactly the sweep's rows, and say so in its family (Bonferroni over them). */
function checkRows(v: Verdict, p: Profile): Verdict {
  const gated = v.rows.filter((r) => r.gated).length
  const family = v.family?.rows ?? gated
  if (gated !== p.rows || family !== p.rows)
    throw new Error(`a verdict of the ${p.rows}-row sweep gates ${gated} rows (family: ${family}): the bench's sweep is not what it says`)
  return v
}

/** Counts by key; summed over trials and workers. */
type Counts = Map<string, number>
const add = (c: Counts, key: string, by = 1): void => void c.set(key, (c.get(key) ?? 0) + by)

/** A seed for trial t's stream `label` (never the drift or scenario: those share draws). */
const seedOf = (t: number, label: string): number => (SEED ^ Math.imul(t + 1, 0x9e3779b1) ^ hash(label)) >>> 0

/** How the candidate B differs from A: a factor per point, and per A/B round (the host's step, a drift apart). */
function change(p: Profile, sc: Scenario): { point: (i: number) => number; round: (r: number) => { a: number; b: number } } {
  const none = (): { a: number; b: number } => ({ a: 1, b: 1 })
  if (sc === 'r') return { point: (i) => (i === p.regressed ? 1.1 : 1), round: none }
  if (sc === 'all') return { point: () => 1.1, round: none }
  if (sc === 'faster') return { point: (i) => (i === p.regressed ? 1 : 1 / 1.1), round: none }
  if (sc === 'step') return { point: () => 1, round: (r) => (r >= 2 ? { a: 1.05, b: 1.05 } : { a: 1, b: 1 }) }
  if (sc === 'apart') return { point: () => 1, round: (r) => ({ a: 1, b: 1.005 ** r }) }
  return { point: () => 1, round: none }
}

/** One start's sweep of `runs` repeats with B's change (× per point, × the round's host factor). */
function startSweep(rng: Rng, model: NoiseModel, p: Profile, runs: number, factor: (i: number) => number, host = 1): number[][] {
  const start = day(rng, model)
  return Array.from({ length: runs }, () => sweep(rng, model, p, start, 1).map((v, i) => v * factor(i) * host))
}

/**
 * An A/B job drawn up to MAX_ROUNDS rounds, each slot a fresh start of its side; looks see its first
 * rounds. `firstB`: the PR's first sweep (one run per point), which the Action keeps as round 1's B slot.
 */
function abJob(seed: number, p: Profile, model: NoiseModel, sc: Scenario, at: number, firstB: number[][] | null): { a: ResultFile; b: ResultFile } {
  const rng = createRng(seed)
  const ch = change(p, sc)
  const values: { A: number[][]; B: number[][] } = { A: [], B: [] }
  for (const [i, side] of slotOrder(MAX_ROUNDS).entries()) {
    const host = ch.round(Math.floor(i / 2))
    const drawn = startSweep(rng, model, p, 1, side === 'B' ? ch.point : () => 1, side === 'B' ? host.b : host.a)
    values[side].push(...(side === 'B' && i === 1 && firstB !== null ? firstB : drawn))
  }
  // Round r of a side is its repeat r, as run-ab.ts writes each side's file (planned: every round).
  return { a: p.factory.result(values.A, at), b: p.factory.result(values.B, at) }
}

interface Spend {
  starts: number
  pointRuns: number
}

/** The ladder and the starts path on trial t, for one sweep and one drift, at every history length and scenario. */
function gateTrial(t: number, p: Profile, drift: number, counts: Counts): void {
  const model = noise(p, drift, 1)
  const points = p.itl.length
  const rng = createRng(seedOf(t, `refreshes ${p.rows}`))
  const refreshes = Array.from({ length: MAX_REFRESHES }, (_, d) =>
    p.factory.result(
      startSweep(rng, model, p, REFRESH_REPEATS, () => 1),
      d,
    ),
  )
  // The noise history: starts before the refreshes, kept for their spread alone (0 with --noise-history 0).
  const noiseRng = createRng(seedOf(t, `noise history ${p.rows}`))
  const noiseStarts = Array.from({ length: NOISE_STARTS }, (_, d) =>
    p.factory.result(
      startSweep(noiseRng, model, p, REFRESH_REPEATS, () => 1),
      d,
    ),
  )
  const baselines = REFRESHES.map((h) => {
    let b: Baseline | null = null
    for (const r of refreshes.slice(-h)) b = appendRefresh(b, r, { maxHistory: h })
    for (const r of noiseStarts) b = appendNoise(b!, r, { maxNoise: NOISE_STARTS })
    return b!
  })
  for (const sc of SCENARIOS) {
    const ch = change(p, sc)
    // The candidate's starts: the first sweep, then one start per escalation, one run per point each.
    const crng = createRng(seedOf(t, `candidate ${p.rows}`))
    const startValues = Array.from({ length: MAX_STARTS }, (_, k) => startSweep(crng, model, p, k === 0 ? FIRST_REPEATS : 1, ch.point))
    const starts = startValues.map((v) => p.factory.result(v, MAX_REFRESHES))
    const job = RUN_LADDER ? abJob(seedOf(t, `ab ${p.rows}`), p, model, sc, MAX_REFRESHES, REUSE_FIRST ? startValues[0]! : null) : null
    for (const [hi, h] of REFRESHES.entries()) {
      const baseline = baselines[hi]!
      const cell = `${p.rows}|${drift}|${h}|${sc}`
      if (RUN_LADDER) record(counts, `L|${cell}`, ladder(baseline, p, starts, job!, true, points), sc)
      if (RUN_STARTS) record(counts, `S|${cell}`, ladder(baseline, p, starts, null, false, points), sc)
    }
  }
}

/**
 * The engine start that measured a repeat: the first sweep's repeats are start 0, and every later
 * start adds one repeat (the Action's ladder numbers them so, src/github/job-ladder.ts).
 */
const startOf = (repeat: number): number => Math.max(0, repeat - FIRST_REPEATS)

/** One PR through the ladder: the verdict, and what it cost. */
function ladder(
  baseline: Baseline,
  p: Profile,
  starts: readonly ResultFile[],
  job: { a: ResultFile; b: ResultFile } | null,
  hasReference: boolean,
  points: number,
): { v: Verdict; spend: Spend; path: string[] } {
  const climb = { hasReference, canRestart: !hasReference, maxStarts: MAX_STARTS }
  let step: LadderStep = firstStep(hasReference, 'ladder')
  let used = 1
  let candidate = starts[0]!
  const spend: Spend = { starts: 1, pointRuns: FIRST_REPEATS * points }
  let v = checkRows(compareStarts(baseline, candidate, stepOptions(step, climb), startOf), p)
  const path = [`baseline:${v.verdict}`]
  for (;;) {
    const next = nextStep(v, { step, canRestart: climb.canRestart && used < MAX_STARTS, hasReference, hostChanged: false })
    if (next === null) break
    if (next === 'starts') {
      // Rows, not sweeps: the new start measures only the open rows' points, as the Action's ladder does.
      const open = openPoints(v, candidate)
      const only = open.size > 0 ? open : null
      const fresh = starts[used]!
      candidate = mergeStart(candidate, only === null ? fresh : { ...fresh, points: fresh.points.filter((q) => only.has(pointScope(q))) }, only)
      used++
      spend.starts++
      spend.pointRuns += only === null ? points : only.size
      const opts = { ...stepOptions('baseline', climb), ...(used >= MAX_STARTS ? { look: 'last' as const } : {}) }
      v = checkRows(compareStarts(baseline, candidate, opts, startOf), p)
    } else {
      // Rows, not sweeps: after each look the next round measures only the open rows' points.
      const ran = replayEscalating(job!.a, job!.b, ROUNDS, MAX_ROUNDS, (a, b, r) =>
        lookAt(a, b, r, MAX_ROUNDS, stepOptions('ab', climb), { A: true, B: true }, baseline),
      )
      v = checkRows(ran.verdict, p)
      // The first sweep, one run per point, is round 1's B slot: B is started once fewer, and its runs were counted.
      spend.starts += 2 * ran.rounds - (REUSE_FIRST ? 1 : 0)
      spend.pointRuns += ran.pointRuns - (REUSE_FIRST ? points : 0)
    }
    step = next
    path.push(`${step}:${v.verdict}`)
  }
  return { v, spend, path }
}

function record(counts: Counts, cell: string, out: { v: Verdict; spend: Spend; path: string[] }, sc: Scenario): void {
  add(counts, `${cell}|n`)
  add(counts, `${cell}|starts`, out.spend.starts)
  add(counts, `${cell}|pointRuns`, out.spend.pointRuns)
  add(counts, `${cell}|startsHist|${out.spend.starts}`)
  if (red(out.v)) add(counts, `${cell}|red`)
  if (out.v.verdict === 'regression') add(counts, `${cell}|regression`)
  if (out.v.verdict === 'undecided') add(counts, `${cell}|undecided`)
  if (out.path.includes('ab:pass') || out.path.some((x) => x.startsWith('ab'))) add(counts, `${cell}|ab`)
  const drift = cell.split('|')[2]
  if (UNCHANGED.includes(sc) && red(out.v)) add(counts, `P|${cell[0]}|${sc}|${drift}|${out.path.join(' → ')} (${out.v.reasons[0]?.slice(0, 60) ?? ''})`)
  if (REGRESSED.includes(sc) && out.v.verdict !== 'regression') add(counts, `P|${cell[0]}|${sc}|${drift}|${out.path.join(' → ')}`)
}

function runTrials(index: number, of: number): Counts {
  const counts: Counts = new Map()
  for (let t = index; t < TRIALS; t += of) {
    for (const rows of ROWS) for (const drift of DRIFTS) gateTrial(t, profileOf(rows), drift, counts)
    if (index === 0 && (t + of) % Math.max(1, Math.floor(TRIALS / 10)) < of) {
      process.stderr.write(
        `  ${t + 1}/${TRIALS} trials, ${((performance.now() - STARTED) / 1000).toFixed(0)} s, ${PROFILES.get(ROWS[0]!)?.factory.built ?? 0} runs built\n`,
      )
    }
  }
  return counts
}

// ---------------------------------------------------------------------------
// Workers
// ---------------------------------------------------------------------------

async function runAll(): Promise<Counts> {
  const n = Math.min(WORKERS, TRIALS)
  if (n <= 1) return runTrials(0, 1)
  const self = fileURLToPath(import.meta.url)
  const parts = await Promise.all(
    Array.from(
      { length: n },
      (_, i) =>
        new Promise<Array<[string, number]>>((resolve, reject) => {
          const child = fork(self, [...process.argv.slice(2), '--worker', `${i}/${n}`], { execArgv: process.execArgv })
          let got: Array<[string, number]> | null = null
          child.on('message', (m) => void (got = m as Array<[string, number]>))
          child.on('error', reject)
          child.on('exit', (code) => (code === 0 && got !== null ? resolve(got) : reject(new Error(`worker ${i}/${n} exited with ${code}`))))
        }),
    ),
  )
  const counts: Counts = new Map()
  for (const part of parts) for (const [k, v] of part) add(counts, k, v)
  return counts
}

// ---------------------------------------------------------------------------
// Report
// ---------------------------------------------------------------------------

const pct = (x: number): string => `${(x * 100).toFixed(2)} %`
const mark = (ok: boolean): string => (ok ? '✓' : '✗')

function gateCommit(): string {
  try {
    const rev = execFileSync('git', ['log', '-1', '--format=%h %s', '--', 'src/gate', 'src/ab'], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
    }).trim()
    return rev === '' ? 'unknown' : rev
  } catch {
    return 'unknown (no git)'
  }
}

function report(counts: Counts, seconds: number): void {
  const get = (k: string): number => counts.get(k) ?? 0
  const share = (cell: string, what: string): number => get(`${cell}|${what}`) / Math.max(1, get(`${cell}|n`))
  const mean = share
  const p95 = (cell: string): number => {
    const hist = [...counts.entries()].filter(([k]) => k.startsWith(`${cell}|startsHist|`)).map(([k, n]) => [Number(k.split('|').at(-1)), n] as const)
    hist.sort((x, y) => x[0] - y[0])
    const total = hist.reduce((a, [, n]) => a + n, 0)
    let seen = 0
    for (const [s, n] of hist) if ((seen += n) >= 0.95 * total) return s
    return NaN
  }
  const misses: string[] = []
  const dp = (d: number): string => `${d * 100} %`
  const gpuMin = (cell: string): string => START_MINUTES.map((m) => (mean(cell, 'pointRuns') + m * mean(cell, 'starts')).toFixed(0)).join(' / ')

  for (const [tag, title, held] of [
    ['L', 'Ladder with a reference command (the Action with gate.reference_command)', true],
    ['S', 'No reference: the stored baseline, then more candidate starts (reported; held only to ≤ 1 % unchanged called regression)', false],
  ] as const) {
    if (tag === 'L' ? !RUN_LADDER : !RUN_STARTS) continue
    console.log(
      `\n### ${title}\n\nPer cell ${TRIALS} PRs per scenario. False alarms: red on unchanged PRs (u / faster / step), with the share called regression in brackets. ` +
        `Detection: called regression (r: one p95 ITL row × 1.1; all: every point × 1.1). Cost (unchanged u / regressed r): mean engine starts (95th percentile), ` +
        `mean point-runs, GPU-minutes at 1 minute per point-run plus 1 / 3 / 5 minutes per start.\n`,
    )
    const head = [
      'rows',
      'drift',
      'refreshes',
      'false alarms u',
      'faster',
      'step',
      'detection r',
      'all',
      'apart red',
      'starts u / r',
      'point-runs u / r',
      'GPU-min u',
      'GPU-min r',
      'goal',
    ]
    console.log(`| ${head.join(' | ')} |`)
    console.log(`|${head.map(() => '---').join('|')}|`)
    for (const rows of ROWS) {
      for (const drift of DRIFTS) {
        for (const h of REFRESHES) {
          const c = (sc: Scenario): string => `${tag}|${rows}|${drift}|${h}|${sc}`
          const fa = Math.max(...UNCHANGED.map((sc) => share(c(sc), 'red')))
          const faReg = Math.max(...UNCHANGED.map((sc) => share(c(sc), 'regression')))
          const det = Math.min(...REGRESSED.map((sc) => share(c(sc), 'regression')))
          const inGoal = drift <= GOAL_DRIFT
          let ok: boolean
          if (held) {
            const cost = GOAL_COST[rows]
            const costOk =
              cost === undefined ||
              drift !== GOAL_DRIFT ||
              (mean(c('u'), 'pointRuns') <= cost.pointRuns && mean(c('u'), 'starts') <= cost.starts && mean(c('r'), 'starts') <= cost.startsRegressed)
            ok = fa <= GOAL_FALSE_ALARMS && det >= GOAL_DETECTION && costOk
            if (inGoal && !ok)
              misses.push(
                `ladder, ${rows} rows, drift ${dp(drift)}, ${h} refreshes: ${pct(fa)} false alarms, ${pct(det)} detection${costOk ? '' : ', cost over its goal'}`,
              )
          } else {
            ok = faReg <= GOAL_FALSE_ALARMS
            if (!ok && inGoal) misses.push(`starts, ${rows} rows, drift ${dp(drift)}, ${h} refreshes: ${pct(faReg)} unchanged PRs called regression`)
          }
          const cells = [
            String(rows),
            dp(drift),
            String(h),
            `${pct(share(c('u'), 'red'))} (${pct(share(c('u'), 'regression'))})`,
            pct(share(c('faster'), 'red')),
            pct(share(c('step'), 'red')),
            `${pct(share(c('r'), 'regression'))}`,
            pct(share(c('all'), 'regression')),
            pct(share(c('apart'), 'red')),
            `${mean(c('u'), 'starts').toFixed(1)} (${p95(c('u'))}) / ${mean(c('r'), 'starts').toFixed(1)} (${p95(c('r'))})`,
            `${mean(c('u'), 'pointRuns').toFixed(0)} / ${mean(c('r'), 'pointRuns').toFixed(0)}`,
            gpuMin(c('u')),
            gpuMin(c('r')),
            inGoal ? mark(ok) : '–',
          ]
          console.log(`| ${cells.join(' | ')} |`)
        }
      }
    }
    for (const [kind, what] of [
      ['u', 'Paths of red PRs that must stay green'],
      ['r', 'Paths of regressed PRs not called a regression'],
    ] as const) {
      const scs = kind === 'u' ? UNCHANGED : REGRESSED
      console.log(`\n${what} (${tag}), summed over rows and history lengths:\n`)
      for (const drift of DRIFTS) {
        const paths = [...counts.entries()].filter(([k]) => scs.some((sc) => k.startsWith(`P|${tag}|${sc}|${drift}|`))).sort((a, b) => b[1] - a[1])
        const total = paths.reduce((a, [, n]) => a + n, 0)
        const all = ROWS.length * REFRESHES.length * scs.length * TRIALS
        console.log(`- drift ${dp(drift)}: ${total === 0 ? 'none' : pct(total / all)}`)
        for (const [k, n] of paths.slice(0, 4)) console.log(`  - ${pct(n / all)} ${k.split('|').slice(1, 2).concat(k.split('|').slice(4)).join(': ')}`)
      }
    }
  }

  console.log(`\n${TRIALS} trials, seed ${SEED}, ${WORKERS} worker(s), ${seconds.toFixed(0)} s.`)
  if (misses.length > 0) console.log(`\nGoals missed (${misses.length}):\n${misses.map((m) => `- ${m}`).join('\n')}`)
  else console.log('\nEvery goal met.')
}

if (WORKER !== null) {
  const [i, n] = WORKER.split('/').map(Number)
  const counts = runTrials(i!, n!)
  process.send!([...counts.entries()], () => process.disconnect())
} else {
  console.log(
    `gate false alarms: ${TRIALS} trials per cell, seed ${SEED}; gate at ${gateCommit()}; ` +
      `run CV 2–3 %, ${(GPU.outlierP * 100).toFixed(0)} % of runs 8–20 % worse, ${(GPU.dayOwn * 100).toFixed(1)} % per-metric offset per start, drift per engine start ${DRIFTS.map((d) => `${d * 100} %`).join(' / ')}; A/B looks from round ${ROUNDS} up to ${MAX_ROUNDS}`,
  )
  const counts = await runAll()
  report(counts, (performance.now() - STARTED) / 1000)
}
