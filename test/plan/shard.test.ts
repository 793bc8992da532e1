import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { buildPlan } from '../../src/plan/plan.js'
import { MAX_SHARDS, parseShardSpec, parseStartAt } from '../../src/config/shard.js'
import { measureAtMs, shardPlan, shardSeed, shareOf, slotStartMs, splitOf } from '../../src/plan/shard.js'

describe('splitting a point over shards', () => {
  it('gives every shard ⌊C/N⌋ and the first C mod N one more, summing to C', () => {
    expect(splitOf(8, 3)).toEqual([3, 3, 2])
    expect(splitOf(4, 2)).toEqual([2, 2])
    expect(splitOf(1, 2)).toEqual([1, 0])
    expect(splitOf(5, 1)).toEqual([5])
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 5000 }), fc.integer({ min: 1, max: 64 }), (total, count) => {
        const parts = splitOf(total, count)
        expect(parts.reduce((a, b) => a + b, 0)).toBe(total)
        expect(Math.max(...parts) - Math.min(...parts)).toBeLessThanOrEqual(1)
        expect(parts).toEqual([...parts].sort((a, b) => b - a))
        parts.forEach((p, index) => expect(shareOf(total, { index, count })).toBe(p))
      }),
    )
  })

  const cfg = {
    shapes: [{ inputLen: 16, outputLen: 16 }],
    concurrency: [1, 4, 9],
    repeats: 2,
    seed: 7,
    promptsPerConcurrency: 10,
    warmup: 'auto' as const,
    openLoop: null,
    bracket: null,
  }

  it("keeps every run's slot, and sends each shard's share of C, prompts and warmup from a seed of its own", () => {
    const plan = buildPlan(cfg)
    const shards = [0, 1, 2].map((index) => shardPlan(plan, { index, count: 3 }, 'auto'))
    for (const runs of shards) expect(runs.map((r) => r.slotIndex)).toEqual(plan.map((_, k) => k))
    plan.forEach((p, k) => {
      const parts = shards.map((runs) => runs[k]!.point)
      // C = 1 over 3 shards: only shard 0 sends anything.
      expect(parts.map((x) => x?.concurrency ?? 0)).toEqual(splitOf(p.concurrency, 3))
      const sent = parts.filter((x) => x !== null)
      expect(sent.reduce((n, x) => n + x.numPrompts, 0)).toBe(p.numPrompts)
      // The whole point's auto warmup (one a slot, at least 4) split in proportion, rounded up.
      for (const x of sent) expect(x.warmupRequests).toBe(Math.ceil((Math.max(4, p.concurrency) * x.concurrency) / p.concurrency))
      expect(new Set(sent.map((x) => x.seed)).size).toBe(sent.length)
      expect(sent.every((x) => x.seed !== p.seed)).toBe(true)
      expect(new Set(sent.map((x) => x.key)).size).toBe(sent.length)
      for (const x of sent) expect(x.shard).toEqual({ index: x.shard.index, count: 3, totalConcurrency: p.concurrency, pointSeed: p.seed, slotIndex: k })
    })
    expect(shardSeed(plan[2]!.seed, { index: 1, count: 3 })).toBe(shards[1]![2]!.point!.seed)
  })

  it('splits a warmup given as a count in proportion, rounded up', () => {
    const plan = buildPlan({ ...cfg, warmup: 5, concurrency: [4] })
    const parts = [0, 1].map((index) => shardPlan(plan, { index, count: 2 }, 5)[0]!.point!)
    expect(parts.map((p) => p.warmupRequests)).toEqual([3, 3])
  })

  it('places run k at start + k × slot and its measured requests a quarter into the slot', () => {
    const t0 = Date.parse('2026-12-07T10:00:00Z')
    expect(slotStartMs(t0, 90, 0)).toBe(t0)
    expect(slotStartMs(t0, 90, 3)).toBe(t0 + 270_000)
    expect(measureAtMs(t0, 90, 3)).toBe(t0 + 270_000 + 22_500)
  })
})

describe('--shard I/N and --start-at', () => {
  it('takes I as a number or as the variable a launcher sets', () => {
    expect(parseShardSpec('1/4', {})).toEqual({ spec: { index: 1, count: 4 }, indexFrom: null })
    expect(parseShardSpec('JOB_COMPLETION_INDEX/4', { JOB_COMPLETION_INDEX: '3' })).toEqual({ spec: { index: 3, count: 4 }, indexFrom: 'JOB_COMPLETION_INDEX' })
    expect(parseShardSpec(' SLURM_PROCID / 8 ', { SLURM_PROCID: '0' })).toEqual({ spec: { index: 0, count: 8 }, indexFrom: 'SLURM_PROCID' })
  })

  it('names what is wrong', () => {
    const problem = (raw: string, env: Record<string, string> = {}): string => (parseShardSpec(raw, env) as { problem: string }).problem
    expect(problem('4/4')).toBe('shard index is not below N = 4: indices run from 0 to 3')
    expect(problem('SLURM_PROCID/2', { SLURM_PROCID: '2' })).toBe('SLURM_PROCID=2 is not below N = 2: indices run from 0 to 1')
    expect(problem('JOB_COMPLETION_INDEX/4')).toBe(
      "the variable JOB_COMPLETION_INDEX is not set (the launcher sets it: a Kubernetes Indexed Job, Slurm's srun)",
    )
    expect(problem('X/4', { X: 'two' })).toBe('X is "two": expected a shard index from 0 to 3')
    expect(problem('1/0')).toBe(`expected N from 1 to ${MAX_SHARDS} shards`)
    expect(problem('1')).toMatch(/^expected I\/N: I from 0 to N−1/)
    expect(problem('-1/2')).toMatch(/^expected I\/N/)
  })

  it('reads a start time only with its zone, which every host reads alike', () => {
    expect(parseStartAt('2026-12-07T10:00:00Z')).toBe(Date.UTC(2026, 11, 7, 10))
    expect(parseStartAt('2026-12-07T11:00:00.5+01:00')).toBe(Date.UTC(2026, 11, 7, 10, 0, 0, 500))
    expect(parseStartAt('2026-12-07T10:00:00')).toEqual({
      problem: 'expected an ISO 8601 time with its zone, e.g. 2026-12-07T10:00:00Z (every shard reads it alike)',
    })
    expect(parseStartAt('2026-13-07T10:00:00Z')).toEqual({ problem: 'expected a valid date and time, e.g. 2026-12-07T10:00:00Z' })
  })
})
