import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { SimHandle } from '../../src/sim/index.js'
import type { RunResult } from '../../src/types.js'
import { codes, detail, measure, point, sim } from './harness.js'

// The same seed twice means the same prompts twice: the second run is served
// from the prefix cache the first one filled.
describe('a repeated prompt set against a simulator with a prefix cache', () => {
  let handle: SimHandle
  let first: RunResult
  let second: RunResult

  beforeAll(async () => {
    handle = await sim({ ttftMs: 10, itlMs: 2, prefixCache: true })
    const p = point({ concurrency: 4, inputLen: 256, outputLen: 32, numPrompts: 48, seed: 777 })
    first = await measure(handle, p)
    second = await measure(handle, p)
  }, 60_000)
  afterAll(() => handle?.close())

  it('sees no hit the first time (prompts are unique within a point)', () => {
    expect(first.server_side?.prefix_cache_queries).toBe(48 * 256)
    expect(first.server_side?.prefix_cache_hits).toBe(0)
    expect(codes(first)).not.toContain('prefix_cache_contaminated')
  })

  it('flags the second run as prefix_cache_contaminated with the hit count', () => {
    const hits = second.server_side?.prefix_cache_hits ?? 0
    expect(hits).toBeGreaterThan(0)
    expect(codes(second)).toContain('prefix_cache_contaminated')
    expect(detail(second, 'prefix_cache_contaminated')).toContain(`served ${hits} prompt tokens of ${48 * 256} queried`)
  })
})
