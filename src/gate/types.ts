/**
 * Types of the regression gate: the options of the decision rule and the verdict
 * with its rows. The stored baseline's types are the records stage's
 * (records/baseline.ts), re-exported here for the gate's own modules.
 */
import type { MetricKind, Tolerances } from '../records/baseline.js'
import type { RowStatus, VerdictKind } from '../records/verdict-record.js'

export { BASELINE_SCHEMA, type Baseline, type BaselineInvalidRun, type BaselineRefresh, type MetricKind, type Tolerances } from '../records/baseline.js'
export type { RowStatus, VerdictKind } from '../records/verdict-record.js'

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
   * What this look may do. `last`: nothing follows, so every sequential row still between its
   * boundaries is undecided. `screen`: an interim look of a sequential test (more starts or rounds
   * follow), whose open rows stay open. The one-look rule of `servegate compare` is always last.
   */
  look: 'screen' | 'last'
  /** Share of `alpha` this look may spend on a red check. */
  alphaShare: number
  /** Probability of catching a change of the minimum detectable size (the MDC's power), e.g. 0.9. */
  power: number
  /** How many newest refreshes form the baseline centre (median of their medians). */
  centerWindow: number
  /** The priors' weight: `minHistory − 1` degrees of freedom (a history of this many refreshes weighs as much as the prior). */
  minHistory: number
  /** Prior day-to-day σ (log units), worth `minHistory − 1` refreshes, blended in while the history shows less. */
  dayFloor: number
  /** Prior run-to-run σ (log units), worth 2 × (`minHistory` − 1) runs, blended in while the runs show less. */
  withinFloor: number
  /**
   * The change (fraction) each kind's rows are designed to catch with probability `power`: the
   * sequential test's δ (./sequential.ts). Unset kinds use 0.10; throughput at target, which
   * carries about 1.7× the drift of a p95 ITL row, 0.15 by default (`gate.design_pct`).
   */
  design: Partial<Record<MetricKind, number>>
  /** Increments (A/B rounds, candidate starts) after which a sequential row must be decided. */
  maxLooks: number
  /** Largest share of failed requests a candidate run may have before its row is invalid. */
  failedRequestBudget: number
  /** Failed requests a candidate run may have, as a count; when set it replaces `failedRequestBudget`. */
  maxFailedRequests: number | null
  /** Largest relative change of output tokens per request before a point is not comparable. */
  tokenCountTolerance: number
  /** Candidate runs per point confirmation may reach in total (initial repeats + extra). */
  maxRepeats: number
  /**
   * Largest minimum detectable change (%) a row may have and still pass (`gate.max_mdc_pct`);
   * null: three times the row's tolerance. Beyond it the gate could not have seen a regression
   * of the size it promises, so the row is blind and undecided, whatever its change looked like.
   */
  maxMdcPct: number | null
  /** What a host change since the baseline makes of the verdict: `unmeasured` (the gate), or `judge` (the scheduled watch, which blames the host). */
  onHostChange: 'unmeasured' | 'judge'
}

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
  /** The row's tolerance, % (the smallest change that may count as a regression); absent in old records. */
  tolerance_pct?: number
  /** How far the metric must move in the worse direction (up for latency, down for throughput) to regress, % (unsigned). */
  bar_pct: number | null
  sigma_pct: number | null
  /** Valid runs in the baseline centre window, and in the candidate. */
  n_baseline: number
  n_candidate: number
  /** Starts of the base engine the noise came from: the refreshes, and for a sequential row the noise history too. */
  history: number
  /** Change in the worse direction detected with 90 % probability (the gate's power) at this noise, % (unsigned). */
  mdc_pct: number | null
  /** The row's MDC exceeds gate.max_mdc_pct: it could not have seen the regression it must, so it never passes. */
  blind?: boolean
  status: RowStatus
  notes: string[]
}

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
  /** What reaching the verdict cost on the runner (absent where nothing was measured, e.g. a bare compare). */
  cost?: VerdictCost | null
}

/** The price of a verdict: engine starts, point-runs (one run of one point), GPU-minutes, and the cap in force. */
export interface VerdictCost {
  engine_starts: number
  point_runs: number
  gpu_minutes: number
  /** `gate.max_gpu_minutes` of the base branch; null: no cap. */
  max_gpu_minutes: number | null
  /** The cap ended the job before every gated row was decided. */
  capped: boolean
}
