import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { SimHandle } from '../../src/sim/index.js'
import { codes, detail, measure, point, sim } from './harness.js'

// too_few_requests: fewer than 10 completed requests, or fewer than 100
// inter-token gaps (an ITL p99 from fewer is the maximum or next to it).
describe('too_few_requests on real runs', () => {
  let handle: SimHandle
  beforeAll(async () => {
    handle = await sim({ ttftMs: 10, itlMs: 5 })
  })
  afterAll(() => handle?.close())

  it('flags a run of 4 requests, naming the count and the minimum', async () => {
    const run = await measure(handle, point({ concurrency: 2, outputLen: 64, numPrompts: 4, seed: 1 }))
    expect(run.completed).toBe(4)
    expect(codes(run)).toContain('too_few_requests')
    expect(detail(run, 'too_few_requests')).toMatch(/only 4 requests completed \(at least 10 are needed\)/)
  }, 30_000)

  it('flags 12 requests of 8 tokens: 84 gaps are too few for an ITL p99', async () => {
    const run = await measure(handle, point({ concurrency: 1, outputLen: 8, numPrompts: 12, seed: 2 }))
    expect(detail(run, 'too_few_requests')).toMatch(/only 84 inter-token gaps were measured \(at least 100/)
  }, 30_000)

  it("does not flag the methodology's C = 1 point with 12 prompts (12 × 63 gaps)", async () => {
    const run = await measure(handle, point({ concurrency: 1, outputLen: 64, numPrompts: 12, warmup: 1, seed: 3 }))
    expect(run.completed).toBe(12)
    expect(codes(run)).not.toContain('too_few_requests')
  }, 30_000)
})
