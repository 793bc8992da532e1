/** Read a JSON file and turn validation failures into UsageErrors that name the file, the field and what was expected. */
import { readFile } from 'node:fs/promises'
import type { z } from 'zod'
import { UsageError, describeError } from '../errors.js'

/** Parse `text` from `source` as JSON; a truncated or corrupt file is a UsageError saying which. */
export function parseJsonText(text: string, source: string): unknown {
  if (text.trim() === '') throw new UsageError(`${source} is empty (truncated or never written)`)
  try {
    return JSON.parse(text) as unknown
  } catch (err) {
    const msg = err instanceof Error ? err.message : String(err)
    const pos = /position (\d+)/.exec(msg)
    // JSON.parse reports a truncated file as an early end, or as an error at its very last character.
    const truncated = /end of JSON/i.test(msg) || (pos !== null && Number(pos[1]) >= text.trimEnd().length)
    throw new UsageError(
      `${source} is not valid JSON: ${truncated ? 'the file ends early (truncated — was a write interrupted?)' : 'corrupt content'} (${msg})`,
      truncated ? 'Re-create it: rerun the sweep or restore the file from version control.' : undefined,
    )
  }
}

/** Read and parse a JSON file; a missing or unreadable file is a UsageError. */
export async function readJsonFile(path: string): Promise<unknown> {
  let text: string
  try {
    text = await readFile(path, 'utf8')
  } catch (err) {
    throw new UsageError(`cannot read ${path}: ${describeError(err)}`)
  }
  return parseJsonText(text, path)
}

/** How many problems a validation message lists before summarising the rest. */
const MAX_LISTED_PROBLEMS = 5

/**
 * `  problem` lines for the first `max` problems, then `  … and N more`: a file
 * with one systematic mistake (a renamed field in 90 runs) must not bury the
 * first, telling line under 90 copies of it.
 */
export function listProblems(lines: readonly string[], max = MAX_LISTED_PROBLEMS): string {
  const shown = lines.length > max + 1 ? lines.slice(0, max) : lines
  const rest = lines.length - shown.length
  return [...shown.map((l) => `  ${l}`), ...(rest > 0 ? [`  … and ${rest} more`] : [])].join('\n')
}

/** A zod issue path as `points.0.runs.1.itl_ms.p95`, or `(top level)`. */
function issuePath(path: ReadonlyArray<PropertyKey>): string {
  return path.length > 0 ? path.map(String).join('.') : '(top level)'
}

/**
 * The zod issues as `  field.path: message` lines, summarised by listProblems.
 * `where` words the field (e.g. `input "mode"` for the Action's inputs).
 * Every place that prints zod issues uses this (or listProblems over its own lines).
 */
export function formatIssues(error: { readonly issues: ReadonlyArray<z.core.$ZodIssue> }, where: (path: string) => string = (p) => p): string {
  return listProblems(error.issues.map((i) => `${where(issuePath(i.path))}: ${i.message}`))
}
