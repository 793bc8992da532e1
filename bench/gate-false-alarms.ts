/**
 * Gate false alarms: how often the gate AS THE PRODUCT RUNS IT turns an
 * unchanged pull request red, and how often it calls a real regression one,
 * by Monte Carlo on pipeline-shaped result files (bench/lib/pipeline-results.ts:
 * every run built from request records through summarizeRun/assessValidity,
 * throughput at target from the curve, fingerprints), decided by the
 * product's own functions only: compareToBaseline on a baseline built with
 * appendRefresh (one refresh per result), mergeResults for confirmation,
 * compareAB for A/B (slots in slotOrder, engine starts as plannedStarts makes
 * them), firstStep/nextStep for the ladder with each look's options from
 * stepOptions (as src/action.ts passes them), and gateExit(verdict,
 * DEFAULT_FAIL_ON) for red/green. Every verdict is checked to gate exactly
 * the sweep's rows (its rows and its Bonferroni family).
 *
 *   npm run bench -- gate-false-alarms
 *   npx tsx bench/gate-false-alarms.ts [--trials N] [--seed N] [--only ladder|compare|ab]
 *     [--rounds 6] [--ab-drift 0.03] [--workers 2]
 *
 * Noise model. Every ENGINE START draws a log offset ~ N(0, drift) shared by
 * every metric of that start (drift 0 / 2 / 3 / 5 %: placement, clocks,
 * memory layout set at start), plus the GPU model of bench/lib/noise-model.ts:
 * a small per-metric offset per start (N(0, 0.7 %)), run-to-run noise per run
 * and point (CV 2 % at the lowest concurrency to 3 % at the highest) and
 * interference (3 % of point-runs 8–20 % worse). Throughput at target is not
 * drawn: it follows from each repeat's curve, as the product computes it.
 * - a baseline refresh is one start with 3 repeats; refreshes are the last
 *   1 / 2 / 3 / 5 / 10 of the same 10 starts (one baseline per history length);
 * - the candidate's sweep is one start with 3 repeats; confirmation repeats
 *   (what verdict.confirm asks for) run on that same start and are merged;
 * - the ladder's A/B (and A/B alone) starts each side around its slots:
 *   slots follow slotOrder (A B B A A B …), and adjacent slots of one side
 *   share a start: A starts, B starts (two slots), A starts (two slots), …,
 *   each start drawing its own offset. Default 6 rounds (--rounds).
 * The regression: ×1.10 (A/B alone: ×1.05, and ×1.10 for reference) on the
 * p95 ITL of one gated point, the middle of the curve (C = 16 of the first
 * shape) of the candidate B, as the earlier power benches did; with 3
 * concurrencies that point brackets the target's crossing, so the shape's
 * throughput at target moves too.
 *
 * Gated sweeps (checked: every verdict gates exactly that many rows):
 * - 4 rows: 1 shape × C = 1, 16, 64 + its throughput at target;
 * - 7 rows: 1 shape × C = 1, 4, 8, 16, 32, 64 + its throughput at target;
 * - 14 rows: 2 shapes × those 6 concurrencies + 2 throughputs at target.
 *
 * What runs per PR:
 * (a) ladder: the Action with `confirm` and a reference command: baseline →
 *     confirm (when nextStep says so) → A/B (when nextStep says so), each look
 *     with stepOptions(step, { hasReference, confirm, tolerance 5 % }); the
 *     check is red when the last verdict fails gateExit;
 * (b) compare alone: `servegate compare` without a config (the gate's default
 *     options: the last look), no escalation;
 * (c) A/B alone: `servegate ab` (default options) at 4 / 6 / 8 rounds, GPU noise ×1 and ×1.5
 *     (run CV and drift scaled; drift --ab-drift, default 3 %).
 * A false alarm is a red check on an unchanged candidate; a detection is the
 * final verdict `regression` on a regressed one ("red" beside it: red for any
 * reason). Cost: GPU-minutes at 1 minute per point-run (one slot or repeat =
 * one gated sweep = points minutes), for the candidate's sweeps only (the
 * baseline's refreshes and engine start-up are not counted).
 * Trials share their random draws across cells (common random numbers): trial
 * t has the same standard-normal draws at every drift, history length and
 * scenario, so cells differ only by what they change. Trials run in --workers
 * processes (default 2); every trial has its own seed, so the figures do not
 * depend on the number of workers.
 * A measurement, not a test: always exits 0; goals missed are listed at the end.
 */
