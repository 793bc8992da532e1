/**
 * `servegate merge` on a real two-shard sweep (test/fixtures/shards, its README says how it was
 * made): every run's percentiles equal those of the union of the shards' records, computed here
 * without the pipeline (numpy's linear rule over the sorted values), and the shards' checks refuse
 * files that are not one sweep's, whole.
 */
import { readFileSync } from 'node:fs'
import { gunzipSync } from 'node:zlib'
import { describe, expect, it } from 'vitest'
import { mergeShards, type ShardInput } from '../../src/analysis/shard-merge.js'
import { mergeShardRaws } from '../../src/metrics/merge-shards.js'
import { summarizeRun } from '../../src/metrics/summarize.js'
import type { ResultFile, ShardRunRecords } from '../../src/types.js'

const dir = new URL('../fixtures/shards/', import.meta.url)
function shard(i: number): ShardInput {
  const result = JSON.parse(readFileSync(new URL(`shard-${i}.json`, dir), 'utf8')) as ResultFile
  const runs = gunzipSync(readFileSync(new URL(result.shard!.records, dir)))
    .toString('utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as ShardRunRecords)
  return { file: `shard-${i}.json`, result, runs }
}
const clone = <T>(x: T): T => structuredClone(x)

/** numpy's default (linear) percentile of the values. */
function percentile(values: number[], p: number): number {
  const x = [...values].sort((a, b) => a - b)
  const h = ((x.length - 1) * p) / 100
  const lo = Math.floor(h)
  return x[lo]! + (h - lo) * (x[Math.ceil(h)]! - x[lo]!)
}

describe('servegate merge of a real two-shard sweep', () => {
  const { result, notes } = mergeShards([shard(1), shard(0)])

  it('is an ordinary result at the whole concurrency, with every shard’s requests and its split', () => {
    expect(notes).toEqual([])
    expect(result.shard).toBeUndefined()
    expect(result.points.map((p) => [p.concurrency, p.runs.map((r) => r.repeat)])).toEqual([
      [1, [1, 2]],
      [4, [1, 2]],
    ])
    for (const p of result.points)
      for (const r of p.runs) {
        expect(r.completed).toBe(p.concurrency * 10)
        expect(r.num_prompts).toBe(p.concurrency * 10)
        expect(r.validity).toEqual({ valid: true, issues: [] })
        expect(r.shards!.parts.map((x) => x.concurrency)).toEqual(p.concurrency === 1 ? [1] : [2, 2])
        expect(r.shards!.parts.reduce((n, x) => n + x.completed, 0)).toBe(r.completed)
        const a = r.shards!.alignment
        expect(a.measure_spread_ms).toBeLessThanOrEqual(a.bound_ms)
        expect(a.end_spread_ms).toBeLessThanOrEqual(a.end_bound_ms)
        // The server-side counters span the measured window: exactly the tokens the client counted.
        expect(r.server_side!.generation_tokens).toBe(r.tokens.server_usage)
      }
    expect(result.shards!.shards.map((s) => s.index)).toEqual([0, 1])
    expect(result.env.load_hosts).toEqual([
      { hostname: result.env.host.hostname, platform: result.env.host.platform, cpus: result.env.host.cpus, shards: [0, 1] },
    ])
    expect(result.at_target.length).toBe(1)
    expect(result.client_headroom?.concurrency).toBe(4)
  })

  it("gives every run the percentiles of the union of the shards' records", () => {
    const shards = [shard(0), shard(1)]
    for (const p of result.points)
      for (const run of p.runs) {
        const parts = shards.flatMap((s) => s.runs.filter((e) => e.concurrency === p.concurrency && e.repeat === run.repeat))
        const done = parts.flatMap((e) => e.raw.records).filter((r) => r.error === null && r.ttftMs !== null)
        const gaps = done.flatMap((r) => r.chunkArrivalsMs.slice(1).map((t, k) => t - r.chunkArrivalsMs[k]!))
        const ttft = done.map((r) => r.ttftMs!)
        // The histogram keeps a value to ±0.0005 ms (docs/accuracy.md): that is all that may differ.
        for (const q of [50, 95, 99] as const) {
          expect(Math.abs(run.itl_ms[`p${q}`]! - percentile(gaps, q))).toBeLessThanOrEqual(0.0006)
          expect(Math.abs(run.ttft_ms[`p${q}`]! - percentile(ttft, q))).toBeLessThanOrEqual(0.0006)
        }
        expect(run.completed).toBe(done.length)
      }
  })

  it('gives the same run whatever order the shards come in', () => {
    const parts = [shard(0), shard(1)].map((s) => ({ entry: s.runs.find((e) => e.concurrency === 4 && e.repeat === 2)!, offsetMs: 0 }))
    const a = summarizeRun(mergeShardRaws(parts).raw, { repeat: 2, seed: 1, numPrompts: 40 })
    const b = summarizeRun(mergeShardRaws([...parts].reverse()).raw, { repeat: 2, seed: 1, numPrompts: 40 })
    expect(b).toEqual(a)
  })

  it('leaves out a run one shard did not finish, saying so, and marks the merge interrupted when a shard was', () => {
    const cut = shard(1)
    cut.runs = cut.runs.filter((e) => !(e.concurrency === 4 && e.repeat === 2))
    cut.result.interrupted = {
      at: cut.result.env.finished_at,
      reason: 'SIGTERM',
      cut_run: { input_len: 16, output_len: 16, concurrency: 4, repeat: 2 },
      finished_runs: 1,
      planned_runs: 2,
    }
    const m = mergeShards([shard(0), cut])
    expect(m.notes).toEqual([
      '16 in / 16 out, C=4, repeat 2: left out, shard 1 did not finish it',
      'shard 1 (shard-1.json) was stopped early (SIGTERM): the merged result is marked interrupted',
    ])
    expect(m.result.points[1]!.runs.map((r) => r.repeat)).toEqual([1])
    expect(m.result.interrupted?.reason).toBe('shard 1: SIGTERM')
    expect(m.result.interrupted?.finished_runs).toBe(3)
  })

  it('refuses shards that are not one sweep’s, or not all of it', () => {
    expect(() => mergeShards([shard(0)])).toThrow("servegate merge: shard 1 of 2 missing: a merged point must carry every shard's share of its load")
    expect(() => mergeShards([shard(0), shard(0)])).toThrow('shard-0.json: shard 0 of 2 again (also shard-0.json): give each shard once')
    const later = shard(1)
    later.result.shard!.start_at = '2026-12-07T09:00:00Z'
    expect(() => mergeShards([shard(0), later])).toThrow(/^shard-1\.json: --start-at "2026-12-07T09:00:00Z", but shard-0\.json has "20/)
    const other = shard(1)
    other.result.config = { ...clone(other.result.config), prompts_per_concurrency: 12 }
    expect(() => mergeShards([shard(0), other])).toThrow("shard-1.json: config.prompts_per_concurrency differs from shard-0.json's")
    const whole = shard(1)
    delete whole.result.shard
    expect(() => mergeShards([shard(0), whole])).toThrow("shard-1.json: not a shard's result (no shard field)")
  })

  it('calls the runs of shards on two hosts whose clocks were never compared unaligned', () => {
    const far = shard(1)
    far.result.shard!.boot_id = 'another-host'
    const m = mergeShards([shard(0), far])
    const c4 = m.result.points[1]!.runs[0]!
    expect(c4.validity.valid).toBe(false)
    expect(c4.validity.issues.map((i) => i.code)).toEqual(['shards_unaligned'])
    expect(c4.shards!.alignment.clock_uncertainty_ms).toBeNull()
    // C = 1 ran on shard 0 alone: one clock, nothing to align.
    expect(m.result.points[0]!.runs[0]!.validity.valid).toBe(true)
  })
})
