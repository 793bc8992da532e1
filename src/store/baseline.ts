/**
 * The baseline store: read a `servegate.baseline/v1` file (validated) and write it safely.
 * Building and appending refreshes is the gate's (gate/refresh.ts).
 */
import { UsageError } from '../errors.js'
import { BASELINE_SCHEMA, type Baseline } from '../records/baseline.js'
import { RESULT_SCHEMA } from '../types.js'
import { formatIssues, readJsonFile } from '../util/json-file.js'
import { jsonText, writeJsonAtomic } from './atomic-write.js'
import { baselineSchema } from './baseline-schema.js'

/** Validate parsed JSON from `source` as a baseline file. */
export function parseBaseline(json: unknown, source: string): Baseline {
  const schema = (json as { schema?: unknown } | null)?.schema
  if (typeof json !== 'object' || json === null || Array.isArray(json)) {
    throw new UsageError(`${source} is not a servegate baseline: expected a JSON object`)
  }
  if (schema !== BASELINE_SCHEMA) {
    throw new UsageError(
      `${source} is not a servegate baseline: schema is ${JSON.stringify(schema)}, expected "${BASELINE_SCHEMA}"`,
      schema === RESULT_SCHEMA ? 'This is a result file; `servegate baseline update RESULT --into FILE` turns it into a baseline.' : undefined,
    )
  }
  const r = baselineSchema.safeParse(json)
  if (!r.success) throw new UsageError(`${source} is not a valid servegate baseline:\n${formatIssues(r.error)}`)
  return r.data
}

/** Read and validate a baseline file. */
export async function readBaseline(path: string): Promise<Baseline> {
  return parseBaseline(await readJsonFile(path), path)
}

/** A baseline file's text: pretty JSON with a trailing newline, its strings redacted (it is committed). */
export function baselineText(b: Baseline): string {
  return jsonText(b)
}

/** Write a baseline atomically (pretty JSON, trailing newline). */
export async function writeBaseline(path: string, b: Baseline): Promise<void> {
  await writeJsonAtomic(path, b)
}
