/** The verdict as GitHub-flavoured markdown: the PR comment / job summary body (pure). */
import { costLine } from '../gate/cost.js'
import { blameEnvChanges } from '../gate/env-diff.js'
import type { GateRow, Verdict } from '../gate/types.js'
import { fmtBar, fmtMdc, fmtPct, fmtSignedPct, fmtValue, sortRows, verdictSummary, verdictWord } from './verdict-format.js'

const HEADER = '| Status | Metric | Baseline | Candidate | Change | Tolerance | Bar | σ | MDC | n (base/cand) |\n|---|---|--:|--:|--:|--:|--:|--:|--:|--:|'

function row(r: GateRow): string {
  const status = r.status === 'regression' || r.status === 'broken' ? `**${r.status}**` : r.status
  return `| ${status} | ${r.label} | ${fmtValue(r.baseline, r.unit)} | ${fmtValue(r.candidate, r.unit)} | ${fmtSignedPct(r.delta_pct)} | ${fmtPct(r.tolerance_pct ?? null)} | ${fmtBar(r)} | ${fmtPct(r.sigma_pct)} | ${fmtMdc(r)} | ${r.n_baseline}/${r.n_candidate} |`
}

// Pipes and newlines would break a table cell.
const cell = (s: string): string => s.replace(/\|/g, '\\|').replace(/\r?\n/g, ' ')

/** Markdown for a verdict: status line, summary, cost, gated table, reported table (collapsed), environment changes, reasons. */
export function renderVerdictMarkdown(v: Verdict, opts: { since?: string } = {}): string {
  const out: string[] = [`### servegate verdict: ${verdictWord(v.verdict)}`, '']
  // Who changed what comes first: a host-only change cannot be the pull request's doing.
  const blame = blameEnvChanges(v.envChanges, opts.since).headline
  if (blame !== null) out.push(`**Environment:** ${cell(blame)}`, '')
  out.push(verdictSummary(v), '')
  // What the verdict cost sits under the verdict: on a serving GPU it is what every pull request pays.
  if (v.cost != null) out.push(costLine(v.cost), '')
  const gated = sortRows(v.rows.filter((r) => r.gated))
  const reported = sortRows(v.rows.filter((r) => !r.gated))
  out.push('**Gated metrics**', '', HEADER, ...gated.map(row), '')
  if (reported.length > 0) {
    out.push('<details><summary>Reported, not gated</summary>', '', HEADER, ...reported.map(row), '', '</details>', '')
  }
  if (v.envChanges.length > 0) {
    out.push('**Environment changes**', '', '| Changed by | Field | Baseline | Candidate |', '|---|---|---|---|')
    for (const c of v.envChanges) out.push(`| ${c.blame} | ${cell(c.field)} | ${cell(c.baseline)} | ${cell(c.candidate)} |`)
    out.push('')
  } else {
    out.push('Environment: no changes recorded between baseline and candidate.', '')
  }
  if (v.reasons.length > 0) out.push('**Why**', '', ...v.reasons.map((r) => `- ${r}`), '')
  out.push(
    "<sub>Change: candidate median vs baseline centre. Bar: the move in the worse direction that counts as a regression, max(tolerance, t·σ) at the row's share of the false-alarm rate per PR. σ: combined noise of the difference. MDC: the smallest change caught 90 % of the time at this noise; a blind row (MDC above gate.max_mdc_pct) never passes.</sub>",
  )
  return `${out.join('\n')}\n`
}
