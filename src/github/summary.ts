/**
 * The job summary and the PR comment: headline with the run's stamp, throughput
 * at target, verdict table with the environment diff, latency–throughput chart
 * and the methodology's table, each a section so the size limits cut whole
 * sections (and a verdict table too big alone loses rows, not itself). Every
 * string the server reported is escaped; the comment leaves out the server's
 * URL and the host's name unless asked. Pure.
 */
import { costLine } from '../gate/cost.js'
import type { Baseline, Verdict } from '../gate/types.js'
import { escapeMarkdown } from '../util/markdown-escape.js'
import { buildFrontier } from '../report/frontier.js'
import { renderFrontierMermaid } from '../report/frontier-mermaid.js'
import { renderMarkdownReport, type MarkdownReportOptions } from '../report/markdown.js'
import { renderVerdictMarkdown } from '../report/verdict-markdown.js'
import { VERDICT_ICON, verdictSummary } from '../report/verdict-format.js'
import type { ResultFile } from '../types.js'
import { atTargetLines } from './curves.js'
import type { Mode } from './inputs.js'
import { stampLine, type RunStamp } from './status-comment.js'
import { COMMENT_LIMIT_CHARS, SUMMARY_LIMIT_BYTES, fitSections, fitVerdictRows, utf16Chars, utf8Bytes, type Section, type SizeOf } from './trim.js'

/** The verdict output: the gate's verdict, or what the run did instead. */
export type Outcome = Verdict['verdict'] | 'none' | 'refreshed'

export interface ReportInput {
  mode: Mode
  outcome: Outcome
  sweepName: string
  baselinePath: string
  result: ResultFile
  baseline: Baseline | null
  verdict: Verdict | null
  /**
   * Renderers of the verdict table and the methodology's table (the action passes its stages; default:
   * report/verdict-markdown.ts and report/markdown.ts). The comment renders through them from `verdict`
   * (escaped, cut by rows) and `result` (without the host unless `showHost`).
   */
  renderers?: ReportRenderers
  /** Rendered Mermaid charts, one per shape. */
  charts: string[]
  /** Things the reader should know (API failures, refresh commit, simulator in use), as plain text. */
  notes: string[]
  runUrl: string | null
  /** Head commit, time and attempt, shown under the headline so a stale comment is told from a current one. */
  stamp?: RunStamp | null
  /** Name the server's base URL and the runner's host name in the PR comment too (input `show-host`; default false). */
  showHost?: boolean
  /** Plain text shown above the headline, the first thing a reader sees (e.g. that the host changed since the baseline). */
  firstLine?: string | null
}

export interface ReportRenderers {
  verdict(v: Verdict): string
  report(result: ResultFile, opts: MarkdownReportOptions): string
}

const DEFAULT_RENDERERS: ReportRenderers = { verdict: renderVerdictMarkdown, report: renderMarkdownReport }

const ICON: Record<Outcome, string> = {
  ...VERDICT_ICON,
  none: '📊',
  refreshed: '🔄',
}

const WORDS: Record<Outcome, string> = {
  pass: 'pass',
  improvement: 'improvement',
  regression: 'regression',
  broken: 'candidate broke',
  incomplete: 'incomplete run',
  unmeasured: 'unmeasured',
  undecided: 'undecided',
  not_comparable: 'not comparable',
  none: 'measured (no baseline to compare with)',
  refreshed: 'baseline refreshed',
}

/** The first line a reader sees, e.g. `❌ servegate: regression — sweep "gate" vs baselines/gate.json`. */
export function headline(input: Pick<ReportInput, 'outcome' | 'sweepName' | 'baselinePath' | 'baseline'>): string {
  const against = input.outcome === 'refreshed' ? ` → ${input.baselinePath}` : input.baseline === null ? '' : ` vs ${input.baselinePath}`
  return `${ICON[input.outcome]} servegate: ${WORDS[input.outcome]} — sweep "${input.sweepName}"${against}`
}

function headSection(input: ReportInput, level: string): Section {
  const lines = [`${level} ${headline(input)}`]
  if (input.firstLine != null && input.firstLine !== '') lines.unshift(`**${escapeMarkdown(input.firstLine)}**`, '')
  const v = input.verdict
  // The price of the verdict under the verdict line: a section never cut, so the comment always states it.
  if (v?.cost != null) lines.push('', costLine(v.cost))
  if (input.stamp != null) lines.push('', stampLine(input.stamp))
  if (v !== null && v.regressions.length > 0) lines.push('', `Regressed: ${v.regressions.map(escapeMarkdown).join('; ')}`)
  if (v !== null && v.confirm !== null && v.verdict === 'undecided') {
    lines.push('', `Not sure yet: about ${v.confirm.extraRepeats} more repeat(s) of the sweep would likely decide it.`)
  }
  if (input.notes.length > 0) lines.push('', ...input.notes.map((n) => `> ${escapeMarkdown(n)}`))
  return { title: 'headline', markdown: lines.join('\n'), priority: 100 }
}

/** The verdict with every environment string and reason escaped: they quote engine versions, GPU names, serve commands. */
export function escapedVerdict(v: Verdict): Verdict {
  return {
    ...v,
    envChanges: v.envChanges.map((c) => ({
      ...c,
      field: escapeMarkdown(c.field),
      baseline: escapeMarkdown(c.baseline),
      candidate: escapeMarkdown(c.candidate),
    })),
    reasons: v.reasons.map(escapeMarkdown),
  }
}

