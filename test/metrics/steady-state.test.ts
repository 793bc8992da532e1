import { describe, expect, it } from 'vitest'
import { busyWindow, steadyState } from '../../src/metrics/steady-state.js'
import { raw, rec } from './raw-fixture.js'

describe('steadyState', () => {
  // C = 2. A: 0→100 (chunks at 20,60,100 abs). B: 10→200 (chunks 50,100,150,200 abs).
  // C: 101→150 (chunks 121,141 abs). Two in flight from 10; drops to 1 at 100,
  // refilled at 101, last drop at 150 → window [10, 150] of a 0..200 run.
  const run = raw(
    2,
    [rec(0, [20, 60, 100], { streamEndMs: 100 }), rec(10, [40, 90, 140, 190], { streamEndMs: 190 }), rec(101, [20, 40], { streamEndMs: 49 })],
    0,
    200,
  )

  it('spans from the C-th concurrent send to the last drop below C, ignoring refill dips', () => {
    expect(busyWindow(run)).toEqual({ startMs: 10, endMs: 150 })
  })

  it('computes figures over the window: tokens whose chunks arrived inside, requests sent inside', () => {
    const ss = steadyState(run)
    expect(ss).not.toBeNull()
    expect(ss?.start_s).toBeCloseTo(0.01, 12)
    expect(ss?.end_s).toBeCloseTo(0.15, 12)
    expect(ss?.ramp_fraction).toBeCloseTo(0.3, 12)
    // A: 3 chunks inside, B: 3 (50,100,150), C: 2 → 8 tokens / 0.14 s
    expect(ss?.output_throughput).toBeCloseTo(8 / 0.14, 6)
    // B and C were sent inside; A (sent at 0) is ramp-up
    expect(ss?.completed).toBe(2)
    expect(ss?.ttft_ms.p50).toBeCloseTo(30, 6) // TTFTs 40 and 20
    expect(ss?.itl_ms.p50).toBeCloseTo(50, 6) // gaps 50,50,50,20
  })

  it('weights chunks by tokens per chunk', () => {
    const multi = raw(1, [rec(0, [10, 20], { usageCompletionTokens: 4, streamEndMs: 100 })], 0, 100)
    expect(steadyState(multi)?.output_throughput).toBeCloseTo(40, 9)
  })

  it('is null when C requests were never in flight together', () => {
    expect(steadyState(raw(3, [rec(0, [10]), rec(0, [10])], 0, 20))).toBeNull()
    expect(steadyState(raw(2, [], 0, 20))).toBeNull()
  })

  it('treats an end and a send at the same instant as a refill (end first)', () => {
    const back = raw(1, [rec(0, [5], { streamEndMs: 10 }), rec(10, [5], { streamEndMs: 10 })], 0, 20)
    expect(busyWindow(back)).toEqual({ startMs: 0, endMs: 20 })
    expect(steadyState(back)?.ramp_fraction).toBe(0)
  })
})
