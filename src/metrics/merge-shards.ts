/**
 * The union of one run's shards as one client's run (`servegate merge`). Pure.
 *
 * Each shard kept its run's records with times relative to its own epoch, and that epoch on its
 * host's wall clock; corrected by the host's measured offset (0 when unmeasured), the epochs lie on
 * one common clock. Shifting every record by its shard's epoch against the earliest gives the
 * records one client would have kept had it sent every request: summarizeRun over them yields the
 * percentiles of that client, exactly (the histograms and the median see the same values). The
 * client's figures combine as the validity rule reads them: the busiest thread and the latest timer
 * of any shard (so one saturated shard shows), and the sums of what the shards carried together.
 */
import type { ClientStats, RawRun, RequestRecord, ShardRunRecords } from '../types.js'

/** One shard's part of a run, with its host clock's offset to the common clock (ms; 0 when unmeasured). */
export interface ShardPart {
  entry: ShardRunRecords
  offsetMs: number
}

/** The merged run and each part's times on the common clock, ms from the merged epoch. */
export interface MergedRaw {
  raw: RawRun
  /** The merged epoch on the common clock, ms since 1970. */
  epochMs: number
  times: Array<{ index: number; startMs: number; measureMs: number; endMs: number }>
}

/** One run of every shard → the run one client seeing every request would have recorded. */
export function mergeShardRaws(parts: readonly ShardPart[]): MergedRaw {
  if (parts.length === 0) throw new Error('mergeShardRaws: no part to merge')
  const epochs = parts.map((p) => p.entry.epoch_unix_ms + p.offsetMs)
  const epochMs = Math.min(...epochs)
  const records: RequestRecord[] = []
  const times: MergedRaw['times'] = []
  parts.forEach((p, i) => {
    const shift = epochs[i]! - epochMs
    const raw = p.entry.raw
    for (const r of raw.records) {
      records.push({
        ...r,
        // Ids repeat across shards' logs only by their shard prefix; the text was checked in the shard.
        id: `s${p.entry.shard.index}-${r.id}`,
        text: '',
        startMs: r.startMs + shift,
        ...(r.scheduledMs !== undefined ? { scheduledMs: r.scheduledMs + shift } : {}),
      })
    }
    times.push({ index: p.entry.shard.index, startMs: shift, measureMs: raw.startMs + shift, endMs: raw.endMs + shift })
  })
  records.sort((a, b) => a.startMs - b.startMs || (a.id < b.id ? -1 : 1))
  const raws = parts.map((p) => p.entry.raw)
  const startMs = Math.min(...times.map((t) => t.measureMs))
  const endMs = Math.max(...times.map((t) => t.endMs))
  return {
    epochMs,
    times,
    raw: {
      concurrency: parts.reduce((n, p) => n + p.entry.shard.concurrency, 0),
      records,
      warmupRequests: raws.reduce((n, r) => n + r.warmupRequests, 0),
      startMs,
      endMs,
      client: mergeClients(raws.map((r) => r.client)),
      startedAt: raws.map((r) => r.startedAt).sort()[0]!,
      finishedAt: raws
        .map((r) => r.finishedAt)
        .sort()
        .at(-1)!,
    },
  }
}

/** The shards' client figures as one: the worst thread and timer of any shard, the sums of what they carried. */
export function mergeClients(clients: readonly ClientStats[]): ClientStats {
  const max = (f: (c: ClientStats) => number): number => Math.max(...clients.map(f))
  const sum = (f: (c: ClientStats) => number): number => clients.reduce((n, c) => n + f(c), 0)
  return {
    workers: sum((c) => c.workers),
    eventLoopUtilization: max((c) => c.eventLoopUtilization),
    eventLoopDelayP99Ms: max((c) => c.eventLoopDelayP99Ms),
    sendLagP50Ms: max((c) => c.sendLagP50Ms),
    sendLagP99Ms: max((c) => c.sendLagP99Ms),
    meanInFlight: sum((c) => c.meanInFlight),
    eventsPerSecond: sum((c) => c.eventsPerSecond),
  }
}
