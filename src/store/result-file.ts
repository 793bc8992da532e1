/** Read, validate and write `servegate.result/v1` files. */
import { UsageError } from '../errors.js'
import { RESULT_SCHEMA, type ResultFile } from '../types.js'
import { writeJsonAtomic } from './atomic-write.js'
import { formatIssues, readJsonFile } from '../util/json-file.js'
import { resultFileSchema } from './result-schema.js'

/** Validate parsed JSON from `source` as a result file; every problem is listed in one UsageError. */
export function parseResult(json: unknown, source: string): ResultFile {
  const schema = (json as { schema?: unknown } | null)?.schema
  if (typeof json === 'object' && json !== null && schema !== RESULT_SCHEMA) {
    throw new UsageError(
      `${source} is not a servegate result: schema is ${JSON.stringify(schema)}, expected "${RESULT_SCHEMA}"`,
      schema === 'servegate.baseline/v1' ? 'This is a baseline file; pass a result written by `servegate run`.' : undefined,
    )
  }
  const r = resultFileSchema.safeParse(json)
  if (!r.success) {
    throw new UsageError(
      `${source} is not a valid servegate result file:\n${formatIssues(r.error)}`,
      'Result files are written by `servegate run`; was this one edited by hand or produced by another version?',
    )
  }
  return r.data
}

/**
 * Refuse one shard's result where a whole sweep's is expected (compare, baseline update): it
 * measured a share of each point's load, so its figures describe no point of the sweep.
 */
export function assertWholeSweep(result: ResultFile, source: string): ResultFile {
  const s = result.shard
  if (s === undefined) return result
  throw new UsageError(
    `${source} is shard ${s.index} of ${s.count} of a sharded sweep: it carried a share of each point's load, so it is not comparable on its own`,
    `Merge every shard first: servegate merge <the ${s.count} shard results> --out result.json`,
  )
}

/** Read and validate a result file. */
export async function readResultFile(path: string): Promise<ResultFile> {
  return parseResult(await readJsonFile(path), path)
}

/** Write a result file atomically (pretty JSON, trailing newline). */
export async function writeResultFile(path: string, result: ResultFile): Promise<void> {
  await writeJsonAtomic(path, result)
}