import { execFileSync, fork } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { plannedStarts, slotOrder } from '../src/plan/ab-schedule.js'
import { compareAB } from '../src/gate/ab-verdict.js'
import { DEFAULT_MAX_ROUNDS, lookAt, lookRounds } from '../src/gate/ab-looks.js'
import { compareToBaseline } from '../src/gate/compare.js'
import { firstStep, nextStep, stepOptions, type LadderStep } from '../src/gate/ladder.js'
import { mergeResults } from '../src/gate/merge.js'
import { DEFAULT_GATE_OPTIONS } from '../src/gate/options.js'
import { DEFAULT_FAIL_ON, gateExit } from '../src/gate/outcome.js'
import type { Baseline, GateOptions, Verdict } from '../src/gate/types.js'
import { appendRefresh } from '../src/gate/refresh.js'
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

/**
 * Measured: 400 trials took 1290 CPU-s (about 11 minutes on 2 free cores; ~2.4 CPU-s per trial
 * once its runs are built, most of it in the gate's t quantiles); the last line prints the time.
 */
const DEFAULT_TRIALS = 200
const TRIALS = arg('trials', DEFAULT_TRIALS)
const SEED = arg('seed', 20250611)
const ONLY = strArg('only')
if (ONLY !== null && !['ladder', 'compare', 'ab'].includes(ONLY)) throw new Error(`--only ${ONLY}: expected ladder, compare or ab`)
const RUN_LADDER = ONLY === null || ONLY === 'ladder'
const RUN_COMPARE = ONLY === null || ONLY === 'compare'
const RUN_AB = ONLY === null || ONLY === 'ab'
const ROUNDS = arg('rounds', 6)
/** The ladder's A/B looks after ROUNDS, then every two rounds up to MAX_ROUNDS (src/gate/ab-looks.ts; the Action's max-rounds). */
const MAX_ROUNDS = arg('max-rounds', DEFAULT_MAX_ROUNDS)
const AB_DRIFT = arg('ab-drift', 0.03)
const WORKERS = Math.max(1, Math.floor(arg('workers', 2)))
/** `--worker i/n`: this process runs trials t ≡ i (mod n) and reports its counts to the parent. */
const WORKER = strArg('worker')

const STARTED = performance.now()
const DRIFTS = [0, 0.02, 0.03, 0.05]
const REFRESHES = [1, 2, 3, 5, 10]
const MAX_REFRESHES = Math.max(...REFRESHES)
const REPEATS = 3
const REGRESSION = 1.1
const AB_ROUNDS = [4, 6, 8]
const AB_SCALES = [1, 1.5]
const AB_ROWS = [4, 14]
const AB_FACTORS = [1.05, 1.1]
/** Goals: drift up to this is "plausible"; beyond it the cells are a stress test. */
const GOAL_DRIFT = 0.03
const GOAL_FALSE_ALARMS = 0.01
const GOAL_DETECTION = 0.9
const GOAL_COMPARE_REFRESHES = 5

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
// The product's options per look
// ---------------------------------------------------------------------------

/**
 * The Action's ladder with `confirm` on and a reference command, at the config's default
 * tolerance ((gate.tolerance_pct.itl ?? 5) / 100 in src/action.ts): each look's options come
 * from stepOptions, as the Action passes them over the config's (default) gate settings.
 */
const CLIMB = { hasReference: true, confirm: true, tolerance: DEFAULT_GATE_OPTIONS.defaultTolerance }
/** `--max-mdc P`: gate.max_mdc_pct for every look (to try another default); absent, the product's default. */
const MAX_MDC = strArg('max-mdc')
const CONFIG: Partial<GateOptions> = MAX_MDC === null ? {} : { maxMdcPct: Number(MAX_MDC) }
const ladderOptions = (step: LadderStep): Partial<GateOptions> => ({ ...CONFIG, ...stepOptions(step, CLIMB) })
/** `servegate compare` and `servegate ab` without a config: the gate's defaults (one look, the last). */
const CLI_OPTIONS: Partial<GateOptions> = { ...CONFIG }

const red = (v: Verdict): boolean => gateExit(v.verdict, DEFAULT_FAIL_ON) !== 0

