/**
 * Parser of the Prometheus text exposition format (0.0.4): `# TYPE` lines,
 * samples with labels (escaped values, any order, trailing comma), values
 * including +Inf/-Inf/NaN, optional timestamps (ignored). The input comes
 * from a server servegate does not control, so a bad line is skipped and
 * counted, never fatal.
 */

/** One sample line of the text exposition. */
export interface PromSample {
  name: string
  labels: Record<string, string>
  value: number
}

export interface PromExposition {
  samples: PromSample[]
  /** Metric family name → declared type (`# TYPE`). */
  types: Map<string, string>
  /** Lines that could not be parsed (skipped, not fatal: the server is not ours). */
  skippedLines: number
}

const NAME_RE = /^[a-zA-Z_:][a-zA-Z0-9_:]*/
const LABEL_RE = /^\s*([a-zA-Z_][a-zA-Z0-9_]*)\s*=\s*"((?:[^"\\]|\\.)*)"\s*(,)?/

/** Parse Prometheus text exposition format (0.0.4) into samples. */
export function parsePrometheusText(text: string): PromExposition {
  const samples: PromSample[] = []
  const types = new Map<string, string>()
  let skippedLines = 0
  for (const rawLine of text.split('\n')) {
    const line = rawLine.trim()
    if (line === '') continue
    if (line.startsWith('#')) {
      const m = /^#\s*TYPE\s+(\S+)\s+(\S+)/.exec(line)
      if (m) types.set(m[1] as string, m[2] as string)
      continue
    }
    const sample = parseSampleLine(line)
    if (sample === null) skippedLines++
    else samples.push(sample)
  }
  return { samples, types, skippedLines }
}

function parseSampleLine(line: string): PromSample | null {
  const nameMatch = NAME_RE.exec(line)
  if (!nameMatch) return null
  const name = nameMatch[0]
  let rest = line.slice(name.length)
  const labels: Record<string, string> = {}
  if (rest.startsWith('{')) {
    rest = rest.slice(1)
    for (;;) {
      rest = rest.trimStart()
      if (rest.startsWith('}')) break
      const m = LABEL_RE.exec(rest)
      if (!m) return null
      labels[m[1] as string] = unescapeLabel(m[2] as string)
      rest = rest.slice(m[0].length)
      if (m[3] === undefined && !rest.trimStart().startsWith('}')) return null
    }
    rest = rest.trimStart().slice(1)
  }
  const fields = rest.trim().split(/\s+/)
  const value = parseValue(fields[0])
  if (value === null) return null
  return { name, labels, value }
}

function unescapeLabel(v: string): string {
  return v.replace(/\\(.)/g, (_, c: string) => (c === 'n' ? '\n' : c))
}

/** A sample value (float, +Inf, -Inf, NaN); null when it is not a number. */
export function parseValue(v: string | undefined): number | null {
  if (v === undefined || v === '') return null
  if (v === '+Inf' || v === 'Inf') return Number.POSITIVE_INFINITY
  if (v === '-Inf') return Number.NEGATIVE_INFINITY
  if (v === 'NaN') return Number.NaN
  const n = Number(v)
  return Number.isNaN(n) ? null : n
}
