/**
 * One shard of a sharded sweep at run time (docs/run.md, "Sharded sweeps"): its clock against
 * the time server, the schedule it keeps (plan/shard.ts: run k's warmup at start_at + k × slot,
 * its measured requests a quarter of the slot later, on the common clock), and its records file,
 * which `servegate merge` reads.
 *
 * The common clock is the time server's where `--time-server` is given: each shard measures its
 * offset (client/sntp.ts) before the schedule begins and waits on local time minus that offset.
 * Without one, each host's own clock is the schedule's, which is exact for shards on one host
 * (one boot id, one clock) and unproven across hosts: the merge then calls their runs unaligned.
 */
import { readFileSync } from 'node:fs'
import { hostname } from 'node:os'
import { basename } from 'node:path'
import { UsageError } from '../errors.js'
import { measureAtMs, slotStartMs } from '../plan/shard.js'
import type { PlanPoint } from '../plan/plan.js'
import type { ShardSettings } from '../config/shard.js'
import { appendShardRun, recordsPathFor, startShardRecords } from '../store/shard-records.js'
import { measureClockOffset } from '../client/sntp.js'
import { acquireLoadWorker, releaseLoadWorker } from '../load/worker-pool.js'
import { SHARD_RECORDS_SCHEMA, type HostClock, type RawRun, type RunResult, type ShardInfo } from '../types.js'
import type { ShardHooks } from './measure-point.js'

/** A shard's schedule and records file, ready before its first run. */
export interface ShardSession {
  info: ShardInfo
  recordsPath: string
  /** Common clock − local clock, ms (0 when not measured: the host's own clock is the schedule's). */
  offsetMs: number
  settings: ShardSettings
}

/** Now on the common clock, ms since 1970, sub-millisecond. */
function commonNow(offsetMs: number): number {
  return performance.timeOrigin + performance.now() + offsetMs
}

/** This host's kernel boot id: shards that share it share one clock. Null where it cannot be read. */
function bootId(): string | null {
  try {
    return readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim() || null
  } catch {
    return null
  }
}

/**
 * Measure the clock, check the schedule has not begun, and start the records file. A start time
 * already past is refused: this shard would begin late against shards that began on time.
 */
export async function prepareShard(
  settings: ShardSettings,
  resultPath: string,
  runs: number,
  loadThreads: number,
  log: (line: string) => void,
): Promise<ShardSession> {
  // The load threads start now, not inside the first slot's warmup window: starting one and loading
  // its code took a shard's first warmup past the window (measured starts 425 ms apart in a trial).
  const threads = Array.from({ length: loadThreads }, () => acquireLoadWorker())
  for (const w of threads) releaseLoadWorker(w)
  let clock: HostClock = { server: null, offset_ms: null, uncertainty_ms: null }
  if (settings.timeServer !== null) {
    // Four queries: a public NTP server may rate-limit a burst (the lowest-delay reply is kept).
    const c = await measureClockOffset(settings.timeServer, { samples: 4 }).catch((err: unknown) => {
      throw new UsageError(
        `--time-server: ${(err as Error).message}`,
        'Every shard needs the time server to align with the others; check the host reaches it (UDP 123), or run the shards on one host without --time-server.',
      )
    })
    clock = { server: c.server, offset_ms: c.offset_ms, uncertainty_ms: c.uncertainty_ms }
    log(
      `Shard ${settings.index} of ${settings.count}: this host's clock is ${Math.abs(c.offset_ms).toFixed(1)} ms ${c.offset_ms >= 0 ? 'behind' : 'ahead of'} ${c.server} (± ${c.uncertainty_ms.toFixed(1)} ms).`,
    )
  }
  const offsetMs = clock.offset_ms ?? 0
  const late = commonNow(offsetMs) - settings.startAtMs
  if (late > 0)
    throw new UsageError(
      `--start-at ${settings.startAt} passed ${(late / 1000).toFixed(1)} s ago: this shard would start late against the others`,
      'Give every shard the same --start-at a little in the future (far enough for the last shard to start and probe the server).',
    )
  const recordsPath = recordsPathFor(resultPath)
  await startShardRecords(recordsPath)
  const end = new Date(slotStartMs(settings.startAtMs, settings.slotS, runs)).toISOString()
  log(`Shard ${settings.index} of ${settings.count}: ${runs} slots of ${settings.slotS} s from ${settings.startAt} to ${end}; records go to ${recordsPath}.`)
  return {
    settings,
    recordsPath,
    offsetMs,
    info: {
      index: settings.index,
      count: settings.count,
      index_from: settings.indexFrom,
      start_at: settings.startAt,
      slot_s: settings.slotS,
      host: hostname(),
      boot_id: bootId(),
      clock,
      records: basename(recordsPath),
    },
  }
}

