/**
 * Fit markdown under GitHub's size limits by leaving out whole sections (least
 * important first) and saying so, rather than cutting a table or a chart in half;
 * a verdict table too big on its own loses its least telling rows, never all of them.
 */
import type { Verdict } from '../gate/types.js'
import { STATUS_ORDER } from '../report/verdict-format.js'

/** GitHub rejects a step summary over 1 MiB (bytes); keep a margin for what other steps append. */
export const SUMMARY_LIMIT_BYTES = 1_000_000
/** GitHub rejects an issue comment body over 65,536 characters; the margin covers the marker. */
export const COMMENT_LIMIT_CHARS = 65_000

export interface Section {
  /** Shown in the "left out" note. */
  title: string
  markdown: string
  /** Higher is kept longer; sections of equal priority are dropped last-first. */
  priority: number
}

export type SizeOf = (text: string) => number

export const utf8Bytes: SizeOf = (t) => Buffer.byteLength(t, 'utf8')
export const utf16Chars: SizeOf = (t) => t.length

const join = (parts: readonly string[]): string => parts.filter((p) => p !== '').join('\n\n') + '\n'

/**
 * Join sections in order, dropping the least important whole sections until the text fits `limit`;
 * the note names what was left out and `fullReportAt` (markdown) where it can be read in full.
 */
export function fitSections(sections: readonly Section[], limit: number, size: SizeOf, where: string, fullReportAt = 'the result file'): string {
  const kept = sections.map((s, index) => ({ ...s, index }))
  const dropped: typeof kept = []
  const render = (): string => {
    const parts = kept.map((s) => s.markdown.trim())
    if (dropped.length > 0) {
      const names = [...dropped].sort((a, b) => a.index - b.index).map((s) => s.title)
      parts.push(`> **Note:** left out to stay under ${where}: ${names.join(', ')}. The full report is in ${fullReportAt}.`)
    }
    return join(parts)
  }
  let text = render()
  while (size(text) > limit && kept.length > 1) {
    // The least important, and among equals the latest, goes first.
    let victim = 0
    for (let i = 1; i < kept.length; i++) {
      const k = kept[i]!
      const v = kept[victim]!
      if (k.priority <= v.priority) victim = i
    }
    dropped.push(kept.splice(victim, 1)[0]!)
    text = render()
  }
  // Dropping went least-important first; a small section dropped before a big one may fit again.
  for (const back of [...dropped].sort((a, b) => b.priority - a.priority || a.index - b.index)) {
    if (kept.length === 0) break
    dropped.splice(dropped.indexOf(back), 1)
    kept.push(back)
    kept.sort((a, b) => a.index - b.index)
    const trial = render()
    if (size(trial) <= limit) {
      text = trial
      continue
    }
    kept.splice(kept.indexOf(back), 1)
    dropped.push(back)
  }
  text = render()
  return size(text) > limit ? hardCut(text, limit, size, where) : text
}

/** Last resort for one oversized section: cut at a line boundary, close an open code fence, add a note. */
export function hardCut(text: string, limit: number, size: SizeOf, where: string): string {
  const note = `\n\n> **Note:** cut here to stay under ${where}.\n`
  const budget = limit - size(note) - 4
  // Binary search the longest prefix (in characters) whose size fits the budget.
  let lo = 0
  let hi = text.length
  while (lo < hi) {
    const mid = Math.ceil((lo + hi) / 2)
    if (size(text.slice(0, mid)) <= budget) lo = mid
    else hi = mid - 1
  }
  let cut = text.slice(0, lo)
  const nl = cut.lastIndexOf('\n')
  if (nl > 0) cut = cut.slice(0, nl)
  // Never end inside a surrogate pair.
  if (/[\uD800-\uDBFF]$/.test(cut)) cut = cut.slice(0, -1)
  const fences = cut.match(/^```/gm)?.length ?? 0
  if (fences % 2 === 1) cut += '\n```'
  return cut + note
}

// Passes go first, then improvements; regressions and what blocks a pass stay longest (the
// verdict table's own reading order). Gated rows outlast reported ones.
const ROW_WEIGHT = STATUS_ORDER

/** The verdict with only its `keep` most telling rows (original order), the reasons about kept rows, and how many rows went. */
export function keepVerdictRows(v: Verdict, keep: number): { verdict: Verdict; leftOut: number } {
  if (keep >= v.rows.length) return { verdict: v, leftOut: 0 }
  const ranked = v.rows
    .map((r, i) => ({ r, i }))
    .sort((a, b) => ROW_WEIGHT[a.r.status] - ROW_WEIGHT[b.r.status] || Number(b.r.gated) - Number(a.r.gated) || a.i - b.i)
  const kept = new Set(ranked.slice(0, Math.max(0, keep)).map((x) => x.i))
  const rows = v.rows.filter((_, i) => kept.has(i))
  // compare.ts words a row's reason as `${label}: …`; a reason about a row left out goes with it.
  const gone = v.rows.filter((_, i) => !kept.has(i)).map((r) => `${r.label}: `)
  const reasons = v.reasons.filter((text) => !gone.some((g) => text.startsWith(g)))
  return { verdict: { ...v, rows, reasons }, leftOut: v.rows.length - rows.length }
}

/**
 * Render `v` with as many rows as fit `budget` (most telling first, see keepVerdictRows) and a note
 * saying how many were left out; the whole table when it fits. Binary search over the row count.
 */
export function fitVerdictRows(
  v: Verdict,
  render: (v: Verdict, leftOut: number) => string,
  budget: number,
  size: SizeOf,
): { markdown: string; leftOut: number } {
  const whole = render(v, 0)
  if (size(whole) <= budget) return { markdown: whole, leftOut: 0 }
  let lo = 0
  let hi = v.rows.length - 1
  while (lo < hi) {
    const mid = Math.ceil((lo + hi) / 2)
    const t = keepVerdictRows(v, mid)
    if (size(render(t.verdict, t.leftOut)) <= budget) lo = mid
    else hi = mid - 1
  }
  const t = keepVerdictRows(v, lo)
  return { markdown: render(t.verdict, t.leftOut), leftOut: t.leftOut }
}
