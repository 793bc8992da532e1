import { describe, expect, it } from 'vitest'
import { buildPlan, pointKey } from '../../src/plan/plan.js'

const base = {
  shapes: [
    { inputLen: 4096, outputLen: 512 },
    { inputLen: 128, outputLen: 64 },
  ],
  concurrency: [1, 16],
  repeats: 2,
  seed: 42,
  promptsPerConcurrency: 12,
  warmup: 'auto' as const,
}

describe('buildPlan', () => {
  it('orders points shape → concurrency → repeat with stable keys', () => {
    expect(buildPlan(base).map((p) => p.key)).toEqual([
      '4096x512@c1#r1',
      '4096x512@c1#r2',
      '4096x512@c16#r1',
      '4096x512@c16#r2',
      '128x64@c1#r1',
      '128x64@c1#r2',
      '128x64@c16#r1',
      '128x64@c16#r2',
    ])
  })

  it('scales measured prompts with concurrency (C × prompts-per-concurrency)', () => {
    expect(buildPlan(base).map((p) => p.numPrompts)).toEqual([12, 12, 192, 192, 12, 12, 192, 192])
  })

  it('warms up with one wave of at least 4 requests when warmup is auto, and with N when given', () => {
    expect(buildPlan(base).map((p) => p.warmupRequests)).toEqual([4, 4, 16, 16, 4, 4, 16, 16])
    expect(buildPlan({ ...base, warmup: 7 }).every((p) => p.warmupRequests === 7)).toBe(true)
  })

  it('gives every point its own seed, reproducibly from the sweep seed', () => {
    const seeds = buildPlan(base).map((p) => p.seed)
    expect(new Set(seeds).size).toBe(seeds.length)
    expect(buildPlan(base).map((p) => p.seed)).toEqual(seeds)
    expect(buildPlan({ ...base, seed: 43 }).map((p) => p.seed)).not.toEqual(seeds)
  })

  it('keeps a point seed independent of the rest of the grid (resume-safe)', () => {
    const alone = buildPlan({ ...base, shapes: [{ inputLen: 128, outputLen: 64 }], concurrency: [16] })
    const full = buildPlan(base)
    expect(alone.find((p) => p.key === '128x64@c16#r2')!.seed).toBe(full.find((p) => p.key === '128x64@c16#r2')!.seed)
  })

  it('writes keys as input x output @ concurrency # repeat', () => {
    expect(pointKey({ inputLen: 4096, outputLen: 512 }, 16, 2)).toBe('4096x512@c16#r2')
  })
})
