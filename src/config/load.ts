/** Reading and validating a config file (YAML or JSON). */
import { readFile } from 'node:fs/promises'
import { parse as parseYaml } from 'yaml'
import type { z } from 'zod'
import { describeError, UsageError } from '../errors.js'
import { listProblems } from '../util/json-file.js'
import { configFileSchema, type ConfigFile } from './schema.js'

const HINT = 'Unknown keys are errors; docs/config.md lists every key and its type.'

/** Read, parse and validate the config file at `path`; throws UsageError naming every bad field. */
export async function loadConfigFile(path: string): Promise<ConfigFile> {
  let text: string
  try {
    text = await readFile(path, 'utf8')
  } catch (err) {
    throw new UsageError(`cannot read config file ${path}: ${describeError(err)}`, 'Check the path given to --config.')
  }
  return parseConfigText(text, path)
}

/** Parse and validate config text; `source` names the file in messages. JSON is read as YAML (a superset). */
export function parseConfigText(text: string, source: string): ConfigFile {
  let data: unknown
  try {
    data = source.toLowerCase().endsWith('.json') ? JSON.parse(text) : parseYaml(text)
  } catch (err) {
    throw new UsageError(`${source} is not valid ${source.toLowerCase().endsWith('.json') ? 'JSON' : 'YAML'}: ${describeError(err)}`, HINT)
  }
  // An empty YAML file parses to null: treat it as an empty config, every default applies.
  if (data === null || data === undefined) data = {}
  const r = configFileSchema.safeParse(data)
  if (r.success) return r.data
  const lines = r.error.issues.flatMap((issue) => formatIssue(issue))
  throw new UsageError(`${source} is not a valid servegate config:\n${listProblems(lines)}`, HINT)
}

/** `sweeps.full.shapes[0].input_len` style path. */
function formatPath(path: ReadonlyArray<PropertyKey>): string {
  let out = ''
  for (const part of path) {
    if (typeof part === 'number') out += `[${part}]`
    else out += out === '' ? String(part) : `.${String(part)}`
  }
  return out === '' ? '(top level)' : out
}

function formatIssue(issue: z.core.$ZodIssue): string[] {
  if (issue.code === 'unrecognized_keys') {
    const allowed = allowedKeysAt(issue.path)
    return issue.keys.map((key) => {
      const where = formatPath([...issue.path, key])
      const guess = allowed ? closestKey(key, allowed) : null
      const allowedText = allowed ? ` (allowed here: ${allowed.join(', ')})` : ''
      return `${where}: unknown key${allowedText}${guess ? `; did you mean "${guess}"?` : ''}`
    })
  }
  return [`${formatPath(issue.path)}: ${issue.message}`]
}

// Walks the schema along an issue path to list the keys allowed there.
function allowedKeysAt(path: ReadonlyArray<PropertyKey>): string[] | null {
  let node: unknown = configFileSchema
  const step = (n: unknown): unknown => {
    let cur = n as { _zod?: { def?: Record<string, unknown> } }
    // Unwrap optional/default wrappers.
    while (cur?._zod?.def && (cur._zod.def.type === 'optional' || cur._zod.def.type === 'default')) {
      cur = cur._zod.def.innerType as typeof cur
    }
    return cur
  }
  for (const part of path) {
    const cur = step(node) as { _zod?: { def?: Record<string, unknown> } }
    const def = cur?._zod?.def
    if (!def) return null
    if (def.type === 'object') node = (def.shape as Record<string, unknown>)[String(part)]
    else if (def.type === 'record') node = def.valueType
    else if (def.type === 'array') node = def.element
    else return null
  }
  const cur = step(node) as { _zod?: { def?: Record<string, unknown> } }
  const def = cur?._zod?.def
  return def?.type === 'object' ? Object.keys(def.shape as object) : null
}

// A near miss: same letters ignoring case and separators (baseUrl → base_url), or edit distance ≤ 2.
function closestKey(key: string, allowed: string[]): string | null {
  const norm = (s: string): string => s.toLowerCase().replace(/[-_]/g, '')
  const exact = allowed.find((a) => norm(a) === norm(key))
  if (exact) return exact
  let best: string | null = null
  let bestD = 3
  for (const a of allowed) {
    const d = editDistance(norm(a), norm(key))
    if (d < bestD) {
      bestD = d
      best = a
    }
  }
  return best
}

function editDistance(a: string, b: string): number {
  const prev = Array.from({ length: b.length + 1 }, (_, j) => j)
  for (let i = 1; i <= a.length; i++) {
    let diag = prev[0]!
    prev[0] = i
    for (let j = 1; j <= b.length; j++) {
      const tmp = prev[j]!
      prev[j] = Math.min(prev[j]! + 1, prev[j - 1]! + 1, diag + (a[i - 1] === b[j - 1] ? 0 : 1))
      diag = tmp
    }
  }
  return prev[b.length]!
}
