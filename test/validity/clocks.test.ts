import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { SimHandle } from '../../src/sim/index.js'
import type { RunResult } from '../../src/types.js'
import { measure, point, sim } from './harness.js'

// Where the clock starts: the client's TTFT runs from its send, the server's
// (Prometheus /metrics) from the request reaching the engine. The simulator's
// front delay (a proxy in front of the engine) is in the first, not the second.
const FRONT_DELAY_MS = 30
// Stated bound: client mean TTFT − server mean TTFT lies in [delay − 1 ms, delay + 5 ms].
// −1 ms: a timer may fire up to ~1 ms early at ms granularity; +5 ms: the loopback request
// and response paths and the client's own timestamping (~1 ms measured, 5 ms for a busy host).
const BELOW_MS = 1
const ABOVE_MS = 5

describe(`client and server TTFT against a simulator with a ${FRONT_DELAY_MS} ms front delay`, () => {
  let handle: SimHandle
  let run: RunResult

  beforeAll(async () => {
    handle = await sim({ ttftMs: 50, itlMs: 5, frontDelayMs: FRONT_DELAY_MS })
    run = await measure(handle, point({ concurrency: 4, outputLen: 32, numPrompts: 48, warmup: 4 }))
  }, 60_000)
  afterAll(() => handle?.close())

  it('reports both, each under its own name', () => {
    expect(run.server_side?.source).toBe('prometheus')
    for (const s of [run.ttft_ms, run.server_side!.ttft_ms]) {
      expect(s.mean).not.toBeNull()
      expect(s.p50).not.toBeNull()
      expect(s.p99).not.toBeNull()
    }
  })

  // The simulator times its 50 ms with a timer in this test's process: a timer never fires early by
  // more than the clock's rounding, and fires late by what the host keeps it waiting — up to
  // ABOVE_MS on a busy host, as for the client (a quiet CI run of the integration lane measured a
  // mean above 52 ms). Either way far from the 80 ms that would include the front delay.
  it('has the server TTFT at the engine’s 50 ms (mean, exact from _sum/_count)', () => {
    expect(run.server_side!.ttft_ms.mean!).toBeGreaterThanOrEqual(49.5)
    expect(run.server_side!.ttft_ms.mean!).toBeLessThanOrEqual(50 + ABOVE_MS)
  })

  it(`differs from the client TTFT by the front delay within [−${BELOW_MS}, +${ABOVE_MS}] ms`, () => {
    const gap = run.ttft_ms.mean! - run.server_side!.ttft_ms.mean!
    expect(gap).toBeGreaterThanOrEqual(FRONT_DELAY_MS - BELOW_MS)
    expect(gap).toBeLessThanOrEqual(FRONT_DELAY_MS + ABOVE_MS)
  })

  it('keeps the front delay out of ITL (both clocks agree on 5 ms gaps)', () => {
    expect(Math.abs(run.itl_ms.mean! - run.server_side!.itl_ms!.mean!)).toBeLessThan(0.5)
  })
})
