import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { goodputOf, meetsSlo } from '../../src/metrics/goodput.js'
import type { GoodputSlo, RequestRecord } from '../../src/types.js'
import { rec } from './raw-fixture.js'

/** A completed request with first token at `ttft` and `n` tokens `itl` apart. */
const request = (i: number, ttft: number, itl: number, n: number): RequestRecord =>
  rec(
    i * 10,
    Array.from({ length: n }, (_, k) => ttft + k * itl),
  )

describe('goodputOf', () => {
  const records = [
    request(0, 100, 20, 11),
    request(1, 300, 20, 11),
    request(2, 100, 60, 11),
    { ...request(3, 100, 20, 11), error: { kind: 'http_status' as const, detail: 'HTTP 500' } },
  ]

  it('counts the completed requests meeting every SLO given, over the run’s duration', () => {
    const g = goodputOf(records, { ttft_ms: 200, tpot_ms: 30 }, 2)
    // Request 0 meets both; 1 misses TTFT; 2 misses TPOT (60 ms); 3 failed and is not counted.
    expect(g.share).toBeCloseTo(1 / 3, 10)
    expect(g.request_throughput).toBe(0.5)
    expect(g.output_throughput).toBe(11 / 2)
    expect(g.slo).toEqual({ ttft_ms: 200, tpot_ms: 30 })
  })

  it('checks E2EL from send to the last content chunk', () => {
    // E2EL: 300, 500, 700 ms.
    expect(goodputOf(records, { e2el_ms: 500 }, 1).share).toBeCloseTo(2 / 3, 10)
  })

  it('has no share when nothing completed', () => {
    expect(goodputOf([records[3]!], { ttft_ms: 1 }, 1)).toMatchObject({ share: null, request_throughput: 0 })
  })

  it('lets a one-token request meet a TPOT bound (it has no TPOT, counted 0 as in vLLM)', () => {
    expect(meetsSlo({ ttftMs: 10, tpotMs: null, e2elMs: 10 }, { tpot_ms: 1 })).toBe(true)
  })

  const recordsArb = fc
    .array(
      fc.record({ ttft: fc.integer({ min: 1, max: 5000 }), itl: fc.integer({ min: 0, max: 200 }), n: fc.integer({ min: 1, max: 40 }), failed: fc.boolean() }),
      { minLength: 0, maxLength: 40 },
    )
    .map((xs) =>
      xs.map((x, i) =>
        x.failed ? { ...request(i, x.ttft, x.itl, x.n), error: { kind: 'transport' as const, detail: 'reset' } } : request(i, x.ttft, x.itl, x.n),
      ),
    )
  const sloArb = fc
    .record(
      { ttft_ms: fc.integer({ min: 1, max: 6000 }), tpot_ms: fc.integer({ min: 1, max: 250 }), e2el_ms: fc.integer({ min: 1, max: 20_000 }) },
      { requiredKeys: [] },
    )
    .filter((s) => Object.keys(s).length > 0)

  it('keeps the share within [0, 1] and the rates at or under the completed requests’ rate', () => {
    fc.assert(
      fc.property(recordsArb, sloArb, fc.double({ min: 0.1, max: 100, noNaN: true }), (rs, slo, d) => {
        const g = goodputOf(rs, slo as GoodputSlo, d)
        const completed = rs.filter((r) => r.error === null).length
        if (completed === 0) return g.share === null
        return g.share !== null && g.share >= 0 && g.share <= 1 && g.request_throughput <= completed / d + 1e-9
      }),
    )
  })

  it('never lowers the share when an SLO is loosened', () => {
    fc.assert(
      fc.property(recordsArb, sloArb, fc.integer({ min: 0, max: 5000 }), (rs, slo, more) => {
        const s = slo as GoodputSlo
        const looser: GoodputSlo = Object.fromEntries(Object.entries(s).map(([k, v]) => [k, v + more]))
        const a = goodputOf(rs, s, 1).share ?? 0
        const b = goodputOf(rs, looser, 1).share ?? 0
        return b >= a
      }),
    )
  })
})
