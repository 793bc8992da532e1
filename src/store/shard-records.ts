/**
 * A shard's records file (`<result>.records.jsonl.gz` beside `<result>.json`): one JSON line per
 * measured run of the shard (types.ts ShardRunRecords), each line its own gzip member appended as
 * the run finishes, so a shard killed mid-sweep keeps every run it finished and the file stays
 * readable (a gzip stream of several members is one stream to every reader). `servegate merge`
 * reads these files: the records, not the summaries, so the merged percentiles are exact.
 */
import { appendFile, readFile } from 'node:fs/promises'
import { basename, dirname, join } from 'node:path'
import { gunzipSync, gzipSync } from 'node:zlib'
import { z } from 'zod'
import { UsageError } from '../errors.js'
import { SHARD_RECORDS_SCHEMA, type ShardRunRecords } from '../types.js'
import { redactStrings } from '../util/redact.js'
import { writeFileAtomic } from './atomic-write.js'

/** The records file of a shard's result: `shard-0.json` → `shard-0.records.jsonl.gz`. */
export function recordsPathFor(resultPath: string): string {
  const name = basename(resultPath).replace(/\.json$/i, '')
  return join(dirname(resultPath), `${name}.records.jsonl.gz`)
}

/** Start an empty records file (a new shard sweep replaces an earlier one's). */
export async function startShardRecords(path: string): Promise<void> {
  await writeFileAtomic(path, '')
}

/** Append one finished run (its strings redacted, as every file servegate writes). */
export async function appendShardRun(path: string, run: ShardRunRecords): Promise<void> {
  await appendFile(path, gzipSync(`${JSON.stringify(redactStrings(run))}\n`))
}

const num = z.number()
const record = z.object({
  id: z.string(),
  startMs: num,
  ttftMs: num.nullable(),
  chunkArrivalsMs: z.array(num),
  e2elMs: num.nullable(),
  streamEndMs: num,
  contentChunks: num,
  usageCompletionTokens: num.nullable(),
  usagePromptTokens: num.nullable(),
  usageCachedTokens: num.optional(),
  promptTokens: num,
  maxTokens: num,
  sawDone: z.boolean(),
  finishReason: z.string().nullable(),
  error: z.object({ kind: z.string(), detail: z.string() }).nullable(),
  scheduledMs: num.optional(),
  queueMs: num.optional(),
})
const line = z.object({
  schema: z.literal(SHARD_RECORDS_SCHEMA),
  input_len: num.int().positive(),
  output_len: num.int().positive(),
  concurrency: num.int().positive(),
  repeat: num.int().positive(),
  slot_index: num.int().nonnegative(),
  point_seed: num,
  shard: z.object({ index: num.int().nonnegative(), concurrency: num.int().positive(), seed: num }),
  epoch_unix_ms: num,
  late_ms: num.nonnegative(),
  warmup_done_unix_ms: num,
  raw: z.object({
    concurrency: num,
    records: z.array(record),
    warmupRequests: num,
    startMs: num,
    endMs: num,
    client: z.object({
      workers: num,
      eventLoopUtilization: num,
      eventLoopDelayP99Ms: num,
      sendLagP50Ms: num,
      sendLagP99Ms: num,
      meanInFlight: num,
      eventsPerSecond: num,
    }),
    startedAt: z.string(),
    finishedAt: z.string(),
  }),
  metrics_before: z.string().nullable(),
  metrics_after: z.string().nullable(),
  retokenized: num.nullable(),
  gpu: z.array(z.record(z.string(), z.unknown())).nullable(),
  issues: z.array(z.object({ code: z.string(), detail: z.string() })),
})

/** Every run of a shard's records file; a file that is missing, cut or not a records file is a UsageError naming it and the line. */
export async function readShardRecords(path: string): Promise<ShardRunRecords[]> {
  let bytes: Buffer
  try {
    bytes = await readFile(path)
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code
    throw new UsageError(
      `${path}: ${code === 'ENOENT' ? 'not found' : `cannot be read (${code ?? String(err)})`}: a shard's records file lies beside its result`,
      'Copy every shard result together with its .records.jsonl.gz file.',
    )
  }
  let text: string
  try {
    text = bytes.length === 0 ? '' : gunzipSync(bytes).toString('utf8')
  } catch (err) {
    throw new UsageError(`${path}: not a complete gzip file (${(err as Error).message}): the shard was cut while writing it, or the copy is partial`)
  }
  const runs: ShardRunRecords[] = []
  text.split('\n').forEach((l, i) => {
    if (l.trim() === '') return
    let json: unknown
    try {
      json = JSON.parse(l)
    } catch {
      throw new UsageError(`${path}: line ${i + 1}: not JSON`)
    }
    const parsed = line.safeParse(json)
    if (!parsed.success) {
      const issue = parsed.error.issues[0]!
      throw new UsageError(`${path}: line ${i + 1}: ${issue.path.join('.') || '(the line)'}: ${issue.message} (expected a ${SHARD_RECORDS_SCHEMA} line)`)
    }
    runs.push(json as ShardRunRecords)
  })
  return runs
}
