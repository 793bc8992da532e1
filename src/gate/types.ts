/**
 * Types of the regression gate: the stored baseline (`servegate.baseline/v1`,
 * snake_case because it is a file contract), the options of the decision rule,
 * and the verdict with its rows.
 */
import type { EnvRecord, Fingerprint, ResultTarget } from '../types.js'

export const BASELINE_SCHEMA = 'servegate.baseline/v1'

/** What a row measures. Latencies are p95 over requests of one run, throughputs per run. */
export type MetricKind =
  | 'itl_p95'
  | 'tput_at_target'
  | 'ttft_p95'
  | 'tpot_p95'
  | 'e2el_p95'
  | 'req_tput'
  | 'output_tput'
  | 'goodput'

/** Tolerance per metric kind, as a fraction (0.05 = 5 %). */
export type Tolerances = Partial<Record<MetricKind, number>>

/** One invalid run of a stored refresh, kept so the history says why a figure is absent. */
export interface BaselineInvalidRun {
  /** Point label `4096x512@c16` or shape label `4096x512` (throughput at target). */
  scope: string
  repeat: number
  codes: string[]
}

/** One refresh of the baseline: a full gated sweep measured on one occasion. */
export interface BaselineRefresh {
  /** ISO time the refresh's result finished. */
  at: string
  env: EnvRecord
  /** Commit of the project measured (not servegate's own), when known. */
  commit?: string
  /** Metric key (`itl_p95@4096x512@c16`, `tput_at_target@4096x512`, `out_tok@…`) → one value per valid run. */
  runs: Record<string, number[]>
  invalid: BaselineInvalidRun[]
  /** What was measured and how (gate/fingerprint.ts); absent in refreshes stored before it was recorded. */
  fingerprint?: Fingerprint
}

/** The `servegate.baseline/v1` file. */
export interface Baseline {
  schema: typeof BASELINE_SCHEMA
  name: string
  target: ResultTarget
  /** The gated sweep every refresh and candidate must use. */
  profile: {
    shapes: Array<{ input_len: number; output_len: number }>
    concurrency: number[]
    /** An open-loop sweep's request rates (its points are `INxOUT@rateR`); absent for a closed-loop sweep. */
    request_rates?: Array<number | 'inf'>
  }
  /** Newest last, trimmed to the configured history length. */
  refreshes: BaselineRefresh[]
  /** The config's gate tolerances when the newest refresh was stored, so a bare `compare` decides like the Action. */
  tolerances?: Tolerances
  /** The config's `gate.max_failed_requests` when the newest refresh was stored. */
  max_failed_requests?: number
  /** The gated metric kinds when the config changed them (`gate.goodput: true` adds goodput); absent: the gate's default. */
  gated?: MetricKind[]
}

/** Knobs of the decision rule (defaults and their justification: docs/gate.md). */
export interface GateOptions {
  /** Metric kinds whose regression fails the gate; the others are reported only. */
  gated: MetricKind[]
  /** Smallest change (fraction) that counts as a regression, per kind; unset kinds use `defaultTolerance`. */
  tolerances: Tolerances
  defaultTolerance: number
  /** Noise multiplier of the bar once no confirmation is left: L = max(ln(1 + tolerance), k · σ_diff). */
  k: number
  /**
   * Noise multiplier of the regression bar while the candidate has fewer than `maxRepeats`
   * runs: a confirmation is cheaper than a false alarm, so early regressions must be clearer.
   */
  earlyK: number
  /** Width of the undecided band, in σ_diff: pass needs D ≤ max(ln(1 + tolerance), k · σ_diff) − passMargin · σ_diff. */
  passMargin: number
  /** How many newest refreshes form the baseline centre (median of their medians). */
  centerWindow: number
  /** Refreshes needed before the history's own day-to-day spread is trusted. */
  minHistory: number
  /** Prior day-to-day σ (log units) once the history has `minHistory` refreshes (worth `minHistory − 1` refreshes). */
  dayFloor: number
  /**
   * Prior day-to-day σ (log units) while the history has fewer than `minHistory` refreshes: too few
   * to show the drift between days, which runs of one day cannot reveal. Same weight as `dayFloor`.
   */
  shortDayFloor: number
  /** Assumed run-to-run σ (log units) while the history is shorter than `minHistory`. */
  withinFloor: number
  /** Largest share of failed requests a candidate run may have before its row is invalid. */
  failedRequestBudget: number
  /** Failed requests a candidate run may have, as a count; when set it replaces `failedRequestBudget`. */
  maxFailedRequests: number | null
  /** Largest relative change of output tokens per request before a point is not comparable. */
  tokenCountTolerance: number
  /** Candidate runs per point confirmation may reach in total (initial repeats + extra). */
  maxRepeats: number
  /**
   * Largest minimum detectable change (%) an undecided row may have and still leave the check
   * green with a warning (`gate.max_mdc_pct`): beyond it the gate could not have seen a
   * regression of the size it promises, so the undecided verdict fails.
   */
  maxMdcPct: number
}

