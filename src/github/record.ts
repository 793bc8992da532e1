/**
 * Every gate, full or A/B job writes its verdict record (gate/record.ts) beside
 * its result, `<out without .json>.record.json`, and names it in the output
 * `record-path`, so a matrix's final job (mode aggregate) can gather them from
 * artifacts. A run that ends without a verdict (an error, a refusal, a cancel)
 * writes one too, saying so: a record that says why is better than none. A
 * crash before the inputs are read leaves no record; the aggregate then says
 * "no record". Writing it never fails the run.
 */
import { resolve } from 'node:path'
import { describeError } from '../errors.js'
import { buildVerdictRecord, type RecordOutcome } from '../gate/record.js'
import type { Verdict } from '../gate/types.js'
import { recordPathFor } from '../store/record-file.js'
import type { EnvRecord } from '../types.js'
import { HARNESS_VERSION } from '../version.js'
import type { ActionDeps } from './deps.js'
import type { ActionInputs, Mode } from './inputs.js'
import type { RunStamp } from './status-comment.js'

/** Modes whose runs are one configuration's verdict (refresh, check and aggregate are not). */
const RECORDING_MODES: readonly Mode[] = ['gate', 'full', 'ab', 'watch']

/** Where this job's record goes: beside the result file named by the input `out`. */
function recordPathOf(cwd: string, inputs: Pick<ActionInputs, 'workingDirectory' | 'out'>): string {
  return recordPathFor(resolve(cwd, inputs.workingDirectory, inputs.out))
}

export interface RunRecord {
  inputs: ActionInputs
  /** The sticky comment's key: the label when the input `label` is empty. */
  key: string
  outcome: RecordOutcome
  /** Why there is no verdict (error, refused, cancelled). */
  detail?: string | null
  sweep: string | null
  comparedWith: string | null
  verdict: Verdict | null
  env: EnvRecord | null
  stamp: Pick<RunStamp, 'headSha' | 'runAttempt' | 'runUrl'> | null
  secrets?: readonly string[]
}

/** Write this run's record and set the output `record-path`; a failure is a warning. No-op outside RECORDING_MODES. */
export async function writeRunRecord(deps: ActionDeps, r: RunRecord): Promise<void> {
  if (!RECORDING_MODES.includes(r.inputs.mode)) return
  const path = recordPathOf(deps.cwd, r.inputs)
  const env = deps.env
  // An event that names no commit (a schedule, a dispatch without a SHA) still measured one: the checkout's.
  const named = r.stamp?.headSha || env['GITHUB_SHA'] || null
  const headSha = named ?? (await checkoutHead(deps, resolve(deps.cwd, r.inputs.workingDirectory)))
  const record = buildVerdictRecord({
    label: r.inputs.label ?? r.key,
    outcome: r.outcome,
    detail: r.detail ?? null,
    mode: r.inputs.mode,
    sweep: r.sweep,
    comparedWith: r.comparedWith,
    verdict: r.verdict,
    env: r.env,
    runner: { name: env['RUNNER_NAME'] || null, os: env['RUNNER_OS'] || null, arch: env['RUNNER_ARCH'] || null, labels: null },
    job: { run_url: r.stamp?.runUrl ?? null, job: env['GITHUB_JOB'] || null, run_attempt: r.stamp?.runAttempt ?? env['GITHUB_RUN_ATTEMPT'] ?? null },
    headSha,
    at: new Date().toISOString(),
    harnessVersion: HARNESS_VERSION,
    secrets: r.secrets ?? [],
  })
  try {
    await deps.files.writeText(path, `${JSON.stringify(record, null, 2)}\n`)
    deps.core.setOutput('record-path', path)
    deps.core.info(`servegate: verdict record (${record.verdict}) for configuration "${record.label}" in ${path}`)
  } catch (err) {
    deps.core.warning(
      `servegate could not write its verdict record ${path}: ${describeError(err)}. A matrix's aggregate will count this configuration as missing.`,
    )
  }
}

/** The checkout's HEAD commit (`git rev-parse HEAD`), or null when git cannot say. */
async function checkoutHead(deps: ActionDeps, cwd: string): Promise<string | null> {
  try {
    const r = await deps.git(['rev-parse', 'HEAD'], cwd)
    const sha = r.stdout.trim()
    return r.code === 0 && /^[0-9a-f]{40,64}$/i.test(sha) ? sha : null
  } catch {
    return null
  }
}