/** The verdict table for `v`; with rows left out, the sentence still counts all of `full`'s rows and a note says how many went. */
function verdictMarkdown(render: ReportRenderers['verdict'], full: Verdict, v: Verdict, leftOut: number, t: Target): string {
  let md = render(v)
  // The headline already states the cost: once is enough.
  if (v.cost != null) md = md.replace(`${costLine(v.cost)}\n\n`, '')
  if (leftOut === 0) return md
  // The status sentence counts gated rows; it must describe the whole verdict, not the rows shown.
  md = md.replace(verdictSummary(v), verdictSummary(full))
  return `${md}\n> **Note:** ${leftOut} row${leftOut === 1 ? '' : 's'} of the verdict table left out to stay under ${t.where} (passes first); all rows are in ${t.fullAt}.\n`
}

interface Target {
  level: string
  forComment: boolean
  limit: number
  size: SizeOf
  where: string
  /** Where what was left out can be read (markdown). */
  fullAt: string
}

function sections(input: ReportInput, t: Target): Section[] {
  const out: Section[] = [headSection(input, t.level)]
  const at = atTargetLines(input.result, input.baseline)
  if (at.length > 0) out.push({ title: 'throughput at target', markdown: at.join('  \n'), priority: 95 })
  // The comment points at the run, whose summary keeps what the comment had to leave out.
  const link =
    t.forComment && input.runUrl !== null
      ? {
          title: 'run link',
          markdown: `[Workflow run and full job summary](${input.runUrl}) · [artifacts](${input.runUrl}#artifacts) (the HTML report with the charts, where the workflow uploads it)`,
          priority: 99,
        }
      : null
  const render = input.renderers ?? DEFAULT_RENDERERS
  // Strings rendered by the caller (legacy): only where nothing needs cutting or hiding, and never in the comment.
  if (input.verdict !== null) {
    // The gate's markdown carries the verdict table, the environment diff and the reasons; alone too big, it loses rows.
    const full = escapedVerdict(input.verdict)
    const before = [...out, ...(link ? [link] : [])].map((s) => s.markdown).join('\n\n')
    const budget = t.limit - t.size(before) - NOTE_RESERVE
    const fitted = fitVerdictRows(full, (v, leftOut) => verdictMarkdown(render.verdict, full, v, leftOut, t), budget, t.size)
    out.push({ title: 'verdict table and environment diff', markdown: fitted.markdown, priority: 90 })
  }
  // The field's picture, baseline against candidate: kept ahead of the latency chart and the tables.
  const frontier = frontierSection(input)
  if (frontier !== null) out.push(frontier)
  if (input.charts.length > 0) {
    out.push({ title: 'latency–throughput chart', markdown: ['#### Latency vs throughput', ...input.charts].join('\n\n'), priority: 60 })
  }
  const report = render.report(input.result, { showHost: !t.forComment || input.showHost === true })
  out.push({ title: "the methodology's table", markdown: `#### Measurements\n\n${report}`, priority: 70 })
  if (link !== null) out.push(link)
  return out
}

/** Output tok/s per GPU against interactivity, one Mermaid chart and table per shape; null when nothing is measured. */
function frontierSection(input: ReportInput): Section | null {
  const f = buildFrontier(input.result, input.baseline)
  if (f.shapes.length === 0) return null
  return { title: 'frontier chart', markdown: ['#### Frontier: throughput per GPU vs interactivity', ...renderFrontierMermaid(f)].join('\n\n'), priority: 80 }
}

// Room kept for fitSections' own "left out" note and the separators around the verdict section.
const NOTE_RESERVE = 600

/** The job summary markdown, under GitHub's 1 MiB step-summary limit. */
export function buildSummary(input: ReportInput): string {
  const t: Target = {
    level: '##',
    forComment: false,
    limit: SUMMARY_LIMIT_BYTES,
    size: utf8Bytes,
    where: "GitHub's 1 MiB job-summary limit",
    fullAt: fullReportAt(input, false),
  }
  return fitSections(sections(input, t), t.limit, t.size, t.where, t.fullAt)
}

/** The PR comment body (without the marker), under GitHub's 65,536-character comment limit. */
export function buildComment(input: ReportInput): string {
  const t: Target = {
    level: '###',
    forComment: true,
    limit: COMMENT_LIMIT_CHARS,
    size: utf16Chars,
    where: "GitHub's 65,536-character comment limit",
    fullAt: fullReportAt(input, true),
  }
  return fitSections(sections(input, t), t.limit, t.size, t.where, t.fullAt)
}

/** The whole report, untrimmed (written next to the result file). */
export function buildFullReport(input: ReportInput): string {
  const t: Target = { level: '##', forComment: false, limit: Number.POSITIVE_INFINITY, size: utf16Chars, where: 'no limit', fullAt: 'the result file' }
  return fitSections(sections(input, t), t.limit, t.size, t.where, t.fullAt)
}

/** Where a reader finds what a trimmed text left out: the run's artifacts (comment), the result file. */
function fullReportAt(input: ReportInput, forComment: boolean): string {
  if (input.runUrl === null) return 'the result file'
  return forComment ? `the job summary and [the run's artifacts](${input.runUrl}#artifacts)` : `[the run's artifacts](${input.runUrl}#artifacts)`
}

/** The summary written when the action could not finish (crash or bad input). */
export function failureSummary(title: string, detail: string): string {
  const body = detail.length > 50_000 ? `${detail.slice(0, 50_000)}\n…` : detail
  return `## ⛔ ${title}\n\n\`\`\`text\n${body.replace(/```/g, "'''")}\n\`\`\`\n`
}
