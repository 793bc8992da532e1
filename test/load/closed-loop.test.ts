import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createLoadDispatcher, runClosedLoop } from '../../src/load/closed-loop.js'
import { plan } from './plan-fixture.js'
import { startStreamServer, type StreamServerHandle } from './stream-server.mjs'

let server: StreamServerHandle

beforeAll(async () => {
  server = await startStreamServer({ ttftMs: 15, itlMs: 5 })
})
afterAll(async () => {
  await server.close()
})

/** Most streams the server had open at once, from its own open/close log. */
function peakOpen(log: Array<{ openMs: number; closeMs: number }>): number {
  const ev = log
    .flatMap((r) => [
      [r.openMs, 1],
      [r.closeMs, -1],
    ])
    .sort((a, b) => (a[0] as number) - (b[0] as number) || (a[1] as number) - (b[1] as number))
  let open = 0
  let peak = 0
  for (const [, d] of ev) peak = Math.max(peak, (open += d as number))
  return peak
}

describe('runClosedLoop', () => {
  it('keeps exactly C streams open at the server until the plan runs out', async () => {
    const C = 12
    // Between the C-th arrival and the last arrival the server had C streams but
    // for the hand-over gaps (end → client notices → next request parsed, ~1 ms
    // of a ~115 ms stream on a quiet machine): time-weighted, at least 93% of C.
    // A busy neighbour only ever lengthens those gaps, so the best of up to three
    // attempts is the client's own figure; the count checks hold on every attempt.
    let best = 0
    for (let attempt = 0; attempt < 3 && best <= C * 0.93; attempt++) {
      const d = createLoadDispatcher(C)
      const epochNs = process.hrtime.bigint()
      server.resetStats()
      const before = server.requests().length
      const res = await runClosedLoop(plan(server.url, C * 4, `cl${attempt}`, 20), {
        concurrency: C,
        dispatcher: d,
        now: process.hrtime.bigint,
        epochNs,
        idleTimeoutMs: 5000,
      })
      await d.close()
      const log = server.requests().slice(before)
      expect(log).toHaveLength(C * 4)
      expect(peakOpen(log)).toBe(C)
      expect(res.records.every((r) => r.error === null)).toBe(true)
      const opens = log.map((r) => r.openMs).sort((a, b) => a - b)
      const from = opens[C - 1] as number
      const to = opens.at(-1) as number
      let area = 0
      for (const r of log) area += Math.max(0, Math.min(r.closeMs, to) - Math.max(r.openMs, from))
      console.info(`server-side mean open streams: ${(area / (to - from)).toFixed(2)} of ${C}`)
      best = Math.max(best, area / (to - from))
    }
    expect(best).toBeGreaterThan(C * 0.93)
  })

  it('returns records in plan order with a send lag per request', async () => {
    const d = createLoadDispatcher(3)
    const reqs = plan(server.url, 7, 'order', 3)
    const res = await runClosedLoop(reqs, { concurrency: 3, dispatcher: d, now: process.hrtime.bigint, epochNs: process.hrtime.bigint(), idleTimeoutMs: 5000 })
    await d.close()
    expect(res.records.map((r) => r.id)).toEqual(reqs.map((r) => r.id))
    expect(res.records.every((r) => r.contentChunks === 3 && r.usageCompletionTokens === 3)).toBe(true)
    expect(res.sendLagsMs).toHaveLength(7)
    expect(res.sendLagsMs.every((l) => l >= 0 && l < 500)).toBe(true)
    expect(res.firstSendMs).toBeLessThanOrEqual(res.lastSendMs)
    expect(res.endMs).toBeGreaterThan(res.lastSendMs)
  })

  it('never opens more streams than there are requests', async () => {
    const d = createLoadDispatcher(10)
    const before = server.requests().length
    const res = await runClosedLoop(plan(server.url, 3, 'few', 2), {
      concurrency: 10,
      dispatcher: d,
      now: process.hrtime.bigint,
      epochNs: process.hrtime.bigint(),
      idleTimeoutMs: 5000,
    })
    await d.close()
    expect(res.records).toHaveLength(3)
    expect(peakOpen(server.requests().slice(before))).toBe(3)
  })

  it('records a refused connection per request and goes on', async () => {
    const d = createLoadDispatcher(2)
    const res = await runClosedLoop(plan('http://127.0.0.1:1', 4, 'down', 2), {
      concurrency: 2,
      dispatcher: d,
      now: process.hrtime.bigint,
      epochNs: process.hrtime.bigint(),
      idleTimeoutMs: 5000,
    })
    await d.close()
    expect(res.records.map((r) => r.error?.kind)).toEqual(['transport', 'transport', 'transport', 'transport'])
  })
})
