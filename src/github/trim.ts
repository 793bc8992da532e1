/**
 * Fit markdown under GitHub's size limits by leaving out whole sections (least
 * important first) and saying so, rather than cutting a table or a chart in half.
 */

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

/** Join sections in order, dropping the least important whole sections until the text fits `limit`. */
export function fitSections(sections: readonly Section[], limit: number, size: SizeOf, where: string): string {
  const kept = sections.map((s, index) => ({ ...s, index }))
  const dropped: typeof kept = []
  const render = (): string => {
    const parts = kept.map((s) => s.markdown.trim())
    if (dropped.length > 0) {
      const names = [...dropped].sort((a, b) => a.index - b.index).map((s) => s.title)
      parts.push(`> **Note:** left out to stay under ${where}: ${names.join(', ')}. The full report is in the result file.`)
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
