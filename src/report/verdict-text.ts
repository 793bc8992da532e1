/** The verdict for a terminal: one status line, aligned columns, readable at a glance (pure). */
import { costLine } from '../gate/cost.js'
import { blameEnvChanges } from '../gate/env-diff.js'
import type { GateRow, Verdict } from '../gate/types.js'
import { fmtBar, fmtMdc, fmtPct, fmtSignedPct, fmtValue, sortRows, verdictSummary, verdictWord } from './verdict-format.js'

const COLUMNS = ['STATUS', 'METRIC', 'BASELINE', 'CANDIDATE', 'CHANGE', 'TOL', 'BAR', 'σ', 'MDC', 'N'] as const
// Text columns align left, numbers right.
const RIGHT = [false, false, true, true, true, true, true, true, true, true]

function cells(r: GateRow): string[] {
  return [
    r.status,
    r.label,
    fmtValue(r.baseline, r.unit),
    fmtValue(r.candidate, r.unit),
    fmtSignedPct(r.delta_pct),
    fmtPct(r.tolerance_pct ?? null),
    fmtBar(r),
    fmtPct(r.sigma_pct),
    fmtMdc(r),
    `${r.n_baseline}/${r.n_candidate}`,
  ]
}

function table(rows: readonly GateRow[], indent: string): string[] {
  const body = rows.map(cells)
  const all = [[...COLUMNS], ...body]
  const widths = COLUMNS.map((_, i) => Math.max(...all.map((r) => r[i]!.length)))
  return all.map(
    (r) =>
      indent +
      r
        .map((c, i) => (RIGHT[i] ? c.padStart(widths[i]!) : c.padEnd(widths[i]!)))
        .join('  ')
        .trimEnd(),
  )
}

/** Plain-text verdict: status line, summary, cost, gated table, reported table, environment changes, reasons. */
export function renderVerdictText(v: Verdict, opts: { since?: string } = {}): string {
  const out: string[] = [`servegate verdict: ${verdictWord(v.verdict)}`]
  // Who changed what comes first: a host-only change cannot be the pull request's doing.
  const blame = blameEnvChanges(v.envChanges, opts.since).headline
  if (blame !== null) out.push(`  environment: ${blame}`)
  out.push(`  ${verdictSummary(v)}`)
  // What the verdict cost sits under the verdict: on a serving GPU it is what every pull request pays.
  if (v.cost != null) out.push(`  ${costLine(v.cost)}`)
  out.push('')
  const gated = sortRows(v.rows.filter((r) => r.gated))
  const reported = sortRows(v.rows.filter((r) => !r.gated))
  out.push('gated:', ...table(gated, '  '), '')
  if (reported.length > 0) out.push('reported, not gated:', ...table(reported, '  '), '')
  if (v.envChanges.length > 0) {
    const w = Math.max(...v.envChanges.map((c) => c.field.length))
    const b = Math.max(...v.envChanges.map((c) => c.blame.length))
    out.push('environment changes:', ...v.envChanges.map((c) => `  ${c.blame.padEnd(b)}  ${c.field.padEnd(w)}  ${c.baseline} → ${c.candidate}`), '')
  }
  if (v.reasons.length > 0) out.push('why:', ...v.reasons.map((r) => `  - ${r}`), '')
  return `${out.join('\n').trimEnd()}\n`
}
