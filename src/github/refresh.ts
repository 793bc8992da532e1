/**
 * Refresh mode after the sweep: append the result to the baseline file, write
 * it, and commit it (or leave it for a following step). When the branch moved
 * before the push, the same append is replayed on the baseline as the branch's
 * new head holds it, so racing refreshes both land.
 */
import { baselineHistory } from '../gate/history.js'
import type { ResolvedConfig } from '../config/resolve.js'
import type { Baseline } from '../gate/types.js'
import { renderHistoryTrendText } from '../report/history-format.js'
import { baselineText } from '../store/baseline.js'
import type { ResultFile } from '../types.js'
import type { ActionDeps } from './deps.js'
import { optionsFromGateSettings } from '../gate/settings.js'
import { commitBaseline, type RebuiltFile } from './refresh-commit.js'

export interface RefreshStep {
  /** `reset`: the run starts a new history (the existing one is replaced, also on a branch that moved). */
  inputs: { refreshCommit: boolean; refreshPush: boolean; reset?: boolean; noiseOnly?: boolean }
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
  const how = step.inputs.noiseOnly === true ? 'noise' : step.inputs.reset === true ? 'reset' : 'append'
  const info = { name: step.name, commit: deps.env['GITHUB_SHA'] ?? null, how } as const
  // A reset starts a new history from the baseline as it is (its starts on this host keep informing the spread).
  const updated = stages.appendRefresh(step.existing, step.result, info, step.cfg)
  await stages.writeBaseline(step.baselineAbs, updated)
  core.setOutput('baseline-path', step.baselineAbs)
  if (!step.inputs.refreshCommit) {
    return `Baseline: wrote ${step.baselineRel}, not committed (refresh-commit: false), for a following step to commit or open a pull request.`
  }
  const messageFor = (b: Baseline): string => commitMessage(step.baselineRel, step.cfg.sweepName, step.result, step.runUrl, trendText(b, step.cfg))
  const kept = (b: Baseline): Baseline['refreshes'] => (how === 'noise' ? (b.noise_history ?? []) : b.refreshes)
  const ours = kept(updated).at(-1)
  // The branch moved before the push: append this run's refresh to the baseline as the new head holds it.
  const rebuild = (remoteText: string | null): RebuiltFile => {
    const remote = remoteText === null ? null : stages.parseBaselineText(remoteText, `${step.baselineRel} on the branch's new head`)
    // A push that landed although git reported a failure, or a rerun: never append the same refresh twice.
    if (remote !== null && ours !== undefined && kept(remote).some((r) => r.at === ours.at && (r.commit ?? null) === (ours.commit ?? null))) {
      return { text: remoteText!, message: '' }
    }
    const merged = stages.appendRefresh(remote, step.result, info, step.cfg)
    return { text: baselineText(merged), message: messageFor(merged) }
  }
  const ref = deps.env['GITHUB_REF']
  const c = await commitBaseline(deps.git, {
    cwd: step.wd,
    path: step.baselineRel,
    message: messageFor(updated),
    push: step.inputs.refreshPush,
    rebuild,
    ...(ref ? { ref } : {}),
  })
  core.info(`servegate: ${c.note}`)
  if (c.sha !== null) core.setOutput('commit-sha', c.sha)
  return `Baseline: ${c.note}.`
}

/** The baseline's gated metrics as a trend (with change points), judged with the config's gate options. */
function trendText(b: Baseline, cfg: ResolvedConfig): string {
  return renderHistoryTrendText(baselineHistory(b, optionsFromGateSettings(cfg.gate)))
}

/**
 * Subject names the file; the body records what was measured and, after it, the
 * baseline's trend, so `git log` explains each refresh and how the numbers moved.
 */
export function commitMessage(
  path: string,
  sweep: string,
  result: Pick<ResultFile, 'env' | 'harness'>,
  runUrl: string | null,
  trend: string | null = null,
): string {
  const env = result.env
  const lines = [
    `servegate: refresh baseline ${path}`,
    '',
    `Sweep "${sweep}" measured with servegate ${result.harness.version}.`,
    `Engine: ${env.engine.name} ${env.engine.version}; model: ${env.model.id} (revision ${env.model.revision})`,
    `GPU: ${env.gpu.names.join(', ') || 'unknown'}; driver ${env.gpu.driver_version}; container ${env.container_digest}`,
  ]
  if (runUrl !== null) lines.push(`Run: ${runUrl}`)
  if (trend !== null && trend !== '') lines.push('', trend)
  return lines.join('\n')
}