/** Every verdict must gate exactly the sweep's rows, and say so in its family (Bonferroni over them). */
function checkRows(v: Verdict, p: Profile): Verdict {
  const gated = v.rows.filter((r) => r.gated).length
  const family = v.family?.rows ?? gated
  if (gated !== p.rows || family !== p.rows)
    throw new Error(`a verdict of the ${p.rows}-row sweep gates ${gated} rows (family: ${family}): the bench's sweep is not what it says`)
  return v
}

// ---------------------------------------------------------------------------
// One trial
// ---------------------------------------------------------------------------

/** Counts by key; summed over trials and workers. */
type Counts = Map<string, number>
const add = (c: Counts, key: string, by = 1): void => void c.set(key, (c.get(key) ?? 0) + by)

/** A seed for trial t's stream `label` (never the drift, scale or scenario: those share draws). */
const seedOf = (t: number, label: string): number => (SEED ^ Math.imul(t + 1, 0x9e3779b1) ^ hash(label)) >>> 0

/** An A/B job of `rounds` rounds, each side's engine started around its slots; B × `worse` at the regressed point. */
function abJob(seed: number, p: Profile, model: NoiseModel, rounds: number, worse: number, at: number): { a: ResultFile; b: ResultFile } {
  const rng = createRng(seed)
  const order = slotOrder(rounds)
  // The engine starts of an exclusive job (the default): adjacent slots of one side share a start.
  const firstSlots = new Set(plannedStarts(order, 'exclusive').map((s) => s.slots[0]! - 1))
  const acc: { A?: ResultFile; B?: ResultFile } = {}
  let start: number[] = []
  for (const [i, side] of order.entries()) {
    if (firstSlots.has(i)) start = day(rng, model)
    const slot = p.factory.result([sweep(rng, model, p, start, side === 'B' ? worse : 1)], at)
    const merged = acc[side] === undefined ? slot : mergeResults(acc[side]!, slot)
    // As run-ab.ts keeps each side's file: it plans all rounds.
    merged.config = { ...merged.config, repeats: rounds }
    acc[side] = merged
  }
  return { a: acc.A!, b: acc.B! }
}

interface Candidate {
  /** The candidate's first sweep (3 repeats). */
  first: ResultFile
  /** The first sweep merged with `extra` confirmation repeats of the same start. */
  confirmed(extra: number): ResultFile
}

/** The candidate's start: 3 repeats, and confirmation repeats drawn on demand from the same start. */
function candidate(seed: number, p: Profile, model: NoiseModel, worse: number, at: number): Candidate {
  const rng = createRng(seed)
  const start = day(rng, model)
  const first = p.factory.result(
    Array.from({ length: REPEATS }, () => sweep(rng, model, p, start, worse)),
    at,
  )
  const extras: number[][] = []
  const merged = new Map<number, ResultFile>()
  return {
    first,
    confirmed(extra) {
      let m = merged.get(extra)
      if (m === undefined) {
        while (extras.length < extra) extras.push(sweep(rng, model, p, start, worse))
        m = mergeResults(first, p.factory.result(extras.slice(0, extra), at))
        merged.set(extra, m)
      }
      return m
    },
  }
}

