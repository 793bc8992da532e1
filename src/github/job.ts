/**
 * What every measuring mode (gate, check, full, refresh, watch, ab) starts
 * from: the gate's terms (base-terms.ts), the config's judgement over the
 * inputs, the config the mode runs (the gate may bracket it), its secrets
 * masked, and the comment named after its baseline.
 */
import { resolve } from 'node:path'
import type { ResolvedConfig } from '../config/resolve.js'
import { UsageError } from '../errors.js'
import { failOnWarning } from '../gate/outcome.js'
import type { Baseline } from '../gate/types.js'
import { hostIsolation } from '../serve/isolation.js'
import { readGateTerms, type Terms } from './base-terms.js'
import { judgeByConfig } from './input-terms.js'
import type { RunContext } from './context.js'
import type { ActionCore, ActionDeps } from './deps.js'
import { commentKeyFor, type ActionInputs, type FailOnPolicy } from './inputs.js'
import { isolationPolicy } from './isolation-policy.js'
import { keepSecrets, type Progress } from './progress.js'

export interface Job {
  /** The inputs with the config's judgement (fail-on, confirm) in force. */
  inputs: ActionInputs
  ctx: RunContext
  /** The working directory paths are resolved against. */
  wd: string
  /** Notes for the report, in order. */
  notes: string[]
  terms: Terms
  /** The config the mode runs: the terms' own, or the gate's bracketed copy. */
  cfg: ResolvedConfig
  /** The sticky comment's marker NAME (and the record's and tracking issue's key), from the baseline's path. */
  key: string
  progress: Progress
}

/** Warn when `fail-on` lets a broken run pass. */
export function warnLaxFailOn(core: Pick<ActionCore, 'warning'>, failOn: FailOnPolicy): void {
  const note = failOnWarning(failOn)
  if (note !== null) core.warning(`servegate: ${note}.`, { title: 'servegate: fail-on lets a broken run pass' })
}

/**
 * Read the terms, let the config's judgement win over the inputs, and adopt the config
 * `place` picks (default: the terms' own). Updates `progress` (inputs, secrets, comment key).
 */
export async function openJob(
  deps: ActionDeps,
  progress: Progress,
  given: ActionInputs,
  ctx: RunContext,
  place: (terms: Terms, inputs: ActionInputs) => ResolvedConfig = (terms) => terms.cfg,
): Promise<Job> {
  const { core } = deps
  const wd = resolve(deps.cwd, given.workingDirectory)
  const notes: string[] = []
  const terms = await readGateTerms(deps, given, ctx, wd, notes)
  // The inputs come from a workflow file the pull request can edit: the config's judgement (the base branch's on a gate) wins.
  const set = { failOn: core.getInput('fail-on').trim() !== '', confirm: core.getInput('confirm').trim() !== '' }
  const judged = judgeByConfig(given, set, terms.judgement)
  for (const w of judged.warnings) core.warning(`servegate: ${w}`, { title: "servegate: an input would loosen the base branch's judgement" })
  const inputs = { ...given, failOn: judged.failOn, confirm: judged.confirm }
  progress.inputs = inputs
  warnLaxFailOn(core, inputs.failOn)
  const cfg = place(terms, inputs)
  // Before anything starts: the commands a pull request controls run where no token is visible, or not at all.
  const off = await isolationPolicy({ cfg, inputs, ctx, payload: deps.event.payload, env: deps.env, probe: deps.isolation ?? hostIsolation })
  if (off !== null) {
    core.warning(`servegate: ${off}`, { title: 'servegate: isolation is off' })
    notes.push(off)
  }
  if (cfg.apiKey !== null) {
    core.setSecret(cfg.apiKey)
    progress.secrets.push(cfg.apiKey)
  }
  // Values of variables the serve command passes to secret flags reach the server's output expanded;
  // credentials in the base URL and the reference command are known from the config too.
  keepSecrets(core, progress, [...(cfg.serve?.secrets ?? []), ...(cfg.secrets ?? [])])
  const key = commentKeyFor(inputs, terms.baselineRel)
  progress.key = key
  return { inputs, ctx, wd, notes, terms, cfg, key, progress }
}

/** The baseline a gate, a watch or a check with a base branch is held to; a UsageError when there is none. */
export function requireBaseline(terms: Terms): Baseline {
  if (terms.baseline !== null) return terms.baseline
  throw new UsageError(
    `there is no baseline at ${terms.baselineRel}${terms.baseLabel === null ? '' : ` on ${terms.baseLabel}`} to gate against.`,
    'Record one first: run the action with mode: refresh on your default branch (see docs/action.md), or point the baseline input at an existing file.',
  )
}
