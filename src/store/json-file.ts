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

/** Every zod issue as `  field.path: message`, one per line. */
export function formatIssues(error: z.ZodError): string {
  return error.issues
    .map((i) => `  ${i.path.length > 0 ? i.path.map(String).join('.') : '(top level)'}: ${i.message}`)
    .join('\n')
}
