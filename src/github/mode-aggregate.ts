/**
 * `mode: aggregate`, the final job of a matrix of runners: no sweep and no
 * config; it reads the verdict records the matrix's jobs uploaded (downloaded
 * into `records`), and gives the pull request ONE verdict: the `verdict` and
 * `regressions` outputs, one sticky comment and the job summary with one row
 * per configuration (worst first), and a step that fails per `fail-on` for any
 * configuration. An expected configuration without a record is `incomplete`.
 * The records are judged for the run's head commit (the pull request's head):
 * a record of another commit, or one whose rows contradict its verdict, fails
 * the step naming it (gate/aggregate.ts).
 */
import { resolve } from 'node:path'
import { aggregateExit, aggregateRecords, type Aggregate } from '../gate/aggregate.js'
import { aggregateHeadline, matrixCostLine, renderAggregateDetails, renderAggregateTable } from '../report/aggregate-markdown.js'
import { escapeMarkdown } from '../util/markdown-escape.js'
import { readRecordsUnder } from '../store/record-file.js'
import { runStamp, type RunContext } from './context.js'
import type { ActionDeps } from './deps.js'
import type { ActionInputs } from './inputs.js'
import { commentAction } from './policy.js'
import { publishComment } from './publish.js'
import { safeSummary } from './run-status.js'
import { stampLine } from './status-comment.js'
import { COMMENT_LIMIT_CHARS, SUMMARY_LIMIT_BYTES, fitSections, utf16Chars, utf8Bytes, type Section } from './trim.js'

export interface AggregateJob {
  inputs: ActionInputs
  ctx: RunContext
  /** The sticky comment's marker NAME (input comment-key, default `matrix`). */
  key: string
  /** Called once the `verdict` output holds the answer. */
  onVerdictSet(): void
}

/** Headline, the matrix's cost, stamp, notes and the table first (kept whole); each configuration's details after, dropped last-first when too big. */
function sections(agg: Aggregate, level: string, stamp: string, notes: readonly string[], runUrl: string | null, forComment: boolean): Section[] {
  const cost = matrixCostLine(agg)
  const head = [`${level} ${aggregateHeadline(agg)}`, ...(cost === null ? [] : ['', cost]), '', stamp]
  if (agg.regressions.length > 0) head.push('', `Regressed: ${agg.regressions.map(escapeMarkdown).join('; ')}`)
  for (const n of notes) head.push('', `> ${escapeMarkdown(n)}`)
  head.push('', renderAggregateTable(agg))
  if (agg.rows.some((r) => !r.expected)) head.push('', '⚑ not an expected configuration; its verdict counts all the same.')
  const out: Section[] = [{ title: 'the table', markdown: head.join('\n'), priority: 100 }]
  for (const row of agg.rows) {
    for (const d of renderAggregateDetails({ rows: [row] })) out.push({ title: `the details of ${row.label}`, markdown: d, priority: 50 })
  }
  if (forComment && runUrl !== null) out.push({ title: 'run link', markdown: `[Workflow run and job summary](${runUrl})`, priority: 99 })
  return out
}

/** Read the records, publish the matrix's verdict, and fail the step per fail-on. */
export async function runAggregate(deps: ActionDeps, job: AggregateJob): Promise<void> {
  const { core } = deps
  const { inputs, ctx } = job
  const dir = resolve(deps.cwd, inputs.workingDirectory, inputs.records ?? '.')
  const expected = inputs.expect ?? []
  const { records, missingDir } = await readRecordsUnder(dir)
  const agg = aggregateRecords(records, expected, { headSha: ctx.headSha })
  const notes: string[] = []
  if (missingDir)
    notes.push(
      `The records folder ${inputs.records ?? dir} does not exist: no job uploaded a record (or the download step did not run), so every expected configuration is missing.`,
    )
  core.info(`servegate aggregate: ${records.length} record(s) under ${dir}; ${agg.rows.map((r) => `${r.label}=${r.verdict}`).join(', ')}`)

  // Outputs first: whatever happens to the comment or the summary, the verdict is not lost.
  core.setOutput('verdict', agg.verdict)
  core.setOutput('regressions', JSON.stringify(agg.regressions))
  job.onVerdictSet()

  const stamp = stampLine(runStamp(ctx, new Date().toISOString()))
  const pr = ctx.pullRequest?.number ?? null
  const action = commentAction(inputs.comment, agg.verdict)
  if (pr !== null && action !== 'none') {
    if (inputs.githubToken === undefined) notes.push('No github-token: the pull-request comment was skipped.')
    else {
      const token = inputs.githubToken
      const body = fitSections(
        sections(agg, '###', stamp, notes, ctx.runUrl, true),
        COMMENT_LIMIT_CHARS,
        utf16Chars,
        "GitHub's 65,536-character comment limit",
        'the job summary',
      )
      const r = await publishComment(() => deps.github(token), { issueNumber: pr, name: job.key, body, create: action === 'upsert' })
      if (r.problem !== null) {
        core.warning(r.problem)
        notes.push(r.problem)
      } else if (r.commentId !== null) {
        core.setOutput('comment-id', String(r.commentId))
        core.info(`servegate: pull-request comment ${r.action}${r.url ? ` (${r.url})` : ''}`)
      }
    }
  }
  await safeSummary(
    deps,
    fitSections(sections(agg, '##', stamp, notes, ctx.runUrl, false), SUMMARY_LIMIT_BYTES, utf8Bytes, "GitHub's 1 MiB job-summary limit", 'the records'),
  )

  const code = aggregateExit(agg, inputs.failOn)
  const failing = agg.rows.filter((r) => (inputs.failOn as readonly string[]).includes(r.verdict))
  if (code !== 0)
    core.setFailed(`servegate matrix: ${agg.verdict} — ${failing.map((r) => `${r.label} ${r.verdict}`).join(', ')} (fail-on: ${inputs.failOn.join(',')})`)
  else core.info(`servegate matrix: ${agg.verdict}${agg.verdict === 'pass' || agg.verdict === 'improvement' ? '' : ' (left out of fail-on: not a pass)'}`)
}
