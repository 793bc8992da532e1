/**
 * Verdict record files (`servegate.record/v1`, gate/record.ts): where a run
 * writes its record, validation of a record read back, and reading every
 * record under a folder (actions/download-artifact puts each artifact in a
 * subfolder of its own, so the walk is recursive).
 */
import { readdir, stat } from 'node:fs/promises'
import { join } from 'node:path'
import { z } from 'zod'
import { UsageError, describeError } from '../errors.js'
import { RECORD_OUTCOMES, RECORD_SCHEMA, type FoundRecord, type RowStatus, type VerdictRecord } from '../records/verdict-record.js'
import { formatIssues, readJsonFile } from '../util/json-file.js'

/** The record written beside a result file: `servegate-result.json` → `servegate-result.record.json`. */
export function recordPathFor(resultPath: string): string {
  return resultPath.replace(/\.json$/i, '') + '.record.json'
}

const ROW_STATUSES: readonly RowStatus[] = ['regression', 'improvement', 'pass', 'undecided', 'unmeasured', 'missing', 'invalid', 'broken', 'incomplete']
// Records written before `inconclusive` split in two: the verdict never certified a measurement, so
// it reads as unmeasured; a row of that name was the statistics' indecision.
const OLD_VERDICT = 'inconclusive'
const text = z.string()
const maybe = z.string().nullable()
const num = z.number().nullable()

// Later versions of v1 may add keys: unknown keys are kept, not refused.
const recordSchema = z.looseObject({
  schema: z.literal(RECORD_SCHEMA),
  label: z.string().min(1, 'expected a non-empty configuration label'),
  verdict: z.enum([OLD_VERDICT, ...RECORD_OUTCOMES]).transform((v) => (v === OLD_VERDICT ? 'unmeasured' : v)),
  detail: maybe,
  mode: text,
  sweep: maybe,
  compared_with: maybe,
  rows: z.array(
    z.looseObject({
      label: text,
      status: z.enum([OLD_VERDICT, ...ROW_STATUSES]).transform((s) => (s === OLD_VERDICT ? 'undecided' : s)),
      unit: text,
      baseline: num,
      candidate: num,
      delta_pct: num,
    }),
  ),
  regressions: z.array(text),
  blind: z.array(text).default([]),
  reasons: z.array(text),
  // Absent in records written before verdicts stated their cost, and in records without a verdict.
  cost: z.looseObject({ engine_starts: z.number(), point_runs: z.number(), gpu_minutes: z.number(), max_gpu_minutes: num, capped: z.boolean() }).optional(),
  env: z
    .looseObject({
      gpu: text,
      gpu_count: z.union([z.number(), z.literal('unknown')]),
      driver: text,
      cuda: text,
      engine: text,
      model: text,
      model_revision: text,
      container_digest: text,
      serve_command: text,
    })
    .nullable(),
  blame: maybe,
  runner: z.looseObject({ name: maybe, os: maybe, arch: maybe, labels: z.array(text).nullable() }),
  job: z.looseObject({ run_url: maybe, job: maybe, run_attempt: maybe }),
  head_sha: maybe,
  at: text,
  harness: z.looseObject({ version: text }),
})

/** Validate a parsed record; anything else (another servegate file, foreign JSON) is a UsageError naming `source`. */
function parseRecord(json: unknown, source: string): VerdictRecord {
  const schema = (json as { schema?: unknown } | null)?.schema
  if (schema !== RECORD_SCHEMA) {
    const what =
      typeof schema === 'string' && schema.startsWith('servegate.')
        ? `a ${schema} file`
        : `not a servegate verdict record (schema ${JSON.stringify(schema ?? null)})`
    throw new UsageError(
      `${source} is ${what}, expected "${RECORD_SCHEMA}"`,
      'The records folder must hold only verdict records: upload the file at the output record-path (<out>.record.json) of each job, nothing else.',
    )
  }
  const r = recordSchema.safeParse(json)
  if (!r.success) throw new UsageError(`${source} is not a valid servegate verdict record:\n${formatIssues(r.error)}`)
  return r.data as unknown as VerdictRecord
}

/** Every `.json` file under `dir`, recursively, in a stable order. */
async function jsonFilesUnder(dir: string): Promise<string[]> {
  const out: string[] = []
  const entries = await readdir(dir, { withFileTypes: true })
  for (const e of entries.sort((a, b) => a.name.localeCompare(b.name))) {
    const path = join(dir, e.name)
    if (e.isDirectory()) out.push(...(await jsonFilesUnder(path)))
    else if (e.isFile() && /\.json$/i.test(e.name)) out.push(path)
  }
  return out
}

/**
 * Read every record under `dir`. A folder that does not exist holds no records (download-artifact
 * found none: every job died before its upload) and says so in `missingDir`; a path that is a file,
 * or any `.json` file that is not a valid record, is a UsageError naming it.
 */
export async function readRecordsUnder(dir: string): Promise<{ records: FoundRecord[]; missingDir: boolean }> {
  let isDir: boolean
  try {
    isDir = (await stat(dir)).isDirectory()
  } catch (err) {
    if ((err as { code?: unknown }).code === 'ENOENT') return { records: [], missingDir: true }
    throw new UsageError(`cannot read the records folder ${dir}: ${describeError(err)}`)
  }
  if (!isDir) throw new UsageError(`${dir} is a file, expected the folder the verdict records were downloaded into`)
  const records: FoundRecord[] = []
  // Paths as `dir` was given (relative stays relative), so messages name the file the user knows.
  for (const path of await jsonFilesUnder(dir)) records.push({ path, record: parseRecord(await readJsonFile(path), path) })
  return { records, missingDir: false }
}
