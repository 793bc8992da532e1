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
  /**
   * False alarms allowed per pull request (0.01 = 1 %): every gated row of one verdict is judged
   * at `alpha / rows` (Bonferroni), so a PR that gates more rows does not cry wolf more often.
   */
  alpha: number
  /** Gated rows judged in this verdict (set by compare from the rows it builds; 1 when unset). */
  rows: number
  /**
   * What this look may do. `last`: nothing follows, so every measured row is decided (regression
   * beyond the bar, else pass unless blind). `screen`: a later step of the ladder (confirmation,
   * A/B) can decide what this look leaves undecided, so a row passes only clearly below the bar.
   */
  look: 'screen' | 'last'
  /** Share of `alpha` this look may spend on a red check (1; 0.5 each when two looks can fail the check). */
  alphaShare: number
  /**
   * Size (fraction) a screening look must be able to catch with `power` before it lets a row
   * pass; null: `maxMdcPct`. The ladder sets 2 × the tolerance where a reference can decide instead.
   */
  screenMdc: number | null
  /** Probability of catching a change of the minimum detectable size (the MDC's power), e.g. 0.9. */
  power: number
  /** Width of the undecided band of a screening look, in σ_diff: pass needs D ≤ bar − passMargin · σ_diff. */
  passMargin: number
  /** How many newest refreshes form the baseline centre (median of their medians). */
  centerWindow: number
  /** The priors' weight: `minHistory − 1` degrees of freedom (a history of this many refreshes weighs as much as the prior). */
  minHistory: number
  /** Prior day-to-day σ (log units), worth `minHistory − 1` refreshes, blended in while the history shows less. */
  dayFloor: number
  /** Prior run-to-run σ (log units), worth 2 × (`minHistory` − 1) runs, blended in while the runs show less. */
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
   * Largest minimum detectable change (%) a row may have and still pass (`gate.max_mdc_pct`):
   * beyond it the gate could not have seen a regression of the size it promises, so the row is
   * blind and undecided, whatever its change looked like.
   */
  maxMdcPct: number
  /** What a host change since the baseline makes of the verdict: `unmeasured` (the gate), or `judge` (the scheduled watch, which blames the host). */
  onHostChange: 'unmeasured' | 'judge'
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
  /** Change in the worse direction detected with 90 % probability (the gate's power) at this noise, % (unsigned). */
  mdc_pct: number | null
  /** The row's MDC exceeds gate.max_mdc_pct: it could not have seen the regression it must, so it never passes. */
  blind?: boolean
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
  /** How many gated rows the verdict judged, the PR's false-alarm rate this look spent, and each row's one-sided level; null in old records. */
  family?: { rows: number; alpha: number; rowLevel: number } | null
}
