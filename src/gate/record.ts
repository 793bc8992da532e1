/**
 * The verdict record (`servegate.record/v1`): the small file every gate or A/B
 * run writes beside its result, so a final job can gather the verdicts of a
 * matrix of runners (gate/aggregate.ts) without reading whole result files.
 * It says which configuration (label) it is, where it ran, what it decided,
 * the gated rows, what the verdict cost, the environment in brief (the serve command redacted) and
 * who changed what since the baseline. Snake_case: it is a file contract. Pure.
 */
import type { EnvRecord } from '../types.js'
import { redactSecrets } from '../util/redact.js'
import { blameEnvChanges } from './env-diff.js'
import type { Verdict } from './types.js'
import { RECORD_SCHEMA, type RecordEnv, type RecordOutcome, type VerdictRecord } from '../records/verdict-record.js'

export { RECORD_OUTCOMES, RECORD_SCHEMA, type RecordEnv, type RecordOutcome, type RecordRow, type VerdictRecord } from '../records/verdict-record.js'

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
    ...(v?.cost != null ? { cost: { ...v.cost } } : {}),
    env: input.env === null ? null : briefEnv(input.env, secrets),
    blame:
      v === null
        ? null
        : (() => {
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
