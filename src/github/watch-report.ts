/**
 * What a scheduled watch run writes: the tracking issue's title, its
 * description (which the job summary repeats) and the short comments that
 * notify watchers. The description opens with who changed what since the
 * baseline, host first — a driver bump arrives with no pull request, so the
 * issue must say it — then the verdict table, the environment diff with host
 * changes set apart from repository changes, the baseline's trend, and links
 * to the run and the commit measured. Pure.
 */
import { blameEnvChanges, describeChanges } from '../gate/env-diff.js'
import type { Baseline, EnvChange, Verdict } from '../gate/types.js'
import { escapeMarkdown } from '../util/markdown-escape.js'
import { verdictSummary } from '../report/verdict-format.js'
import type { ResultFile } from '../types.js'
import { redactSecrets } from '../util/redact.js'
import { atTargetLines } from './curves.js'
import { stampLine, type RunStamp } from './status-comment.js'
import { escapedVerdict, headline, type Outcome, type ReportRenderers } from './summary.js'
import { fitSections, fitVerdictRows, type Section, type SizeOf } from './trim.js'

export interface WatchReport {
  outcome: Exclude<Outcome, 'none' | 'refreshed'>
  verdict: Verdict
  sweepName: string
  baselinePath: string
  baseline: Baseline
  result: ResultFile
  renderers: ReportRenderers
  /** The baseline's trend as markdown (renderHistoryTrendMarkdown: table, trend line, change points, a chart), or null when it could not be drawn. */
  trend: string | null
  charts: string[]
  notes: string[]
  stamp: RunStamp
  /** Links to the workflow run and to the commit measured, when known. */
  runUrl: string | null
  commitUrl: string | null
  /** Values to redact from everything written (the token, the API key, serve-command credentials). */
  secrets: readonly string[]
}

/** `servegate watch: regression on baselines/gate.json` */
export function watchTitle(r: Pick<WatchReport, 'outcome' | 'baselinePath'>): string {
  return `servegate watch: ${r.outcome.replace(/_/g, ' ')} on ${r.baselinePath}`
}

/** A short description of the environment both sides recorded (GPU, driver, CUDA, engine), for "no change". */
function envNow(result: ResultFile): string {
  const e = result.env
  const gpu = e.gpu.names.length === 0 ? 'GPU unknown' : `${e.gpu.count} × ${e.gpu.names[0]}`
  return `${gpu}, driver ${e.gpu.driver_version}, CUDA ${e.gpu.cuda_version}, ${e.engine.name} ${e.engine.version}`
}

/**
 * The description's first line: `⚠ Host changed: driver 570.86 → 575.51 since the baseline; the
 * repository is unchanged.`, `Repository changed: …`, or `No environment change since the baseline: …`.
 */
export function watchFirstLine(verdict: Verdict, result: ResultFile): string {
  const blame = blameEnvChanges(verdict.envChanges)
  if (blame.headline === null) return `No environment change since the baseline: ${envNow(result)}, the same serve command and config.`
  if (blame.host.length > 0) return `⚠ Host changed: ${blame.headline}.`
  if (blame.repository.length > 0) return `Repository changed: ${blame.headline}.`
  return `Harness changed: ${blame.headline}.`
}

const envList = (changes: readonly EnvChange[]): string[] =>
  changes.map((c) => `- ${escapeMarkdown(c.field)}: ${escapeMarkdown(c.baseline)} → ${escapeMarkdown(c.candidate)}`)

/** The environment diff, host changes apart from repository (and harness) changes. */
function envDiffMarkdown(verdict: Verdict): string {
  const blame = blameEnvChanges(verdict.envChanges)
  const unknown = verdict.envChanges.filter((c) => !blame.host.includes(c) && !blame.repository.includes(c) && !blame.harness.includes(c))
  const out = ['#### Environment since the baseline', '']
  out.push('**Host** (GPUs, driver, CUDA, GPU clocks, kernel — no pull request changes these)', '')
  out.push(...(blame.host.length > 0 ? envList(blame.host) : ['- unchanged']), '')
  out.push('**Repository** (engine and image, model, serve command, measurement config)', '')
  out.push(...(blame.repository.length > 0 ? envList(blame.repository) : ['- unchanged']), '')
  if (blame.harness.length > 0) out.push('**Harness** (servegate itself)', '', ...envList(blame.harness), '')
  // A side that recorded nothing (no nvidia-smi, a remote server) proves no change; shown, not blamed.
  if (unknown.length > 0) out.push('<sub>Recorded on one side only (not counted as a change): ' + escapeMarkdown(describeChanges(unknown)) + '</sub>', '')
  return out.join('\n').trimEnd()
}

