/**
 * The comment and summary of a run that has no verdict (running, error,
 * refused, cancelled), and the state the main step leaves for the post step,
 * so a killed job still tells the pull request that its last verdict is stale.
 */
import { describeError } from '../errors.js'
import type { ActionDeps } from './deps.js'
import type { CommentPolicy } from './inputs.js'
import { publishComment } from './publish.js'

/** Keys of core.saveState shared by the main and the post step. */
export const STATE = {
  /** '' (never started), 'started' (the sweep may be running), 'published' (a verdict or status is out). */
  phase: 'servegate-phase',
  pr: 'servegate-pr',
  commentKey: 'servegate-comment-key',
  resultPath: 'servegate-result-path',
  planned: 'servegate-planned-runs',
} as const

/** Where a status goes: the sticky comment of `pr` named `key`, under the comment policy and token. */
export interface StatusTarget {
  comment: CommentPolicy
  githubToken: string | undefined
  pr: number | null
  key: string
}

/**
 * Post or update the sticky comment with a status body: `always` creates it,
 * `on-regression` only updates an existing one (its verdict would otherwise
 * stand stale), `never` leaves it. API problems become warnings.
 */
export async function publishStatusComment(deps: ActionDeps, target: StatusTarget, body: string): Promise<void> {
  if (target.pr === null || target.comment === 'never' || target.githubToken === undefined) return
  const token = target.githubToken
  const r = await publishComment(() => deps.github(token), { issueNumber: target.pr, name: target.key, body, create: target.comment === 'always' })
  if (r.problem !== null) deps.core.warning(r.problem)
  else if (r.commentId !== null) deps.core.setOutput('comment-id', String(r.commentId))
}

/** Append to the job summary; a failure is a warning, never a crash. */
export async function safeSummary(deps: ActionDeps, markdown: string): Promise<void> {
  try {
    await deps.core.appendSummary(markdown)
  } catch (err) {
    deps.core.warning(`servegate could not write the job summary: ${describeError(err)}`)
  }
}