/** Resolve when the common clock reaches `atMs` (at once when it has); a fired signal resolves it early. */
async function until(session: ShardSession, atMs: number, signal: AbortSignal | undefined): Promise<void> {
  for (;;) {
    const left = atMs - commonNow(session.offsetMs)
    if (left <= 0 || signal?.aborted === true) return
    await new Promise<void>((resolve) => {
      const t = setTimeout(done, Math.min(left, 60_000))
      function done(): void {
        clearTimeout(t)
        signal?.removeEventListener('abort', done)
        resolve()
      }
      signal?.addEventListener('abort', done, { once: true })
    })
  }
}

/** One run of the shard in its slot: wait for the slot, then hooks for measurePoint, then its line in the records file. */
export interface ShardSlot {
  /** How late the run began against its slot, ms (0: on time). */
  lateMs: number
  hooks: ShardHooks
  /** Append the run's line to the records file (after measurePoint returned). */
  record(run: RunResult): Promise<void>
}

/**
 * Wait for the slot of `point` and say so when it began late (the run before it overran: the
 * merge will find this shard's run unaligned). Its measured requests then wait for the slot's
 * measure instant.
 */
export async function enterSlot(session: ShardSession, point: PlanPoint, log: (line: string) => void, signal?: AbortSignal): Promise<ShardSlot> {
  const s = point.shard
  if (s === undefined) throw new Error(`${point.key}: not a shard's run`)
  const { startAtMs, slotS } = session.settings
  const start = slotStartMs(startAtMs, slotS, s.slotIndex)
  await until(session, start, signal)
  const lateMs = Math.max(0, commonNow(session.offsetMs) - start)
  if (lateMs > 1000)
    log(
      `Shard ${s.index}: run ${s.slotIndex + 1} began ${(lateMs / 1000).toFixed(1)} s after its slot (the run before it overran ${slotS} s): lengthen --slot; the merge will find this run unaligned.`,
    )
  let kept: { raw: RawRun; epochUnixMs: number; warmupDoneUnixMs: number; metricsBefore: string | null; metricsAfter: string | null } | null = null
  return {
    lateMs,
    hooks: {
      untilMeasure: () => until(session, measureAtMs(startAtMs, slotS, s.slotIndex), signal),
      keep: (raw, extra) => void (kept = { raw, ...extra }),
    },
    record: async (run) => {
      if (kept === null) throw new Error(`${point.key}: measured without its records`)
      const { raw, epochUnixMs, warmupDoneUnixMs, metricsBefore, metricsAfter } = kept
      await appendShardRun(session.recordsPath, {
        schema: SHARD_RECORDS_SCHEMA,
        input_len: point.shape.inputLen,
        output_len: point.shape.outputLen,
        concurrency: s.totalConcurrency,
        repeat: point.repeat,
        slot_index: s.slotIndex,
        point_seed: s.pointSeed,
        shard: { index: s.index, concurrency: point.concurrency, seed: point.seed },
        epoch_unix_ms: epochUnixMs,
        late_ms: lateMs,
        warmup_done_unix_ms: warmupDoneUnixMs,
        // The text was re-counted here; the merge needs the timings and counts.
        raw: { ...raw, records: raw.records.map(({ text: _text, ...rest }) => rest) },
        metrics_before: metricsBefore,
        metrics_after: metricsAfter,
        retokenized: run.tokens.retokenized,
        gpu: run.gpu,
        issues: run.validity.issues,
      })
    },
  }
}
