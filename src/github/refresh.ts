/**
 * Refresh mode after the sweep: append the result to the baseline file, write
 * it, and commit it (or leave it for a following step).
 */
import type { ResolvedConfig } from '../config/resolve.js'
import type { Baseline } from '../gate/types.js'
import type { ResultFile } from '../types.js'
import type { ActionDeps } from './deps.js'
import { commitBaseline } from './refresh-commit.js'

export interface RefreshStep {
  inputs: { refreshCommit: boolean; refreshPush: boolean }
  /** Working directory (the git checkout) and the baseline path relative to it and absolute. */
  wd: string
  baselineRel: string
  baselineAbs: string
  name: string
  existing: Baseline | null
  result: ResultFile
  cfg: ResolvedConfig
  runUrl: string | null
}

/** Append, write and (optionally) commit the baseline; returns a note for the summary. */
export async function refreshBaseline(deps: ActionDeps, step: RefreshStep): Promise<string> {
  const { core, stages } = deps
  const updated = stages.appendRefresh(step.existing, step.result, { name: step.name, commit: deps.env['GITHUB_SHA'] ?? null }, step.cfg)
  await stages.writeBaseline(step.baselineAbs, updated)
  core.setOutput('baseline-path', step.baselineAbs)
  if (!step.inputs.refreshCommit) {
    return `Baseline: wrote ${step.baselineRel}, not committed (refresh-commit: false), for a following step to commit or open a pull request.`
  }
  const message = commitMessage(step.baselineRel, step.cfg.sweepName, step.result, step.runUrl)
  const ref = deps.env['GITHUB_REF']
  const c = await commitBaseline(deps.git, { cwd: step.wd, path: step.baselineRel, message, push: step.inputs.refreshPush, ...(ref ? { ref } : {}) })
  core.info(`servegate: ${c.note}`)
  if (c.sha !== null) core.setOutput('commit-sha', c.sha)
  return `Baseline: ${c.note}.`
}

/** Subject names the file; the body records what was measured, so `git log` explains each refresh. */
export function commitMessage(path: string, sweep: string, result: Pick<ResultFile, 'env' | 'harness'>, runUrl: string | null): string {
  const env = result.env
  const lines = [
    `servegate: refresh baseline ${path}`,
    '',
    `Sweep "${sweep}" measured with servegate ${result.harness.version}.`,
    `Engine: ${env.engine.name} ${env.engine.version}; model: ${env.model.id} (revision ${env.model.revision})`,
    `GPU: ${env.gpu.names.join(', ') || 'unknown'}; driver ${env.gpu.driver_version}; container ${env.container_digest}`,
  ]
  if (runUrl !== null) lines.push(`Run: ${runUrl}`)
  return lines.join('\n')
}
