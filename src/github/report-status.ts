/**
 * The end of a run that reached no verdict (refused, error, cancelled): the
 * `verdict` output and the run's record say so, unless the verdict is already
 * out, and the job summary and the sticky comment get a status naming the
 * head commit, so a stale verdict is never left standing.
 */
import { runStamp } from './context.js'
import type { ActionDeps } from './deps.js'
import { statusTarget, type Progress } from './progress.js'
import { writeRunRecord } from './record.js'
import { STATE, publishStatusComment, safeSummary } from './run-status.js'
import { statusCommentBody, type RunState } from './status-comment.js'

/** Summary and comment for a run with no verdict, from what the run established (`progress`). */
export async function reportStatus(
  deps: ActionDeps,
  progress: Progress,
  state: Exclude<RunState, 'running'>,
  detail: string,
  partial?: { done: number; planned: number },
  summary = true,
): Promise<void> {
  if (!progress.verdictSet) deps.core.setOutput('verdict', state)
  if (!progress.verdictSet && progress.inputs !== null) {
    await writeRunRecord(deps, {
      inputs: progress.inputs,
      key: progress.key ?? 'servegate',
      outcome: state,
      detail,
      sweep: null,
      comparedWith: null,
      verdict: null,
      env: null,
      stamp: progress.ctx,
      secrets: progress.secrets,
    })
  }
  const stamp = runStamp(
    progress.ctx ?? { headSha: deps.env['GITHUB_SHA'] ?? null, runAttempt: deps.env['GITHUB_RUN_ATTEMPT'] ?? null, runUrl: null },
    new Date().toISOString(),
  )
  const body = statusCommentBody(state, stamp, detail, partial, progress.secrets)
  if (summary) await safeSummary(deps, body.replace(/^### /, '## '))
  if (progress.inputs !== null) await publishStatusComment(deps, statusTarget(progress), body)
  deps.core.saveState(STATE.phase, 'published')
}
