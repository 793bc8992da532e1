/**
 * A sharded sweep's shards → one ordinary result (`servegate merge`; docs/run.md, "Sharded
 * sweeps"). Pure: the CLI reads the files and adds the fingerprint.
 *
 * Every run is the union of its shards' records, re-summarised as one client (metrics/merge-shards.ts),
 * so its percentiles are a single client's. Its server-side figures come from the scrape taken at
 * the earliest measured start and the one taken at the latest end: the server's counters hold every
 * shard's traffic. Its validity is judged afresh on the union, at the point's whole C, plus what
 * only the shards can say: whether they kept one schedule (shard-alignment.ts) and whether any
 * shard's own client saturated. A run some shard did not finish is left out, so the gate finds the
 * point short rather than measured at part of its load.
 */
import { UsageError } from '../errors.js'
import { mergeShardRaws, type ShardPart } from '../metrics/merge-shards.js'
import { isCompleted } from '../metrics/per-request.js'
import { serverSideFigures } from '../metrics/prometheus.js'
import { summarizeRun } from '../metrics/summarize.js'
import { splitOf } from '../plan/shard.js'
import type { GoodputSlo, GpuSample, PointResult, ResultFile, RunResult, RunShardPart, ShardRunRecords, ValidityCode } from '../types.js'
import { atTargetForResult } from './at-target.js'
import { clientHeadroom } from './headroom.js'
import { judgeAlignment } from './shard-alignment.js'
import { assessValidity } from './validity.js'

/** One shard as `servegate merge` read it: its result, its records, and the file it came from. */
export interface ShardInput {
  file: string
  result: ResultFile
  runs: ShardRunRecords[]
}

/** The merged result (without its fingerprint) and what the merge left out, in words. */
export interface MergeOutcome {
  result: ResultFile
  notes: string[]
}

/** Config keys a shard may record differently from the others: how it tried, not what it measured. */
const PER_SHARD_CONFIG = new Set(['config_file', 'host_retries'])

/**
 * Check the shards belong to one sharded sweep and are all there; merge them. Refusals are
 * UsageErrors naming the file and what differs.
 */
export function mergeShards(inputs: readonly ShardInput[]): MergeOutcome {
  const shards = checkShards(inputs)
  const first = shards[0]!
  const info0 = first.result.shard!
  const count = info0.count
  const cfg = first.result.config
  const ppc = typeof cfg['prompts_per_concurrency'] === 'number' ? cfg['prompts_per_concurrency'] : null
  const goodput = (cfg['goodput'] as GoodputSlo | undefined) ?? null
  const api = (cfg['server'] as { api?: string } | undefined)?.api === 'chat' ? 'chat' : 'completions'
  const calibration = cfg['prompt_calibration'] as 'token_ids' | 'tokenize' | 'none' | undefined
  const notes: string[] = []

  // Every run of every shard, grouped by run (point and repeat).
  const byRun = new Map<string, Array<{ shard: ShardInput; entry: ShardRunRecords }>>()
  for (const s of shards)
    for (const entry of s.runs) {
      const key = runKey(entry)
      const list = byRun.get(key) ?? []
      if (list.some((x) => x.shard.result.shard!.index === s.result.shard!.index))
        throw new UsageError(`${s.file}: its records hold ${label(entry)} twice (a records file from two sweeps?)`)
      list.push({ shard: s, entry })
      byRun.set(key, list)
    }

  const points: PointResult[] = []
  const runsInOrder = [...byRun.values()].sort((a, b) => a[0]!.entry.slot_index - b[0]!.entry.slot_index)
  for (const group of runsInOrder) {
    const e0 = group[0]!.entry
    const split = splitOf(e0.concurrency, count)
    const expected = split.flatMap((share, index) => (share > 0 ? [index] : []))
    const have = new Set(group.map((g) => g.entry.shard.index))
    const missing = expected.filter((i) => !have.has(i))
    if (missing.length > 0) {
      notes.push(`${label(e0)}: left out, shard${missing.length === 1 ? '' : 's'} ${missing.join(', ')} did not finish it`)
      continue
    }
    const run = mergeRun(
      group.sort((a, b) => a.entry.shard.index - b.entry.shard.index),
      { ppc, goodput, api, calibration },
    )
    let point = points.find((p) => p.input_len === e0.input_len && p.output_len === e0.output_len && p.concurrency === e0.concurrency)
    if (point === undefined) {
      point = { input_len: e0.input_len, output_len: e0.output_len, concurrency: e0.concurrency, runs: [] }
      points.push(point)
    }
    point.runs.push(run)
    point.runs.sort((a, b) => a.repeat - b.repeat)
  }

  const hosts = loadHosts(shards)
  const result: ResultFile = {
    schema: first.result.schema,
    harness: first.result.harness,
    env: {
      ...first.result.env,
      load_hosts: hosts,
      started_at: shards.map((s) => s.result.env.started_at).sort()[0]!,
      finished_at: shards
        .map((s) => s.result.env.finished_at)
        .sort()
        .at(-1)!,
    },
    config: cfg,
    target: first.result.target,
    points,
    at_target: atTargetForResult(points, first.result.target),
    client_headroom: clientHeadroom(points, undefined, hosts.length),
    shards: {
      count,
      start_at: info0.start_at,
      slot_s: info0.slot_s,
      shards: shards.map((s) => ({
        index: s.result.shard!.index,
        host: s.result.shard!.host,
        boot_id: s.result.shard!.boot_id,
        clock: s.result.shard!.clock,
        file: s.file,
      })),
    },
  }
  const cut = shards.find((s) => s.result.interrupted !== undefined)
  if (cut !== undefined) {
    const i = cut.result.interrupted!
    const finished = points.reduce((n, p) => n + p.runs.length, 0)
    result.interrupted = {
      ...i,
      reason: `shard ${cut.result.shard!.index}: ${i.reason}`,
      finished_runs: finished,
      planned_runs: Math.max(i.planned_runs, finished),
    }
    notes.push(`shard ${cut.result.shard!.index} (${cut.file}) was stopped early (${i.reason}): the merged result is marked interrupted`)
  }
  return { result, notes }
}