/**
 * A row's status. Besides the decision rule's own (regression, improvement, pass,
 * undecided: measured on both sides, the statistics cannot tell): `broken` (a candidate
 * run broke: failures beyond the budget, an early stop, changed output tokens, a dead
 * server), `missing` (no candidate runs at all), `incomplete` (fewer runs than planned, a
 * curve cut short), `invalid` (the host or the harness spoiled so many runs that fewer than
 * two, or fewer than two thirds of those planned, are valid), `unmeasured` (no valid figure
 * on one side: an empty or foreign baseline, a candidate whose runs hold no value).
 * gate/invariants.ts maps each cause to its blame.
 */
export type RowStatus = 'regression' | 'improvement' | 'pass' | 'undecided' | 'unmeasured' | 'missing' | 'invalid' | 'broken' | 'incomplete'

/** One compared metric. Percentages are relative changes; `sigma_pct` is σ_diff expressed as %. */
export interface GateRow {
  key: string
  kind: MetricKind
  label: string
  unit: string
  higher_is_better: boolean
  gated: boolean
  /** Baseline centre and candidate median, in `unit`. */
  baseline: number | null
  candidate: number | null
  /** Candidate vs baseline, signed as measured (+ = larger). */
  delta_pct: number | null
  /** How far the metric must move in the worse direction (up for latency, down for throughput) to regress, % (unsigned). */
  bar_pct: number | null
  sigma_pct: number | null
  /** Valid runs in the baseline centre window, and in the candidate. */
  n_baseline: number
  n_candidate: number
  /** Refreshes in the history the noise came from. */
  history: number
  /** Change in the worse direction detected with ~95 % probability at this noise, % (unsigned). */
  mdc_pct: number | null
  status: RowStatus
  notes: string[]
}

/**
 * The gate's verdicts, by blame: `broken` (the candidate broke: failed requests
 * beyond the budget, an early stop, changed output tokens, a dead server),
 * `incomplete` (planned runs or points missing), `not_comparable` (other
 * hardware, target or measurement settings), `unmeasured` (a gated metric lacks
 * a valid measurement on either side: a busy host, a streaming change, an empty
 * or foreign baseline, a reference that broke), `undecided` (measured on both
 * sides, the statistics cannot decide). Neither of the last two is ever a pass.
 * Consequences: gate/outcome.ts.
 */
export type VerdictKind = 'pass' | 'improvement' | 'regression' | 'unmeasured' | 'undecided' | 'not_comparable' | 'broken' | 'incomplete'

/** Who an environment change belongs to: the runner host, the repository under test, or servegate itself. */
export type EnvBlame = 'host' | 'repository' | 'harness'

export interface EnvChange {
  field: string
  baseline: string
  candidate: string
  blame: EnvBlame
}

export interface Verdict {
  verdict: VerdictKind
  rows: GateRow[]
  envChanges: EnvChange[]
  reasons: string[]
  /** Human labels of regressed gated rows. */
  regressions: string[]
  /** Extra repeats of the gated sweep that would likely resolve an undecided verdict. */
  confirm: { extraRepeats: number } | null
  /**
   * Labels of undecided gated rows whose minimum detectable change exceeds `gate.max_mdc_pct`
   * (or is unknown): the gate could not have seen a regression of the size it promises to catch,
   * so an undecided verdict with any of them fails (gate/outcome.ts).
   */
  blind: string[]
}
