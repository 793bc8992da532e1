/**
 * The job summary and the PR comment: headline, throughput at target, verdict
 * table with the environment diff, latency–throughput chart and the methodology's
 * table, each a section so the size limits cut whole sections. Pure.
 */
import type { Baseline, Verdict } from '../gate/types.js'
import type { ResultFile } from '../types.js'
import { atTargetLines } from './curves.js'
import type { Mode } from './inputs.js'
import { COMMENT_LIMIT_CHARS, SUMMARY_LIMIT_BYTES, fitSections, utf16Chars, utf8Bytes, type Section } from './trim.js'

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
  /** The gate's rendered verdict table (with its own reasons), when there is a verdict. */
  verdictMarkdown: string | null
  /** The methodology's table of the result. */
  reportMarkdown: string
  /** Rendered Mermaid charts, one per shape. */
  charts: string[]
  /** Things the reader should know (API failures, refresh commit, simulator in use). */
  notes: string[]
  runUrl: string | null
}

const ICON: Record<Outcome, string> = {
  pass: '✅',
  improvement: '✅',
  regression: '❌',
  broken: '💥',
  incomplete: '🧩',
  inconclusive: '⚠️',
  not_comparable: '⛔',
  none: '📊',
  refreshed: '🔄',
}

const WORDS: Record<Outcome, string> = {
  pass: 'pass',
  improvement: 'improvement',
  regression: 'regression',
  broken: 'candidate broke',
  incomplete: 'incomplete run',
  inconclusive: 'inconclusive',
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
  const v = input.verdict
  if (v !== null && v.regressions.length > 0) lines.push('', `Regressed: ${v.regressions.join('; ')}`)
  if (v !== null && v.confirm !== null && v.verdict === 'inconclusive') {
    lines.push('', `Not sure yet: about ${v.confirm.extraRepeats} more repeat(s) of the sweep would likely decide it.`)
  }
  if (input.notes.length > 0) lines.push('', ...input.notes.map((n) => `> ${n}`))
  return { title: 'headline', markdown: lines.join('\n'), priority: 100 }
}

function sections(input: ReportInput, level: string, forComment: boolean): Section[] {
  const out: Section[] = [headSection(input, level)]
  const at = atTargetLines(input.result, input.baseline)
  if (at.length > 0) out.push({ title: 'throughput at target', markdown: at.join('  \n'), priority: 95 })
  // The gate's markdown carries the verdict table, the environment diff and the reasons.
  if (input.verdictMarkdown !== null) out.push({ title: 'verdict table and environment diff', markdown: input.verdictMarkdown, priority: 90 })
  if (input.charts.length > 0) {
    out.push({ title: 'latency–throughput chart', markdown: ['#### Latency vs throughput', ...input.charts].join('\n\n'), priority: 60 })
  }
  out.push({ title: "the methodology's table", markdown: `#### Measurements\n\n${input.reportMarkdown}`, priority: 70 })
  // The comment points at the run, whose summary keeps what the comment had to leave out.
  if (forComment && input.runUrl !== null) out.push({ title: 'run link', markdown: `[Workflow run and full job summary](${input.runUrl})`, priority: 99 })
  return out
}

/** The job summary markdown, under GitHub's 1 MiB step-summary limit. */
export function buildSummary(input: ReportInput): string {
  return fitSections(sections(input, '##', false), SUMMARY_LIMIT_BYTES, utf8Bytes, "GitHub's 1 MiB job-summary limit")
}

/** The PR comment body (without the marker), under GitHub's 65,536-character comment limit. */
export function buildComment(input: ReportInput): string {
  return fitSections(sections(input, '###', true), COMMENT_LIMIT_CHARS, utf16Chars, "GitHub's 65,536-character comment limit")
}

/** The whole report, untrimmed (written next to the result file). */
export function buildFullReport(input: ReportInput): string {
  return fitSections(sections(input, '##', false), Number.POSITIVE_INFINITY, utf16Chars, 'no limit')
}

/** The summary written when the action could not finish (crash or bad input). */
export function failureSummary(title: string, detail: string): string {
  const body = detail.length > 50_000 ? `${detail.slice(0, 50_000)}\n…` : detail
  return `## ⛔ ${title}\n\n\`\`\`text\n${body.replace(/```/g, "'''")}\n\`\`\`\n`
}