function runKey(e: ShardRunRecords): string {
  return `${e.input_len}x${e.output_len}@c${e.concurrency}#r${e.repeat}`
}

function label(e: ShardRunRecords): string {
  return `${e.input_len} in / ${e.output_len} out, C=${e.concurrency}, repeat ${e.repeat}`
}

/** The shards in index order, after checking they are one sweep's, every one of them present. */
function checkShards(inputs: readonly ShardInput[]): ShardInput[] {
  if (inputs.length === 0) throw new UsageError('servegate merge: expected the result files of a sharded sweep, one per shard')
  for (const s of inputs)
    if (s.result.shard === undefined)
      throw new UsageError(`${s.file}: not a shard's result (no shard field): merge takes the results of servegate run --shard I/N`)
  const sorted = [...inputs].sort((a, b) => a.result.shard!.index - b.result.shard!.index)
  const first = sorted[0]!
  const a = first.result.shard!
  const seen = new Map<number, string>()
  for (const s of sorted) {
    const b = s.result.shard!
    const differs = (what: string, x: unknown, y: unknown): UsageError =>
      new UsageError(`${s.file}: ${what} ${JSON.stringify(y)}, but ${first.file} has ${JSON.stringify(x)}: the shards are not of one sharded sweep`)
    if (b.count !== a.count) throw differs('shard count', a.count, b.count)
    if (b.start_at !== a.start_at) throw differs('--start-at', a.start_at, b.start_at)
    if (b.slot_s !== a.slot_s) throw differs('--slot', a.slot_s, b.slot_s)
    const other = seen.get(b.index)
    if (other !== undefined) throw new UsageError(`${s.file}: shard ${b.index} of ${b.count} again (also ${other}): give each shard once`)
    seen.set(b.index, s.file)
    const key = firstDifference(first.result.config, s.result.config)
    if (key !== null)
      throw new UsageError(
        `${s.file}: config.${key} differs from ${first.file}'s: the shards are not of one sweep (every shard runs the same config, seed included)`,
      )
  }
  const missing = Array.from({ length: a.count }, (_, i) => i).filter((i) => !seen.has(i))
  if (missing.length > 0)
    throw new UsageError(
      `servegate merge: shard${missing.length === 1 ? '' : 's'} ${missing.join(', ')} of ${a.count} missing: a merged point must carry every shard's share of its load`,
      'Give every shard result of the sweep (each with its .records.jsonl.gz beside it).',
    )
  return sorted
}

/** The first config key (dotted) whose value differs, leaving out PER_SHARD_CONFIG; null when none does. */
function firstDifference(a: Record<string, unknown>, b: Record<string, unknown>): string | null {
  const keys = [...new Set([...Object.keys(a), ...Object.keys(b)])].filter((k) => !PER_SHARD_CONFIG.has(k)).sort()
  for (const k of keys) if (JSON.stringify(a[k]) !== JSON.stringify(b[k])) return k
  return null
}

/** Every load host once, with the shards it ran (env.host of each shard's result). */
function loadHosts(shards: readonly ShardInput[]): NonNullable<ResultFile['env']['load_hosts']> {
  const hosts: NonNullable<ResultFile['env']['load_hosts']> = []
  for (const s of shards) {
    const h = s.result.env.host
    const known = hosts.find((x) => x.hostname === h.hostname && x.platform === h.platform)
    if (known) known.shards.push(s.result.shard!.index)
    else hosts.push({ hostname: h.hostname, platform: h.platform, cpus: h.cpus, shards: [s.result.shard!.index] })
  }
  return hosts
}

