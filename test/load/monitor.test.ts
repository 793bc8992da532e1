import { describe, expect, it } from 'vitest'
import { issuingWindow, meanInFlight, percentile, startLoopMonitor, summariseClient } from '../../src/load/monitor.js'
import type { RequestRecord } from '../../src/types.js'

/** A record sent at startMs that ended endMs later, with `chunks` content chunks. */
function rec(startMs: number, durMs: number, chunks = 0): RequestRecord {
  return {
    id: `r${startMs}`,
    startMs,
    ttftMs: null,
    chunkArrivalsMs: [],
    e2elMs: null,
    streamEndMs: durMs,
    contentChunks: chunks,
    usageCompletionTokens: null,
    usagePromptTokens: null,
    promptTokens: 1,
    maxTokens: 1,
    text: '',
    sawDone: true,
    finishReason: null,
    error: null,
  }
}

describe('percentile', () => {
  it.each([
    [[5, 1, 4, 2, 3], 50, 3],
    [[5, 1, 4, 2, 3], 99, 5],
    [[5, 1, 4, 2, 3], 20, 1],
    [[5, 1, 4, 2, 3], 21, 2],
    [[], 50, 0],
  ])('nearest rank of %j at p%i is %d', (values, p, expected) => {
    expect(percentile(values, p)).toBe(expected)
  })
})

describe('meanInFlight', () => {
  it('weights each request by its overlap with the window', () => {
    // [0,10] full overlap 10; [5,25] overlaps [0,20] for 15; [15,40] for 5 → 30 / 20.
    expect(meanInFlight([rec(0, 10), rec(5, 20), rec(15, 25)], 0, 20)).toBe(1.5)
  })
  it('is 0 for an empty window', () => {
    expect(meanInFlight([rec(0, 10)], 5, 5)).toBe(0)
  })
})

describe('issuingWindow', () => {
  it('spans first to last send', () => {
    expect(issuingWindow([rec(3, 10), rec(1, 10), rec(7, 50)])).toEqual({ fromMs: 1, toMs: 7 })
  })
  it('falls back to first send → last end when all went out at once', () => {
    expect(issuingWindow([rec(2, 10), rec(2.5, 30)])).toEqual({ fromMs: 2, toMs: 32.5 })
  })
})

describe('summariseClient', () => {
  it('takes the worst thread and counts content chunks per second of the window', () => {
    const records = [rec(0, 1000, 100), rec(0, 1000, 100), rec(1000, 1000, 100), rec(1000, 1000, 100)]
    const s = summariseClient({
      workers: 2,
      loops: [
        { elu: 0.2, delayP99Ms: 1, delayMaxMs: 3 },
        { elu: 0.6, delayP99Ms: 0.5, delayMaxMs: 9 },
      ],
      sendLagsMs: [0.1, 0.2, 0.3, 4],
      records,
      startMs: 0,
      endMs: 2000,
    })
    expect(s).toEqual({
      workers: 2,
      eventLoopUtilization: 0.6,
      eventLoopDelayP99Ms: 1,
      sendLagP50Ms: 0.2,
      sendLagP99Ms: 4,
      meanInFlight: 2, // two in flight over the issuing window [0, 1000]
      eventsPerSecond: 200,
    })
  })
})

describe('startLoopMonitor', () => {
  it('sees a busy loop as utilised and a blocked loop as delayed', async () => {
    const m = startLoopMonitor()
    // Let the delay sampler's timer start before blocking.
    await new Promise((r) => setTimeout(r, 30))
    const end = Date.now() + 120
    while (Date.now() < end) {
      // block the loop for 120 ms
    }
    await new Promise((r) => setTimeout(r, 30))
    const s = m.stop()
    expect(s.elu).toBeGreaterThan(0.45)
    expect(s.delayMaxMs).toBeGreaterThan(50)
  })
  it('sees an idle loop as idle', async () => {
    // A whole second: the test runner's own messages and a loaded host's late wake-ups made a
    // 150 ms window 43 % busy in one CI run; they are a few tens of ms, whatever the window.
    const m = startLoopMonitor()
    await new Promise((r) => setTimeout(r, 1000))
    const s = m.stop()
    expect(s.elu).toBeLessThan(0.3)
  })
})
