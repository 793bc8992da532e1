import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { SimHandle } from '../../src/sim/index.js'
import type { RunResult } from '../../src/types.js'
import { codes, detail, measure, point, sim } from './harness.js'

// The control for every other file here: a well-behaved server measured at a
// light load must come out with no validity issue at all.
describe('a clean run against the deterministic simulator', () => {
  let handle: SimHandle
  let run: RunResult

  beforeAll(async () => {
    handle = await sim({ ttftMs: 30, itlMs: 10 })
    // 16 streams × 100 events/s: ~1.6k token events/s, 6% of what one load thread keeps up with here.
    // A busy neighbour on the CPUs really does delay the load thread's event loop, and then
    // client_saturated is the right answer, not a false flag: measure again (up to three times)
    // when that is the only issue. Any other code, or saturation every time, fails the test.
    for (let attempt = 0; attempt < 3; attempt++) {
      run = await measure(handle, point({ concurrency: 16, outputLen: 64, numPrompts: 64, warmup: 16, repeat: attempt + 1 }))
      if (codes(run).join() !== 'client_saturated') break
    }
  }, 120_000)
  afterAll(() => handle?.close())

  it('completes every request with no failure', () => {
    expect(run.completed).toBe(64)
    expect(run.failed).toBe(0)
  })

  it('counts the same output tokens by usage, content chunks, re-tokenised text and /metrics', () => {
    expect(run.tokens).toMatchObject({ expected: 64 * 64, server_usage: 64 * 64, client_chunks: 64 * 64, retokenized: 64 * 64, tokens_per_chunk: 1 })
    expect(run.server_side?.generation_tokens).toBe(64 * 64)
  })

  it('sees no prefix-cache hit and a client that kept up', () => {
    expect(run.server_side?.prefix_cache_hits ?? 0).toBe(0)
    expect(run.client!.mean_in_flight).toBeGreaterThan(0.95 * 16)
  })

  it('is valid, with no issue — or, on a host whose CPUs another process holds, only the saturation that shows', () => {
    if (codes(run).join() === 'client_saturated') {
      // Three attempts all delayed: a neighbour holds the CPU. Then the flag must be the
      // shared-CPU kind (a late event loop that was itself mostly idle), never a client that
      // was busy at 6% of its capacity, and it must say so.
      expect(run.client!.event_loop_utilization).toBeLessThan(0.5)
      expect(detail(run, 'client_saturated')).toMatch(/the CPU was shared/)
      return
    }
    expect(run.validity.issues).toEqual([])
    expect(run.validity.valid).toBe(true)
    expect(codes(run)).toEqual([])
    expect(detail(run, 'client_saturated')).toBe('')
  })
})
