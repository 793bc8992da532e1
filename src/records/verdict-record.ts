/**
 * The verdict record, `servegate.record/v1`: the small file every gate or A/B run writes beside its
 * result, read back by the store and gathered by gate/aggregate.ts. Snake_case: a file contract.
 */

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

export const RECORD_SCHEMA = 'servegate.record/v1'

/**
 * What a run ended in: a verdict; `none` (measured, no baseline to compare with); or no verdict at
 * all — `error` (servegate could not run: bad config, unreachable server), `cancelled`, `refused`
 * (untrusted code on a self-hosted runner). Only a verdict can pass a matrix.
 */
export type RecordOutcome = VerdictKind | 'none' | 'error' | 'cancelled' | 'refused'

export const RECORD_OUTCOMES: readonly RecordOutcome[] = [
  'pass',
  'improvement',
  'regression',
  'unmeasured',
  'undecided',
  'not_comparable',
  'broken',
  'incomplete',
  'none',
  'error',
  'cancelled',
  'refused',
]

/** One gated row as the verdict table shows it. Percent is the candidate's signed change. */
export interface RecordRow {
  label: string
  status: RowStatus
  unit: string
  baseline: number | null
  candidate: number | null
  delta_pct: number | null
}

/** What the verdict cost on the runner (the gate's VerdictCost): engine starts, point-runs, GPU-minutes and the cap in force. */
export interface RecordCost {
  engine_starts: number
  point_runs: number
  gpu_minutes: number
  /** `gate.max_gpu_minutes` of the base branch; null: no cap. */
  max_gpu_minutes: number | null
  /** The cap ended the job before every gated row was decided. */
  capped: boolean
}

/** The environment in brief: what a reader needs to tell the matrix's configurations apart. */
export interface RecordEnv {
  gpu: string
  gpu_count: number | 'unknown'
  driver: string
  cuda: string
  engine: string
  model: string
  model_revision: string
  container_digest: string
  /** Redacted (values of flags and variables named like a key, token, secret or password are `***`). */
  serve_command: string
}

export interface VerdictRecord {
  schema: typeof RECORD_SCHEMA
  /** The configuration this run measured: the matrix label (Action input `label`, default the comment key). */
  label: string
  verdict: RecordOutcome
  /** Why there is no verdict (error, cancel, refusal), one paragraph, redacted; null with a verdict. */
  detail: string | null
  /** The Action mode that ran (gate, ab, full, …). */
  mode: string
  sweep: string | null
  /** What the candidate was compared with: the baseline file, or the A/B reference; null when nothing. */
  compared_with: string | null
  /** The gated rows of the verdict (empty without one). */
  rows: RecordRow[]
  /** Labels of the regressed gated rows. */
  regressions: string[]
  /** Labels of undecided gated rows the gate was blind on (MDC above gate.max_mdc_pct): an undecided record with any fails. */
  blind: string[]
  /** The verdict's reasons (what is broken, missing or undecided, and why). */
  reasons: string[]
  /** What reaching the verdict cost; absent where the verdict states none (no verdict, a bare compare, records written before it). */
  cost?: RecordCost
  env: RecordEnv | null
  /** Who changed what since the baseline (gate/env-diff.ts blameEnvChanges); null when nothing known changed. */
  blame: string | null
  /** The runner as the job saw it; GitHub tells a job its runner's name, OS and architecture, not its labels. */
  runner: { name: string | null; os: string | null; arch: string | null; labels: string[] | null }
  /** The job that wrote it: the run's page, the job id (GITHUB_JOB) and the attempt. */
  job: { run_url: string | null; job: string | null; run_attempt: string | null }
  /** The commit measured. */
  head_sha: string | null
  /** ISO time the record was written; of two records for one label the newer counts. */
  at: string
  harness: { version: string }
}

/** A record as found on disk: where it was read (shown when something about it needs a look). */
export interface FoundRecord {
  path: string
  record: VerdictRecord
}
