/**
 * The verdict record (`servegate.record/v1`): the small file every gate or A/B
 * run writes beside its result, so a final job can gather the verdicts of a
 * matrix of runners (gate/aggregate.ts) without reading whole result files.
 * It says which configuration (label) it is, where it ran, what it decided,
 * the gated rows, the environment in brief (the serve command redacted) and
 * who changed what since the baseline. Snake_case: it is a file contract. Pure.
 */
import type { EnvRecord } from '../types.js'
import { redactSecrets } from '../util/redact.js'
import { blameEnvChanges } from './env-diff.js'
import type { RowStatus, Verdict, VerdictKind } from './types.js'

export const RECORD_SCHEMA = 'servegate.record/v1'

/**
 * What a run ended in: a verdict; `none` (measured, no baseline to compare with); or no verdict at
 * all — `error` (servegate could not run: bad config, unreachable server), `cancelled`, `refused`
 * (untrusted code on a self-hosted runner). Only a verdict can pass a matrix.
 */
export type RecordOutcome = VerdictKind | 'none' | 'error' | 'cancelled' | 'refused'

export const RECORD_OUTCOMES: readonly RecordOutcome[] = ['pass', 'improvement', 'regression', 'unmeasured', 'undecided', 'not_comparable', 'broken', 'incomplete', 'none', 'error', 'cancelled', 'refused']

/** One gated row as the verdict table shows it. Percent is the candidate's signed change. */
export interface RecordRow {
  label: string
  status: RowStatus
  unit: string
  baseline: number | null
  candidate: number | null
  delta_pct: number | null
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

export interface RecordInput {
  label: string
  outcome: RecordOutcome
  detail?: string | null
  mode: string
  sweep: string | null
  comparedWith: string | null
  verdict: Verdict | null
  env: EnvRecord | null
  runner: VerdictRecord['runner']
  job: VerdictRecord['job']
  headSha: string | null
  at: string
  harnessVersion: string
  /** Known secret values (tokens, API keys) removed from every string the record copies. */
  secrets?: readonly string[]
}

function briefEnv(e: EnvRecord, secrets: readonly string[]): RecordEnv {
  const names = e.gpu.names.length === 0 ? 'unknown' : [...new Set(e.gpu.names)].join(', ')
  return {
    gpu: names,
    gpu_count: e.gpu.count,
    driver: e.gpu.driver_version,
    cuda: e.gpu.cuda_version,
    engine: `${e.engine.name} ${e.engine.version}`,
    model: e.model.id,
    model_revision: e.model.revision,
    container_digest: e.container_digest,
    // Redacted when the config was resolved; again here, with the secrets this run knows of.
    serve_command: redactSecrets(e.serve_command, secrets),
  }
}

/** Build the record of one run (pure: the caller supplies the time, the runner and the job). */
export function buildVerdictRecord(input: RecordInput): VerdictRecord {
  const secrets = input.secrets ?? []
  const v = input.verdict
  const clean = (s: string): string => redactSecrets(s, secrets)
  return {
    schema: RECORD_SCHEMA,
    label: input.label,
    verdict: input.outcome,
    detail: input.detail == null ? null : clean(input.detail),
    mode: input.mode,
    sweep: input.sweep,
    compared_with: input.comparedWith,
    rows: (v?.rows ?? [])
      .filter((r) => r.gated)
      .map((r) => ({ label: r.label, status: r.status, unit: r.unit, baseline: r.baseline, candidate: r.candidate, delta_pct: r.delta_pct })),
    regressions: [...(v?.regressions ?? [])],
    blind: [...(v?.blind ?? [])],
    reasons: (v?.reasons ?? []).map(clean),
    env: input.env === null ? null : briefEnv(input.env, secrets),
    blame: v === null ? null : (() => {
      const h = blameEnvChanges(v.envChanges).headline
      return h === null ? null : clean(h)
    })(),
    runner: input.runner,
    job: input.job,
    head_sha: input.headSha,
    at: input.at,
    harness: { version: input.harnessVersion },
  }
}