interface RunContext {
  ppc: number | null
  goodput: GoodputSlo | null
  api: 'chat' | 'completions'
  calibration: 'token_ids' | 'tokenize' | 'none' | undefined
}

/** One run of every shard that had a share of it → the run one client would have measured, judged afresh. */
function mergeRun(group: ReadonlyArray<{ shard: ShardInput; entry: ShardRunRecords }>, ctx: RunContext): RunResult {
  const parts: ShardPart[] = group.map((g) => ({ entry: g.entry, offsetMs: g.shard.result.shard!.clock.offset_ms ?? 0 }))
  const merged = mergeShardRaws(parts)
  const e0 = group[0]!.entry
  const numPrompts = ctx.ppc !== null ? ctx.ppc * e0.concurrency : merged.raw.records.length
  const run = summarizeRun(merged.raw, { repeat: e0.repeat, seed: e0.point_seed, numPrompts, goodput: ctx.goodput })

  // Each shard scraped when its own warmup was done, then waited for the shared measure instant; it
  // scraped again after its last request. The last shard to finish its warmup scraped after every
  // warmup and before any measured request (where the shards kept the schedule), and the last to
  // end scraped after every measured request: those two span exactly the measured window.
  // Where a shard was still warming up after another began measuring, no scrape spans the window
  // alone: the run has no server-side figures (its alignment fails on it), never a count the
  // harness cut short and the server would be blamed for.
  const t = new Map(merged.times.map((x) => [x.index, x]))
  const warmDone = (g: { shard: ShardInput; entry: ShardRunRecords }): number => g.entry.warmup_done_unix_ms + (g.shard.result.shard!.clock.offset_ms ?? 0)
  const lastWarm = [...group].sort((a, b) => warmDone(b) - warmDone(a))[0]!
  const byEnd = [...group].sort((a, b) => t.get(b.entry.shard.index)!.endMs - t.get(a.entry.shard.index)!.endMs)
  const spans = warmDone(lastWarm) - merged.epochMs <= Math.min(...merged.times.map((x) => x.measureMs))
  const before = lastWarm.entry.metrics_before
  const after = byEnd[0]!.entry.metrics_after
  run.server_side = spans && before !== null && after !== null ? serverSideFigures(before, after) : null
  run.gpu = group.map((g) => g.entry.gpu).find((g): g is GpuSample[] => g !== null && g.length > 0) ?? null
  const counted = group.map((g) => g.entry.retokenized)
  run.tokens.retokenized = counted.every((n) => n !== null) ? (counted as number[]).reduce((a, b) => a + b, 0) : null

  const validity = assessValidity(run, {
    concurrency: e0.concurrency,
    ignoreEos: true,
    expectPrefixCacheMisses: true,
    api: ctx.api,
    ...(ctx.calibration ? { promptCalibration: ctx.calibration } : {}),
  })
  const { alignment, issue } = judgeAlignment(
    group.map((g) => {
      const x = t.get(g.entry.shard.index)!
      const info = g.shard.result.shard!
      return { index: info.index, hostKey: info.boot_id ?? info.host, clock: info.clock, startMs: x.startMs, measureMs: x.measureMs, endMs: x.endMs }
    }),
    run.e2el_ms.p99,
    group[0]!.shard.result.shard!.slot_s,
  )
  if (issue !== null) validity.issues.push(issue)
  // A shard whose own client saturated spoiled its share of the load, even where the union's figures hide it.
  if (!validity.issues.some((i) => i.code === 'client_saturated')) {
    const saturated = group.find((g) => g.entry.issues.some((i) => i.code === 'client_saturated'))
    if (saturated !== undefined) {
      const detail = saturated.entry.issues.find((i) => i.code === 'client_saturated')!.detail
      validity.issues.push({ code: 'client_saturated', detail: `Shard ${saturated.entry.shard.index} (${saturated.shard.result.shard!.host}): ${detail}` })
    }
  }
  validity.valid = validity.issues.length === 0
  run.validity = validity
  run.shards = {
    count: group[0]!.shard.result.shard!.count,
    parts: group.map((g): RunShardPart => ({
      index: g.entry.shard.index,
      concurrency: g.entry.shard.concurrency,
      seed: g.entry.shard.seed,
      host: g.shard.result.shard!.host,
      completed: g.entry.raw.records.filter(isCompleted).length,
      failed: g.entry.raw.records.filter((r) => !isCompleted(r)).length,
      issues: [...new Set(g.entry.issues.map((i) => i.code as ValidityCode))],
      late_ms: g.entry.late_ms,
    })),
    alignment,
  }
  return run
}
