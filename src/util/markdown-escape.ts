/**
 * Server-reported strings (engine name and version, model id and revision,
 * GPU names, driver, serve command, container digest, error details) are
 * whatever the server or the host said; in a PR comment they must render as
 * the literal text, never as HTML, links, emphasis, table cells or @mentions
 * that notify people. Pure.
 */

// `|` and the HTML-significant characters become character references: they render as the literal
// character, contain no `|` or `\`, so a table-cell escaper applied afterwards (verdict-markdown's)
// has nothing to double-escape. Other markdown punctuation gets a backslash, which reads better raw.
const ENTITY: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '|': '&#124;' }

// A zero-width joiner after `@` keeps the text readable and stops GitHub's mention and team links.
const ZWJ = '\u200D'

/**
 * `s` as inline markdown text safe anywhere, table cells included: neutralises `<`, `>`, `&`, `|`,
 * backticks, `[`, `]`, `*`, `_`, `~`, `\`, @mentions, newlines and control or bidi-override characters.
 */
export function escapeMarkdown(s: string): string {
  return (
    s
      .replace(/\r\n|[\r\n\u2028\u2029]/g, ' ')
      .replace(/[\u0000-\u0008\u000b-\u001f\u007f\u202a-\u202e\u2066-\u2069]/g, '')
      .replace(/[&<>|]/g, (c) => ENTITY[c]!)
      .replace(/[\\`*[\]~]/g, '\\$&')
      // An underscore inside a word (http_status, model_name) never starts emphasis; only the others are escaped.
      .replace(/(?<![\p{L}\p{N}])_|_(?![\p{L}\p{N}])/gu, '\\_')
      .replace(/@(?=[\w-])/g, `@${ZWJ}`)
  )
}

/** A copy of `value` with every string in it (deeply, in arrays and objects) passed through escapeMarkdown. */
export function escapeStrings<T>(value: T): T {
  if (typeof value === 'string') return escapeMarkdown(value) as T
  if (Array.isArray(value)) return value.map((v: unknown) => escapeStrings(v)) as T
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value as Record<string, unknown>).map(([k, v]) => [k, escapeStrings(v)])) as T
  }
  return value
}
