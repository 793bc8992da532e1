/** Formatting shared by the verdict renderers (pure). */
import type { GateRow, RowStatus, Verdict, VerdictKind } from '../gate/types.js'

/** Reading order of row statuses: what blames the candidate first, passes last. */
export const STATUS_ORDER: Record<RowStatus, number> = {
  broken: 0,
  regression: 1,
  missing: 2,
  incomplete: 3,
  invalid: 4,
  unmeasured: 5,
  undecided: 6,
  improvement: 7,
  pass: 8,
}

/** Rows in reading order, as the verdict's precedence: broken, regressions, what is missing or spoiled, improvements, passes; stable otherwise. */
export function sortRows(rows: readonly GateRow[]): GateRow[] {
  return rows
    .map((r, i) => ({ r, i }))
    .sort((a, b) => STATUS_ORDER[a.r.status] - STATUS_ORDER[b.r.status] || a.i - b.i)
    .map(({ r }) => r)
}

/** The verdict as one uppercase word (no emoji: logs and screen readers read it as is). */
export function verdictWord(v: VerdictKind): string {
  return v === 'not_comparable' ? 'NOT COMPARABLE' : v.toUpperCase()
}

/** One sentence under the verdict line. */
export function verdictSummary(v: Verdict): string {
  const gated = v.rows.filter((r) => r.gated)
  switch (v.verdict) {
    case 'regression':
      return `${v.regressions.length} gated metric${v.regressions.length === 1 ? '' : 's'} regressed: ${v.regressions.join(', ')}.`
    case 'pass': {
      const better = gated.filter((r) => r.status === 'improvement').length
      return `All ${gated.length} gated metrics are within their bars${better > 0 ? ` (${better} improved)` : ''}.`
    }
    case 'unmeasured': {
      const open = gated.filter((r) => r.status === 'invalid' || r.status === 'unmeasured').length
      return gated.length === 0
        ? 'No gated metric was measured; nothing was certified.'
        : `${open} of ${gated.length} gated metrics lack a valid measurement on one side; nothing was certified.`
    }
    case 'undecided': {
      const open = gated.filter((r) => r.status === 'undecided').length
      const more = v.confirm ? ` ${v.confirm.extraRepeats} more repeat${v.confirm.extraRepeats === 1 ? '' : 's'} would likely settle it.` : ''
      const blind = v.blind.length > 0 ? ` The gate was blind on ${v.blind.length} of them: it could not have seen a regression of the size it promises.` : ''
      return `${open} of ${gated.length} gated metrics were measured but could not be decided; this is not a pass, and the check fails.${blind}${more}`
    }
    case 'improvement':
      return `All ${gated.length} gated metrics are within their bars and ${gated.filter((r) => r.status === 'improvement').length} improved.`
    case 'not_comparable':
      return 'Baseline and candidate were measured under conditions that cannot be compared; no verdict on performance.'
    case 'broken': {
      const n = v.rows.filter((r) => r.status === 'broken').length
      return `The candidate broke (failed requests beyond the budget, an early stop, changed output or a dead server) in ${n} row${n === 1 ? '' : 's'}; nothing was certified.`
    }
    case 'incomplete': {
      const n = v.rows.filter((r) => r.status === 'missing' || r.status === 'incomplete').length
      return `The candidate run is incomplete (planned runs or points missing, or a curve cut short) in ${n} row${n === 1 ? '' : 's'}; nothing was certified.`
    }
  }
}

/** A figure in its unit with sensible precision; "–" when absent. */
export function fmtValue(x: number | null, unit: string): string {
  if (x === null || !Number.isFinite(x)) return '–'
  const digits = Math.abs(x) >= 1000 ? 0 : Math.abs(x) >= 100 ? 1 : 2
  return `${x.toFixed(digits)} ${unit}`
}

/** Signed percentage change: "+12.3 %", "−4.0 %". */
export function fmtSignedPct(x: number | null): string {
  if (x === null || !Number.isFinite(x)) return '–'
  const v = Math.abs(x) < 0.05 ? 0 : x
  return `${v > 0 ? '+' : v < 0 ? '−' : '±'}${Math.abs(v).toFixed(1)} %`
}

/** Unsigned percentage: "5.0 %". */
export function fmtPct(x: number | null): string {
  return x === null || !Number.isFinite(x) ? '–' : `${x.toFixed(1)} %`
}

/** The MDC, marked when the row is blind (it could not have caught the change it must, so it never passes). */
export function fmtMdc(r: GateRow): string {
  return r.blind === true ? `${fmtPct(r.mdc_pct)} blind` : fmtPct(r.mdc_pct)
}

/** Bar in the worse direction, with its sign: latency "+5.0 %", throughput "−4.8 %". */
export function fmtBar(r: GateRow): string {
  if (r.bar_pct === null || !Number.isFinite(r.bar_pct)) return '–'
  return `${r.higher_is_better ? '−' : '+'}${r.bar_pct.toFixed(1)} %`
}

/** One icon per verdict, for comments, summaries and the matrix table. */
export const VERDICT_ICON: Record<VerdictKind, string> = {
  pass: '✅',
  improvement: '✅',
  regression: '❌',
  broken: '💥',
  incomplete: '🧩',
  unmeasured: '🚫',
  undecided: '⚠️',
  not_comparable: '⛔',
}
