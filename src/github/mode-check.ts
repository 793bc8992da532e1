/**
 * `mode: check`, the cheap job a gate may wait on: the terms and the
 * baseline are read (from the base branch on a pull request) and the fork
 * policy applied, with no sweep; the verdict is `checked` when the gate may run.
 */
import type { RunContext } from './context.js'
import type { ActionDeps } from './deps.js'
import type { ActionInputs } from './inputs.js'
import { openJob, requireBaseline } from './job.js'
import type { Progress } from './progress.js'
import { safeSummary } from './run-status.js'

/** Read the terms and the baseline the gate will need, and say the gate may run. */
export async function runCheck(deps: ActionDeps, progress: Progress, given: ActionInputs, ctx: RunContext): Promise<void> {
  const { core } = deps
  const { inputs, terms, cfg, notes } = await openJob(deps, progress, given, ctx)
  // A gate that re-measures its reference needs no baseline; neither does the check before it.
  const checksReference = inputs.referenceServe !== undefined || cfg.gate.referenceCommand !== undefined
  if (ctx.base !== null && !checksReference) requireBaseline(terms)
  const where = terms.baseLabel === null ? 'this checkout' : terms.baseLabel
  core.setOutput('verdict', 'checked')
  await safeSummary(
    deps,
    [
      `## ☑️ servegate: checks passed — the gate may run`,
      '',
      `Terms and baseline ${terms.baselineRel} read from ${where}.`,
      ...notes.map((n) => `\n> ${n}`),
    ].join('\n') + '\n',
  )
  core.info(`servegate check: ${ctx.untrusted === null ? 'the code is trusted' : 'untrusted code allowed by allow-fork'}; terms from ${where}`)
}