/** The ladder and compare alone on trial t, for one sweep and one drift, at every history length and both scenarios. */
function gateTrial(t: number, p: Profile, drift: number, counts: Counts): void {
  const model = noise(p, drift, 1)
  const points = p.itl.length
  // The baseline's 10 refreshes: each one start of 3 repeats, the same for both scenarios.
  const rng = createRng(seedOf(t, `refreshes ${p.rows}`))
  const refreshes = Array.from({ length: MAX_REFRESHES }, (_, d) => {
    const start = day(rng, model)
    return p.factory.result(
      Array.from({ length: REPEATS }, () => sweep(rng, model, p, start, 1)),
      d,
    )
  })
  const baselines = REFRESHES.map((h) => {
    let b: Baseline | null = null
    for (const r of refreshes.slice(-h)) b = appendRefresh(b, r, { maxHistory: h })
    return b!
  })
  for (const worse of [1, REGRESSION]) {
    const sc = worse === 1 ? 'u' : 'r'
    const cand = candidate(seedOf(t, `candidate ${p.rows}`), p, model, worse, MAX_REFRESHES)
    let ab: { v: Verdict; rounds: number } | null = null
    const abVerdict = (): { v: Verdict; rounds: number } => {
      if (ab === null) {
        // The whole job's slots are drawn up front; each look sees its first rounds, as run-ab's looks do.
        const job = abJob(seedOf(t, `ladder ab ${p.rows}`), p, model, MAX_ROUNDS, worse, MAX_REFRESHES)
        for (const r of lookRounds(ROUNDS, MAX_ROUNDS)) {
          const v = lookAt(job.a, job.b, r, MAX_ROUNDS, ladderOptions('ab'), 'exclusive')
          if (v !== null) {
            ab = { v: checkRows(v, p), rounds: r }
            break
          }
        }
      }
      return ab!
    }
    for (const [hi, h] of REFRESHES.entries()) {
      const baseline = baselines[hi]!
      const cell = `${p.rows}|${drift}|${h}|${sc}`
      const memo = new Map<string, Verdict>()
      const compare = (c: ResultFile, opts: Partial<GateOptions>, tag: string): Verdict => {
        const key = `${tag} ${JSON.stringify(opts)}`
        let v = memo.get(key)
        if (v === undefined) memo.set(key, (v = checkRows(compareToBaseline(baseline, c, opts), p)))
        return v
      }
      if (RUN_COMPARE) {
        const v = compare(cand.first, CLI_OPTIONS, 'first')
        add(counts, `C|${cell}|n`)
        if (red(v)) add(counts, `C|${cell}|red`)
        if (v.verdict === 'regression') add(counts, `C|${cell}|regression`)
      }
      if (RUN_LADDER) {
        // The Action with confirm on and a reference command (gate.reference_mode: ladder).
        let step: LadderStep = firstStep(CLIMB.hasReference, 'ladder')
        let v = compare(cand.first, ladderOptions(step), 'first')
        let minutes = REPEATS * points
        const path: string[] = []
        for (;;) {
          path.push(`${step}:${v.verdict}${v.verdict === 'undecided' && v.blind.length > 0 ? '(blind)' : ''}${red(v) ? '' : ' (green)'}`)
          const next = nextStep(v, { step, canConfirm: CLIMB.confirm && v.confirm !== null, hasReference: CLIMB.hasReference, hostChanged: false })
          if (next === null) break
          if (next === 'confirm') {
            const extra = v.confirm!.extraRepeats
            add(counts, `L|${cell}|confirm`)
            minutes += extra * points
            v = compare(cand.confirmed(extra), ladderOptions(next), `confirm ${extra}`)
          } else if (next === 'ab') {
            add(counts, `L|${cell}|ab`)
            const done = abVerdict()
            minutes += 2 * done.rounds * points
            add(counts, `L|${cell}|abrounds`, done.rounds)
            v = done.v
          } else {
            throw new Error(`the ladder went back to ${next}`)
          }
          step = next
        }
        add(counts, `L|${cell}|n`)
        add(counts, `L|${cell}|minutes`, minutes)
        if (red(v)) add(counts, `L|${cell}|red`)
        if (v.verdict === 'regression') add(counts, `L|${cell}|regression`)
        // How the red unchanged PRs, and the regressed PRs not caught, got there.
        if (worse === 1 && red(v)) add(counts, `P|u|${drift}|${path.join(' → ')}`)
        if (worse !== 1 && v.verdict !== 'regression') add(counts, `P|r|${drift}|${path.join(' → ')}`)
      }
    }
  }
}

/** A/B alone on trial t: every rounds × noise scale cell of one sweep, each scenario on the same draws. */
function abTrial(t: number, p: Profile, counts: Counts): void {
  const points = p.itl.length
  for (const rounds of AB_ROUNDS) {
    for (const scale of AB_SCALES) {
      const model = noise(p, AB_DRIFT, scale)
      for (const worse of [1, ...AB_FACTORS]) {
        const job = abJob(seedOf(t, `ab ${p.rows} ${rounds}`), p, model, rounds, worse, 0)
        const v = checkRows(compareAB(job.a, job.b, CLI_OPTIONS), p)
        const cell = `A|${p.rows}|${rounds}|${scale}|${worse}`
        add(counts, `${cell}|n`)
        add(counts, `${cell}|minutes`, 2 * rounds * points)
        if (red(v)) add(counts, `${cell}|red`)
        if (v.verdict === 'regression') add(counts, `${cell}|regression`)
        if (v.verdict === 'undecided') add(counts, `${cell}|undecided`)
      }
    }
  }
}

