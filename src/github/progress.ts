/**
 * What a run has established so far (inputs, context, comment key, result
 * path, planned runs, known secrets), kept by the entry for the error,
 * refusal and cancel reports, and updated by the mode as it goes.
 */
import type { RunContext } from './context.js'
import type { ActionCore } from './deps.js'
import type { ActionInputs } from './inputs.js'
import type { StatusTarget } from './run-status.js'

export interface Progress {
  inputs: ActionInputs | null
  ctx: RunContext | null
  key: string | null
  /** Set once the `verdict` output holds the gate's answer: a later crash must not rewrite it. */
  verdictSet: boolean
  resultPath: string | null
  planned: number | null
  /** Values redacted from status details (the token, the API key, serve-command credentials). */
  secrets: string[]
}

export function newProgress(): Progress {
  return { inputs: null, ctx: null, key: null, verdictSet: false, resultPath: null, planned: null, secrets: [] }
}

/** Where the run's status comment goes, from what is known so far. */
export function statusTarget(progress: Progress): StatusTarget {
  const inputs = progress.inputs
  return {
    comment: inputs?.comment ?? 'never',
    githubToken: inputs?.githubToken,
    pr: progress.ctx?.pullRequest?.number ?? null,
    key: progress.key ?? 'servegate',
  }
}

/** Mask each value not yet known in every later log line, and remember it for the status details. */
export function keepSecrets(core: Pick<ActionCore, 'setSecret'>, progress: Progress, values: readonly string[]): void {
  for (const secret of values) {
    if (progress.secrets.includes(secret)) continue
    core.setSecret(secret)
    progress.secrets.push(secret)
  }
}