function linksLine(r: WatchReport): string {
  const parts: string[] = []
  parts.push(r.runUrl === null ? 'Run: not known (GITHUB_RUN_ID unset)' : `[Workflow run](${r.runUrl}) · [artifacts](${r.runUrl}#artifacts)`)
  const sha = r.stamp.headSha
  if (sha !== null) parts.push(r.commitUrl === null ? `commit ${sha.slice(0, 12)}` : `commit measured: [${sha.slice(0, 12)}](${r.commitUrl})`)
  return parts.join(' · ')
}

function sections(r: WatchReport, limit: number, size: SizeOf, where: string, extraNotes: readonly string[]): Section[] {
  const notes = [...r.notes, ...extraNotes]
  const head = [
    escapeMarkdown(watchFirstLine(r.verdict, r.result)),
    '',
    `### ${headline({ outcome: r.outcome, sweepName: r.sweepName, baselinePath: r.baselinePath, baseline: r.baseline })}`,
    '',
    stampLine(r.stamp),
  ]
  if (r.verdict.regressions.length > 0) head.push('', `Regressed: ${r.verdict.regressions.map(escapeMarkdown).join('; ')}`)
  if (notes.length > 0) head.push('', ...notes.map((n) => `> ${escapeMarkdown(n)}`))
  const out: Section[] = [{ title: 'headline', markdown: head.join('\n'), priority: 100 }]
  out.push({ title: 'links', markdown: linksLine(r), priority: 99 })
  const at = atTargetLines(r.result, r.baseline)
  if (at.length > 0) out.push({ title: 'throughput at target', markdown: at.join('  \n'), priority: 95 })
  const full = escapedVerdict(r.verdict)
  const before = out.map((s) => s.markdown).join('\n\n')
  const render = (v: Verdict, leftOut: number): string => {
    const md = r.renderers.verdict(v)
    if (leftOut === 0) return md
    return `${md.replace(verdictSummary(v), verdictSummary(full))}\n> **Note:** ${leftOut} row${leftOut === 1 ? '' : 's'} of the verdict table left out to stay under ${where}; all rows are in the run's report.\n`
  }
  // Room for the sections below the table is not reserved: fitSections drops them whole when needed.
  const fitted = fitVerdictRows(full, render, limit - size(before) - 600, size)
  out.push({ title: 'verdict table', markdown: fitted.markdown, priority: 90 })
  out.push({ title: 'environment diff', markdown: envDiffMarkdown(r.verdict), priority: 88 })
  if (r.trend !== null && r.trend !== '') {
    out.push({ title: "the baseline's trend", markdown: `#### The baseline's trend\n\n${r.trend}`, priority: 80 })
  }
  if (r.charts.length > 0) out.push({ title: 'latency–throughput chart', markdown: ['#### Latency vs throughput', ...r.charts].join('\n\n'), priority: 60 })
  out.push({ title: "the methodology's table", markdown: `#### Measurements\n\n${r.renderers.report(r.result, { showHost: false })}`, priority: 70 })
  return out
}

/**
 * The description (issue body or job summary) under `limit` (measured by `size`), whole sections
 * left out least important first; secrets redacted. `extraNotes` go under the headline (the summary
 * says there what happened to the issue).
 */
export function buildWatchBody(r: WatchReport, limit: number, size: SizeOf, where: string, extraNotes: readonly string[] = []): string {
  const text = fitSections(
    sections(r, limit, size, where, extraNotes),
    limit,
    size,
    where,
    r.runUrl === null ? "the run's report file" : `[the run's artifacts](${r.runUrl}#artifacts)`,
  )
  return redactSecrets(text, r.secrets)
}

const runRef = (r: Pick<WatchReport, 'runUrl'>): string => (r.runUrl === null ? 'this run' : `[this run](${r.runUrl})`)

/** The comment on an open tracking issue when the next watch still fails (a comment notifies; an edit does not). */
export function stillFailingComment(r: WatchReport): string {
  const what = r.verdict.regressions.length > 0 ? `: ${r.verdict.regressions.map(escapeMarkdown).join('; ')}` : ''
  const lines = [
    `Still failing at ${runRef(r)} (${stampLine({ ...r.stamp, runUrl: null })}): **${r.outcome}**${what}.`,
    '',
    escapeMarkdown(watchFirstLine(r.verdict, r.result)),
    '',
    "The description above now holds this run's verdict.",
  ]
  return redactSecrets(lines.join('\n') + '\n', r.secrets)
}

/** The comment before a tracking issue is closed by a passing watch. */
export function passingComment(r: WatchReport): string {
  const lines = [
    `Passing again at ${runRef(r)} (${stampLine({ ...r.stamp, runUrl: null })}): **${r.outcome}** — sweep "${escapeMarkdown(r.sweepName)}" vs ${escapeMarkdown(r.baselinePath)}.`,
    '',
    escapeMarkdown(watchFirstLine(r.verdict, r.result)),
    '',
    'Closing this issue; the next failing watch opens a new one.',
  ]
  return redactSecrets(lines.join('\n') + '\n', r.secrets)
}
