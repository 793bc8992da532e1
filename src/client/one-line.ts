/**
 * Server text made fit for one line of a record's error detail, a log line or
 * a PR comment: whatever a server or proxy answered (a JSON message, an nginx
 * HTML page, a Python traceback) becomes a short single line.
 */

/** Longest excerpt of a body that is not a JSON message (HTML page, plain text, stray SSE data). */
export const MAX_EXCERPT_CHARS = 160
/** Longest message taken from a JSON error body. */
export const MAX_MESSAGE_CHARS = 300

/** `text` with HTML tags (and script/style blocks) removed, whitespace collapsed, cut to `max` chars with `…`. */
export function oneLine(text: string, max: number = MAX_EXCERPT_CHARS): string {
  // Only the head can be shown: clean its first 4 KiB, never a whole page.
  let s = text.length > 4096 ? text.slice(0, 4096) : text
  if (s.includes('<')) {
    s = s
      .replace(/<(script|style)\b[^>]*>[\s\S]*?<\/\1\s*>/gi, ' ')
      .replace(/<!--[\s\S]*?-->/g, ' ')
      .replace(/<\/?[A-Za-z!][^<>]*>/g, ' ')
  }
  if (s.includes('&')) s = s.replace(/&(amp|lt|gt|quot|#39|apos|nbsp);/g, (_, e: string) => ENTITIES[e] ?? ' ')
  // Control characters (a terminal escape in a server's message) become spaces too.
  s = s.replace(/[\s\u0000-\u001f\u007f]+/g, ' ').trim()
  if (s.length <= max) return s
  // Cut on a code point boundary.
  let cut = max - 1
  const c = s.charCodeAt(cut - 1)
  if (c >= 0xd800 && c <= 0xdbff) cut--
  return `${s.slice(0, cut).trimEnd()}…`
}

const ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', '#39': "'", apos: "'", nbsp: ' ' }
