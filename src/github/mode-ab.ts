/**
 * A/B decisions in the Action: the reference engine A and the candidate B
 * measured in alternating slots on this runner (src/ab/run-ab.ts), decided
 * from paired slots, and published like the gate's verdict (one sticky
 * comment, the job summary, outputs, fail-on). Two ways in:
 * - `mode: ab` (a pull request that changes the engine): A is `a-serve` or
 *   `a-base-url`, B is `b-serve` / `b-base-url`, else `serve` / `base-url`;
 * - `mode: gate` with a reference serve command (`reference-serve`, config
 *   `gate.reference_command`): A is that command, B the candidate's server,
 *   so the gate never trusts a baseline measured on another host or day.
 */
import { join, resolve } from 'node:path'
import type { ResolvedConfig } from '../config/resolve.js'
import { UsageError } from '../errors.js'
import { referenceFile } from '../config/reference-file.js'
import type { Verdict } from '../gate/types.js'
import { referenceBaseline } from '../gate/ab-verdict.js'
import type { ResultFile } from '../types.js'
import { reusableFirstSlot } from '../ab/run-ab.js'
import { runFlags, type Terms } from './base-terms.js'
import { runStamp, type RunContext } from './context.js'
import type { ActionDeps } from './deps.js'
import { optionsFromGateSettings } from '../gate/settings.js'
import { hostNotice } from './host-notice.js'
import { secretsInCommand, type ActionInputs } from './inputs.js'
import { openJob } from './job.js'
import { statusTarget, type Progress } from './progress.js'
import { charts, publishVerdict } from './publish-verdict.js'
import { STATE, publishStatusComment, type StatusTarget } from './run-status.js'
import { statusCommentBody } from './status-comment.js'
import type { ReportInput } from './summary.js'

/** What the run records as it goes, for the error and cancel reports (the entry's progress). */
export interface AbProgress {
  key: string | null
  verdictSet: boolean
  resultPath: string | null
  planned: number | null
  secrets: string[]
}

export interface AbJob {
  inputs: ActionInputs
  ctx: RunContext
  /** The working directory paths are resolved against. */
  wd: string
  terms: Terms
  notes: string[]
  progress: AbProgress
  status: StatusTarget
  /** The reference's serve command in gate mode, and where it came from (`the input reference-serve`); null in mode ab. */
  reference: { command: string; source: string } | null
  /**
   * The gate's escalation ladder brought the PR here (gate/ladder.ts): the stored baseline's verdict,
   * why it could not stand, and the GPU-minutes the sweep and any confirmation already cost. Null
   * when every PR is measured A/B (mode ab, gate.reference_mode: always, no baseline yet).
   */
  ladder: {
    from: Verdict
    reason: string
    gpuMinutes: number
    baselineRel: string
    engineStarts: number
    pointRuns: number
    /** The PR's first sweep when it is one engine start of the candidate, one run per point: the A/B's first B slot. */
    first?: ResultFile
  } | null
}

/** The reference serve command gate mode re-measures: the input's, else the config's `gate.reference_command`; null when neither. */
export function referenceFor(
  inputs: Pick<ActionInputs, 'mode' | 'referenceServe'>,
  cfg: Pick<ResolvedConfig, 'gate'>,
): { command: string; source: string } | null {
  if (inputs.mode !== 'gate') return null
  if (inputs.referenceServe !== undefined) return { command: inputs.referenceServe, source: 'the input reference-serve' }
  if (cfg.gate.referenceCommand !== undefined) return { command: cfg.gate.referenceCommand, source: 'gate.reference_command' }
  return null
}

/** Where an A/B decision writes a.json, b.json, the slot files and report.md: `<out without .json>-ab/`. */
function abOutDir(wd: string, out: string): string {
  return resolve(wd, out).replace(/\.json$/i, '') + '-ab'
}

/**
 * The config file for side A: the same sweep, target, gate and server settings, without the
 * server's URL, command and stop command, which are B's (A's server is its own input; B's stop
 * command run for A could stop B's container).
 */
function register(deps: ActionDeps, progress: AbProgress, values: readonly (string | null | undefined)[]): void {
  for (const v of values) {
    if (typeof v !== 'string' || v.length < 4 || progress.secrets.includes(v)) continue
    deps.core.setSecret(v)
    progress.secrets.push(v)
  }
}

/** `mode: ab`: the terms read, then A and B measured and decided as below. */
export async function runAb(deps: ActionDeps, progress: Progress, given: ActionInputs, ctx: RunContext): Promise<void> {
  const { inputs, wd, terms, notes } = await openJob(deps, progress, given, ctx)
  await runAbDecision(deps, { inputs, ctx, wd, terms, notes, progress, status: statusTarget(progress), reference: null, ladder: null })
}

