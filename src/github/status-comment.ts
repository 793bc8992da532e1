/**
 * What every servegate comment and summary headline says about the run it
 * describes (the head commit, the time, the attempt), and the short bodies
 * posted while no verdict exists: running, error, refused, cancelled. A reader
 * can always tell a stale comment from a current one. Pure.
 */
import { escapeMarkdown } from '../util/markdown-escape.js'
import { redactSecrets } from '../util/redact.js'

/** The run a comment describes. */
export interface RunStamp {
  /** Head commit of the pull request (or GITHUB_SHA), full length; null when unknown. */
  headSha: string | null
  /** ISO time the comment was written. */
  at: string
  /** GITHUB_RUN_ATTEMPT, when set. */
  runAttempt: string | null
  runUrl: string | null
}

/** States of a run that has no verdict (yet). */
export type RunState = 'running' | 'error' | 'refused' | 'cancelled'

const STATE_HEAD: Record<RunState, string> = {
  running: '⏳ servegate: benchmark running',
  error: '🛑 servegate: the run failed — no verdict',
  refused: '⛔ servegate: refused to run — no verdict',
  cancelled: '🛑 servegate: cancelled — no verdict',
}

/** `for 1a2b3c4d5e6f · 2026-12-03 12:00 UTC · attempt 2` */
export function stampLine(s: RunStamp): string {
  const parts = [s.headSha === null ? 'for an unknown commit' : `for ${s.headSha.slice(0, 12)}`, `${s.at.slice(0, 16).replace('T', ' ')} UTC`]
  if (s.runAttempt !== null) parts.push(`attempt ${s.runAttempt}`)
  const line = parts.join(' · ')
  return s.runUrl === null ? line : `${line} · [run](${s.runUrl})`
}

/** Longest detail shown, in characters; the job log has the rest. */
export const DETAIL_LIMIT = 2000

/**
 * The body for a run without a verdict. `detail` is plain text (an error message may quote the
 * server): secrets are redacted, markdown and HTML escaped, and it is cut at DETAIL_LIMIT characters.
 */
export function statusCommentBody(
  state: RunState,
  stamp: RunStamp,
  detail: string,
  partial?: { done: number; planned: number },
  secrets: readonly string[] = [],
): string {
  const lines = [`### ${STATE_HEAD[state]}`, '', stampLine(stamp)]
  if (partial !== undefined) lines.push('', `Partial: ${partial.done} of ${partial.planned} planned runs were measured; nothing was certified.`)
  const text = redactSecrets(detail.trim(), secrets)
  if (text !== '') lines.push('', `> ${escapeMarkdown(text.length > DETAIL_LIMIT ? `${text.slice(0, DETAIL_LIMIT)} …` : text)}`)
  if (state !== 'running') lines.push('', 'Any earlier verdict in this comment no longer applies.')
  return lines.join('\n') + '\n'
}
