/**
 * The sweep of a gate, full, refresh or watch run: its files named before it
 * starts (outputs, and the state the post step reads should the job be
 * killed), a running status on the pull request, and the sweep itself. A
 * server servegate started that died mid-sweep leaves a partial result that a
 * run with a baseline still judges (it calls it broken).
 */
import { plannedRunCount } from '../config/placement.js'
import { ServerExitedDuringSweep } from '../serve/errors.js'
import type { ResultFile } from '../types.js'
import { runStamp } from './context.js'
import type { ActionDeps } from './deps.js'
import type { Job } from './job.js'
import { statusTarget } from './progress.js'
import { STATE, publishStatusComment } from './run-status.js'
import { statusCommentBody } from './status-comment.js'

export interface JobSweep {
  result: ResultFile
  /** The result file (cfg.out) and the markdown report beside it. */
  resultPath: string
  reportPath: string
}

/** Name the files, say the sweep started, and run it; `judged`: a baseline will judge it (a refresh only records). */
export async function sweepJob(deps: ActionDeps, job: Job, judged: boolean): Promise<JobSweep> {
  const { core, stages } = deps
  const { inputs, cfg, progress, notes } = job
  const { baseline, baselineRel } = job.terms
  // Before the sweep: a killed or cancelled job still names its files, and the post step can say what it measured.
  const resultPath = cfg.out
  const reportPath = resultPath.replace(/\.json$/i, '') + '.md'
  progress.resultPath = resultPath
  progress.planned = plannedRunCount(cfg)
  core.setOutput('result-path', resultPath)
  core.setOutput('report-path', reportPath)
  core.saveState(STATE.resultPath, resultPath)
  core.saveState(STATE.planned, String(progress.planned))
  core.saveState(STATE.commentKey, job.key)
  core.saveState(STATE.pr, String(job.ctx.pullRequest?.number ?? ''))
  core.saveState(STATE.phase, 'started')

  core.info(
    `servegate ${inputs.mode}: sweep "${cfg.sweepName}" against ${cfg.serve ? 'the server it starts (serve)' : (cfg.server.baseUrl ?? 'the built-in simulator')}${baseline === null ? '' : `, baseline ${baselineRel}`}`,
  )
  if (inputs.mode !== 'refresh')
    await publishStatusComment(
      deps,
      statusTarget(progress),
      statusCommentBody(
        'running',
        runStamp(job.ctx, new Date().toISOString()),
        `Sweep "${cfg.sweepName}" (${progress.planned} runs) started.`,
        undefined,
        progress.secrets,
      ),
    )
  const { result } = await stages
    .runSweep(cfg, { log: (line) => core.info(line), ...(deps.signal ? { signal: deps.signal } : {}) })
    .catch(async (err: unknown) => {
      // A server servegate started that died mid-sweep is a verdict, not a failure to run: the gate
      // judges the partial result, which it calls broken (a refresh never records it).
      if (!(err instanceof ServerExitedDuringSweep) || !judged) throw err
      core.error(`servegate: ${err.message}`)
      notes.push(err.message.split('\n')[0]!.replace(/^the server/, 'The server') + '.')
      return { result: await stages.readResultFile(err.resultPath), resultPath: err.resultPath }
    })
  if (cfg.server.baseUrl === null && !cfg.serve) notes.push("No base-url was given: these numbers come from servegate's built-in simulator, not a GPU server.")
  return { result, resultPath, reportPath }
}
