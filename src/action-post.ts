/**
 * The Action's post step (action.yml `post:`, `post-if: always()`): when the
 * main step was killed before it could publish (a cancelled job whose grace
 * period ran out, a timeout, an out-of-memory kill), say so in the job summary
 * and the sticky comment, with how many runs were saved — so the pull request
 * never keeps showing the verdict of an earlier commit as if it were current.
 * Does nothing when the main step published, or never started a sweep.
 */
import { describeError } from './errors.js'
import { readRunContext, runStamp } from './github/context.js'
import type { ActionDeps } from './github/deps.js'
import { redactingDeps } from './github/redacting-deps.js'
import { readInputs } from './github/inputs.js'
import { STATE, publishStatusComment, safeSummary } from './github/run-status.js'
import { statusCommentBody } from './github/status-comment.js'

/** Run the post step once; never throws. */
export async function runPost(rawDeps: ActionDeps): Promise<void> {
  const deps = redactingDeps(rawDeps)
  const { core } = deps
  try {
    if (core.getState(STATE.phase) !== 'started') return
    const inputs = readInputs((name) => core.getInput(name))
    if (inputs.githubToken !== undefined) core.setSecret(inputs.githubToken)
    const ctx = readRunContext(deps.event.name, deps.event.payload, deps.env)
    const resultPath = core.getState(STATE.resultPath)
    const planned = Number(core.getState(STATE.planned)) || 0
    let done = 0
    if (resultPath !== '' && deps.files.exists(resultPath)) {
      const saved = await deps.stages.readResultFile(resultPath).catch(() => null)
      done = saved?.points.reduce((n, p) => n + p.runs.length, 0) ?? 0
    }
    const detail =
      `The servegate step stopped before it could report (the job was cancelled, timed out or the process was killed): cancelled — partial (${done} of ${planned} runs).` +
      (resultPath === '' ? '' : ` Finished runs are in ${resultPath}.`)
    const body = statusCommentBody('cancelled', runStamp(ctx, new Date().toISOString()), detail, { done, planned })
    await safeSummary(deps, body.replace(/^### /, '## '))
    const pr = Number(core.getState(STATE.pr))
    await publishStatusComment(
      deps,
      {
        comment: inputs.comment,
        githubToken: inputs.githubToken,
        pr: Number.isInteger(pr) && pr > 0 ? pr : null,
        key: core.getState(STATE.commentKey) || 'servegate',
      },
      body,
    )
    core.saveState(STATE.phase, 'published')
    core.setFailed(`servegate cancelled — partial (${done} of ${planned} runs): no verdict`)
  } catch (err) {
    core.warning(`servegate's post step could not report the interrupted run: ${describeError(err)}`)
  }
}