/** Measure A and B on this runner, decide from paired slots, and publish the verdict. */
export async function runAbDecision(deps: ActionDeps, job: AbJob): Promise<void> {
  const { core, stages } = deps
  const { inputs, terms, notes, progress } = job
  const cfgB = terms.cfg
  if (cfgB.serve == null && cfgB.server.baseUrl === null) {
    throw new UsageError(
      job.reference === null
        ? 'mode ab: the candidate B has no server: give the input b-serve or b-base-url (or serve / base-url, or server.command / server.base_url in the config)'
        : `${job.reference.source} is set, but the candidate has no server to measure beside the reference: give the input serve or base-url (or server.command / server.base_url in the config)`,
      'An A/B decision measures two real servers; the built-in simulator is not one of them.',
    )
  }

  // Side A: the same sweep and settings, its own server.
  const aCommand = job.reference?.command ?? inputs.aServe
  const common = runFlags(inputs, job.wd, terms.file?.sweeps ? Object.keys(terms.file.sweeps) : null)
  delete common.baseUrl
  delete common.serve
  delete common.serveCommand
  delete common.containerDigest
  register(deps, progress, secretsInCommand(aCommand ?? ''))
  const cfgA = stages.resolveConfig({
    file: referenceFile(terms.file),
    filePath: terms.filePath,
    flags: { ...common, ...(aCommand !== undefined ? { serve: aCommand } : { baseUrl: inputs.aBaseUrl! }) },
    env: deps.env,
  })
  register(deps, progress, [cfgA.apiKey, ...(cfgA.serve?.secrets ?? [])])

  const outDir = abOutDir(job.wd, inputs.out)
  const paths = { a: join(outDir, 'a.json'), b: join(outDir, 'b.json') }
  const reportPath = join(outDir, 'report.md')
  const points = cfgB.shapes.length * cfgB.concurrency.length
  // Before the slots: a killed or cancelled job still names its files, and the post step can count B's runs.
  progress.resultPath = paths.b
  // At most: an early look may end the job sooner.
  progress.planned = points * inputs.maxRounds
  core.setOutput('result-path', paths.b)
  core.setOutput('a-result-path', paths.a)
  core.setOutput('report-path', reportPath)
  core.saveState(STATE.resultPath, paths.b)
  core.saveState(STATE.planned, String(progress.planned))
  core.saveState(STATE.commentKey, job.status.key)
  core.saveState(STATE.pr, String(job.ctx.pullRequest?.number ?? ''))
  core.saveState(STATE.phase, 'started')

  const slots = 2 * inputs.rounds
  const upTo = inputs.maxRounds > inputs.rounds ? ` (a look after every further round up to ${inputs.maxRounds}, until every gated row is decided)` : ''
  const what = job.reference === null ? 'A (reference) and B (candidate)' : 'the reference engine (A) and the candidate (B)'
  const mode = inputs.resident ? 'both servers up for the whole job (resident)' : 'each server started afresh for every slot'
  core.info(`servegate ${inputs.mode}: ${what}, sweep "${cfgB.sweepName}", ${inputs.rounds} rounds (${slots} slots)${upTo}, ${mode}; files in ${outDir}`)
  const stamp = (): ReturnType<typeof runStamp> => runStamp(job.ctx, new Date().toISOString())
  await publishStatusComment(
    deps,
    job.status,
    statusCommentBody(
      'running',
      stamp(),
      `A/B of sweep "${cfgB.sweepName}": ${what} in ${slots} alternating slots (A B, B A, …) on this runner, ${points} point(s) each, started.`,
      undefined,
      progress.secrets,
    ),
  )

  // Nothing measured twice for nothing: the PR's first sweep, one start of B's engine with one run per
  // point of the whole sweep, is the job's first B slot (each later slot a fresh start of its own).
  const bFirst = reusableFirstSlot(job.ladder?.first, cfgB, inputs.resident)
  if (bFirst !== null)
    notes.push("The PR's first sweep (one run per point, an engine start of its own) is the A/B's first B slot: B's engine was started once fewer.")
  const outcome = await stages.runAB(
    {
      a: cfgA,
      b: cfgB,
      rounds: inputs.rounds,
      maxRounds: inputs.maxRounds,
      outDir,
      gateOptions: optionsFromGateSettings(cfgB.gate),
      // The rows' design noise: the base engine's history on this host (the stored baseline's refreshes).
      history: terms.baseline,
      maxGpuMinutes: cfgB.gate.maxGpuMinutes ?? null,
      ...(job.ladder !== null
        ? { spentGpuMinutes: job.ladder.gpuMinutes, spent: { engineStarts: job.ladder.engineStarts, pointRuns: job.ladder.pointRuns } }
        : {}),
      ...(bFirst !== null ? { bFirst } : {}),
      resident: inputs.resident,
      gpus: { ...(inputs.aGpus !== undefined ? { A: inputs.aGpus } : {}), ...(inputs.bGpus !== undefined ? { B: inputs.bGpus } : {}) },
      names: { resident: 'the input resident', aGpus: 'the input a-gpus', bGpus: 'the input b-gpus', maxRounds: 'the input max-rounds' },
    },
    { log: (line) => core.info(line), ...(deps.signal ? { signal: deps.signal } : {}) },
  )

  let firstLine: string | null = null
  if (job.ladder !== null && job.reference !== null) {
    const abMinutes = outcome.schedule.gpu_minutes
    const total = job.ladder.gpuMinutes + abMinutes
    notes.unshift(
      `Escalated to A/B: ${job.ladder.reason} (against ${job.ladder.baselineRel} the verdict was ${job.ladder.from.verdict}). ` +
        `The reference engine (${job.reference.source}) was measured beside the candidate on this runner, and the verdict is A/B from ${roundsRan(outcome.schedule, inputs.rounds)}. ` +
        `The ladder cost ${total.toFixed(1)} GPU-minutes: ${job.ladder.gpuMinutes.toFixed(1)} for the sweep against the baseline, ${abMinutes.toFixed(1)} for the A/B.`,
    )
    firstLine = hostNotice(terms.baseline, outcome.b.env, true)
    if (firstLine !== null) core.warning(firstLine, { title: 'servegate: the host changed since the baseline' })
  } else if (job.reference !== null) {
    notes.push(
      `A reference serve command is configured (${job.reference.source}): the reference engine was measured again on this runner beside the candidate, ` +
        `and the verdict is A/B from ${roundsRan(outcome.schedule, inputs.rounds)}, not a comparison with ${terms.baselineRel}.`,
    )
    firstLine = hostNotice(terms.baseline, outcome.b.env, true)
    if (firstLine !== null) core.warning(firstLine, { title: 'servegate: the host changed since the baseline' })
  }

  // A stands where the baseline stands in the gate's report: its throughput at target and its curve beside B's.
  // A reference with no valid run stands in without figures (its verdict is unmeasured, naming A), never a baseline refusal.
  const reference = referenceBaseline(outcome.a)
  const hideHost = !inputs.showHost
  const report: ReportInput = {
    mode: inputs.mode,
    outcome: outcome.verdict.verdict,
    sweepName: cfgB.sweepName,
    baselinePath: job.reference === null ? 'A (reference), paired slot by slot on this runner' : 'the reference engine re-measured on this runner (A/B)',
    result: outcome.b,
    baseline: reference,
    verdict: outcome.verdict,
    renderers: {
      // The base URLs stay out of the comment as in the gate's (input show-host); the job summary's tables have them.
      verdict: (v) => stages.renderAbMarkdown(hideHost ? withoutBaseUrls({ ...outcome, verdict: v }) : { ...outcome, verdict: v }),
      report: (r, opts) => stages.renderMarkdownReport(r, opts),
    },
    showHost: inputs.showHost,
    charts: charts(deps, outcome.b, reference),
    notes,
    runUrl: job.ctx.runUrl,
    stamp: stamp(),
    firstLine,
  }
  await publishVerdict(deps, {
    inputs,
    pr: job.ctx.pullRequest?.number ?? null,
    key: job.status.key,
    report,
    reportPath,
    verdict: outcome.verdict,
    onVerdictSet: () => void (progress.verdictSet = true),
    secrets: progress.secrets,
  })
}

type Outcome = Parameters<ActionDeps['stages']['renderAbMarkdown']>[0]

function withoutBaseUrls(o: Outcome): Outcome {
  const hidden = '(not shown: show-host is false)'
  return { ...o, a: { ...o.a, env: { ...o.a.env, base_url: hidden } }, b: { ...o.b, env: { ...o.b.env, base_url: hidden } } }
}

/** "8 paired rounds (a look passed after 8 of at most 24)", from the job's schedule. */
function roundsRan(s: { rounds?: number; max_rounds?: number; order: readonly unknown[] }, planned: number): string {
  const ran = s.rounds ?? s.order.length / 2
  const most = s.max_rounds ?? planned
  return most > ran ? `${ran} paired rounds (a look after round ${ran} settled every gated row; at most ${most})` : `${ran} paired rounds`
}
