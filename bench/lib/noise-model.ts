/**
 * How measured runs vary on a GPU host, for the Monte Carlo benchmarks of the
 * gate (bench/gate-false-alarms.ts): run-to-run noise, day-to-day
 * drift (partly shared by all metrics of a day) and interference outliers.
 * Kept in one place so both benchmarks draw runs the same way. Not a bench of
 * its own (scripts/bench.mjs runs only the files directly under bench/).
 */
import type { Rng } from '../../src/util/rng.js'

/** `--name X` from the command line as a number, else `fallback`. */
export function arg(name: string, fallback: number): number {
  const i = process.argv.indexOf(`--${name}`)
  return i >= 0 ? Number(process.argv[i + 1]) : fallback
}

export interface MetricNoise {
  name: string
  higherIsBetter: boolean
  /** Run-to-run CV. */
  cv: number
}

/** How runs vary: per run, per day (a refresh or a candidate's sweep), and by interference. */
export interface NoiseModel {
  name: string
  metrics: MetricNoise[]
  /** Day-to-day drift (log σ): a part shared by all metrics of that day and a part of each metric's own. */
  dayShared: number
  dayOwn: number
  /** Interference: probability a run lands on a disturbed node (it comes out OUTLIER_MIN–OUTLIER_MAX worse). */
  outlierP: number
}

/**
 * A dedicated GPU node: run-to-run CV 2–3 %, about 1 % day drift per metric, 3 % of runs
 * disturbed. The gate's targets are stated for this model with a full history.
 * Metrics: p95 ITL at C = 1, 16, 64 and throughput at target (the gated sweep's four).
 */
export const GPU: NoiseModel = {
  name: 'gpu',
  metrics: [
    { name: 'itl_p95 c1', higherIsBetter: false, cv: 0.02 },
    { name: 'itl_p95 c16', higherIsBetter: false, cv: 0.025 },
    { name: 'itl_p95 c64', higherIsBetter: false, cv: 0.03 },
    { name: 'tput_at_target', higherIsBetter: true, cv: 0.03 },
  ],
  dayShared: arg('day-shared', 0.007),
  dayOwn: arg('day-own', 0.007),
  outlierP: arg('outlier-p', 0.03),
}

export const OUTLIER_MIN = 0.08
export const OUTLIER_MAX = 0.2

/** A day's log-offsets per metric. */
export function day(rng: Rng, model: NoiseModel): number[] {
  const shared = model.dayShared * rng.normal()
  return model.metrics.map(() => shared + model.dayOwn * rng.normal())
}

/**
 * One run of metric m on a day as a log factor of "worse" (> 0: slower, whatever the
 * metric's direction): the injected change `worse` (×, > 1 = worse), the day's offset,
 * run noise and, now and then, interference.
 */
export function runLogWorse(rng: Rng, model: NoiseModel, m: number, dayOffset: number, worse: number): number {
  const spec = model.metrics[m]!
  let logWorse = Math.log(worse) + dayOffset + spec.cv * rng.normal()
  if (rng.next() < model.outlierP) logWorse += Math.log(1 + OUTLIER_MIN + (OUTLIER_MAX - OUTLIER_MIN) * rng.next())
  return logWorse
}

/** FNV-1a of a string: stable seed parts from labels. */
export function hash(s: string): number {
  let h = 2166136261
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 16777619)
  return h >>> 0
}

/** A share as a right-aligned percentage with two decimals. */
export const pct = (x: number): string => `${(x * 100).toFixed(2)} %`.padStart(8)
