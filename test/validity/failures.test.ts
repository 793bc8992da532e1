import { afterEach, describe, expect, it } from 'vitest'
import type { SimHandle } from '../../src/sim/index.js'
import { codes, detail, measure, point, sim } from './harness.js'

// Injected faults become requests_failed with the error kinds counted; the
// failed requests never enter the latency figures.
describe('requests_failed on real runs', () => {
  let handle: SimHandle | undefined
  afterEach(async () => {
    await handle?.close()
    handle = undefined
  })
  const p = point({ concurrency: 4, outputLen: 32, numPrompts: 60 })

  it('counts injected HTTP 500s as http_status failures', async () => {
    handle = await sim({ ttftMs: 10, itlMs: 2, faults: [{ kind: 'http500', rate: 0.2 }] })
    const run = await measure(handle, p)
    expect(run.failed).toBeGreaterThan(0)
    expect(run.completed + run.failed).toBe(60)
    expect(run.errors).toEqual({ http_status: run.failed })
    expect(codes(run)[0]).toBe('requests_failed')
    expect(detail(run, 'requests_failed')).toBe(`${run.failed} of 60 requests failed (http_status ×${run.failed}).`)
  }, 30_000)

  it('counts mid-stream disconnects as transport failures', async () => {
    handle = await sim({ ttftMs: 10, itlMs: 2, faults: [{ kind: 'disconnect', rate: 0.2 }] })
    const run = await measure(handle, p)
    expect(run.failed).toBeGreaterThan(0)
    expect(Object.keys(run.errors)).toEqual(['transport'])
    expect(detail(run, 'requests_failed')).toMatch(new RegExp(`^${run.failed} of 60 requests failed \\(transport ×${run.failed}\\)\\.$`))
    // Completed requests still count exactly; the server generated more for the cut ones, which is allowed.
    expect(run.tokens.client_chunks).toBe(run.completed * 32)
    expect(codes(run)).not.toContain('token_count_mismatch')
  }, 30_000)
})