function runTrials(index: number, of: number): Counts {
  const counts: Counts = new Map()
  for (let t = index; t < TRIALS; t += of) {
    if (RUN_LADDER || RUN_COMPARE) for (const rows of [4, 7, 14]) for (const drift of DRIFTS) gateTrial(t, profileOf(rows), drift, counts)
    if (RUN_AB) for (const rows of AB_ROWS) abTrial(t, profileOf(rows), counts)
    if (index === 0 && (t + of) % Math.max(1, Math.floor(TRIALS / 10)) < of) {
      process.stderr.write(
        `  ${t + 1}/${TRIALS} trials, ${((performance.now() - STARTED) / 1000).toFixed(0)} s, ${PROFILES.get(4)?.factory.built ?? 0} runs built\n`,
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
  const share = (prefix: string, what: string): number => get(`${prefix}|${what}`) / Math.max(1, get(`${prefix}|n`))
  const misses: string[] = []
  const dp = (d: number): string => `${d * 100} %`

  if (RUN_LADDER || RUN_COMPARE) {
    console.log(
      `\n### Ladder and compare alone\n\nPer cell ${TRIALS} unchanged PRs and ${TRIALS} PRs with one p95 ITL row × ${REGRESSION}. ` +
        `Ladder: baseline → confirm → A/B (${ROUNDS} rounds), as the Action with \`confirm\` and a reference command runs it. ` +
        `Compare: one look, no escalation. GPU-min: the candidate's sweeps at 1 minute per point-run (unchanged / regressed PRs). ` +
        `Goals: ladder ≤ ${GOAL_FALSE_ALARMS * 100} % false alarms and ≥ ${GOAL_DETECTION * 100} % detection at drift ≤ ${GOAL_DRIFT * 100} %; ` +
        `compare ≤ ${GOAL_FALSE_ALARMS * 100} % false alarms from ${GOAL_COMPARE_REFRESHES} refreshes at drift ≤ ${GOAL_DRIFT * 100} %.\n`,
    )
    const head = [
      'rows',
      'drift',
      'refreshes',
      ...(RUN_LADDER ? ['ladder false alarms (regression)', 'ladder detection (red)', '→ confirm', '→ A/B', 'A/B rounds', 'GPU-min', 'ladder goal'] : []),
      ...(RUN_COMPARE ? ['compare false alarms (regression)', 'compare detection (red)', 'compare goal'] : []),
    ]
    console.log(`| ${head.join(' | ')} |`)
    console.log(`|${head.map(() => '---').join('|')}|`)
    for (const rows of [4, 7, 14]) {
      for (const drift of DRIFTS) {
        for (const h of REFRESHES) {
          const u = `${rows}|${drift}|${h}|u`
          const r = `${rows}|${drift}|${h}|r`
          const cells = [String(rows), dp(drift), String(h)]
          if (RUN_LADDER) {
            const fa = share(`L|${u}`, 'red')
            const det = share(`L|${r}`, 'regression')
            const inGoal = drift <= GOAL_DRIFT
            const ok = fa <= GOAL_FALSE_ALARMS && det >= GOAL_DETECTION
            if (inGoal && !ok) misses.push(`ladder, ${rows} rows, drift ${dp(drift)}, ${h} refreshes: ${pct(fa)} false alarms, ${pct(det)} detection`)
            cells.push(
              `${pct(fa)} (${pct(share(`L|${u}`, 'regression'))})`,
              `${pct(det)} (${pct(share(`L|${r}`, 'red'))})`,
              pct(share(`L|${u}`, 'confirm')),
              pct(share(`L|${u}`, 'ab')),
              `${(get(`L|${u}|abrounds`) / Math.max(1, get(`L|${u}|ab`))).toFixed(1)} / ${(get(`L|${r}|abrounds`) / Math.max(1, get(`L|${r}|ab`))).toFixed(1)}`,
              `${share(`L|${u}`, 'minutes').toFixed(1)} / ${share(`L|${r}`, 'minutes').toFixed(1)}`,
              inGoal ? mark(ok) : '–',
            )
          }
          if (RUN_COMPARE) {
            const fa = share(`C|${u}`, 'red')
            const inGoal = drift <= GOAL_DRIFT && h >= GOAL_COMPARE_REFRESHES
            if (inGoal && fa > GOAL_FALSE_ALARMS) misses.push(`compare, ${rows} rows, drift ${dp(drift)}, ${h} refreshes: ${pct(fa)} false alarms`)
            cells.push(
              `${pct(fa)} (${pct(share(`C|${u}`, 'regression'))})`,
              `${pct(share(`C|${r}`, 'regression'))} (${pct(share(`C|${r}`, 'red'))})`,
              inGoal ? mark(fa <= GOAL_FALSE_ALARMS) : '–',
            )
          }
          console.log(`| ${cells.join(' | ')} |`)
        }
      }
    }
    if (RUN_LADDER) {
      for (const [sc, what] of [
        ['u', 'Ladder paths of red unchanged PRs'],
        ['r', `Ladder paths of regressed PRs (× ${REGRESSION}) not called a regression`],
      ] as const) {
        console.log(`\n${what}, summed over rows and history lengths (share of all ${15 * TRIALS} PRs of that drift):\n`)
        for (const drift of DRIFTS) {
          const paths = [...counts.entries()].filter(([k]) => k.startsWith(`P|${sc}|${drift}|`)).sort((a, b) => b[1] - a[1])
          const total = paths.reduce((a, [, n]) => a + n, 0)
          console.log(`- drift ${dp(drift)}: ${total === 0 ? 'none' : `${pct(total / (15 * TRIALS))}`}`)
          for (const [k, n] of paths.slice(0, 5)) console.log(`  - ${pct(n / (15 * TRIALS))} ${k.split('|')[3]}`)
        }
      }
    }
  }

  if (RUN_AB) {
    console.log(
      `\n### A/B alone\n\nPer cell ${TRIALS} PRs per scenario; drift ${dp(AB_DRIFT)} per engine start, run CV 2–3 %, both × the noise scale; ` +
        `each side's engine started around its slots. GPU-min: 2 × rounds × points.\n`,
    )
    const head = [
      'rows',
      'noise',
      'rounds',
      'false alarms (regression)',
      'undecided (unchanged)',
      ...AB_FACTORS.map((f) => `detection × ${f} (red)`),
      'GPU-min',
    ]
    console.log(`| ${head.join(' | ')} |`)
    console.log(`|${head.map(() => '---').join('|')}|`)
    for (const rows of AB_ROWS) {
      for (const scale of AB_SCALES) {
        for (const rounds of AB_ROUNDS) {
          const c = (w: number): string => `A|${rows}|${rounds}|${scale}|${w}`
          console.log(
            `| ${[
              rows,
              `× ${scale}`,
              rounds,
              `${pct(share(c(1), 'red'))} (${pct(share(c(1), 'regression'))})`,
              pct(share(c(1), 'undecided')),
              ...AB_FACTORS.map((f) => `${pct(share(c(f), 'regression'))} (${pct(share(c(f), 'red'))})`),
              share(c(1), 'minutes').toFixed(0),
            ].join(' | ')} |`,
          )
        }
      }
    }
  }

  console.log(`\n${TRIALS} trials, seed ${SEED}, ${WORKERS} worker(s), ${seconds.toFixed(0)} s.`)
  if (misses.length > 0) console.log(`\nGoals missed (${misses.length}):\n${misses.map((m) => `- ${m}`).join('\n')}`)
  else if (RUN_LADDER || RUN_COMPARE) console.log('\nEvery goal met.')
  else console.log('\nA/B alone has no goals of its own: its figures are for reading.')
}

if (WORKER !== null) {
  const [i, n] = WORKER.split('/').map(Number)
  const counts = runTrials(i!, n!)
  process.send!([...counts.entries()], () => process.disconnect())
} else {
  console.log(
    `gate false alarms: ${TRIALS} trials per cell, seed ${SEED}; gate at ${gateCommit()}; ` +
      `run CV 2–3 %, ${(GPU.outlierP * 100).toFixed(0)} % of runs 8–20 % worse, ${(GPU.dayOwn * 100).toFixed(1)} % per-metric offset per start, drift per engine start ${DRIFTS.map((d) => `${d * 100} %`).join(' / ')}`,
  )
  const counts = await runAll()
  report(counts, (performance.now() - STARTED) / 1000)
}
