import { describe, expect, it } from 'vitest'
import { clientHeadroom, headroomLine } from '../../src/analysis/headroom.js'
import { summarizeRun } from '../../src/metrics/summarize.js'
import type { PointResult, RunResult } from '../../src/types.js'
import { raw, rec } from '../metrics/raw-fixture.js'

/** A run as the summarizer writes it, its client having handled `events` token events/s at utilisation `elu`. */
function run(repeat: number, events: number, elu: number, workers = 1): RunResult {
  const r = raw(4, [rec(0, [10, 20, 30]), rec(5, [12, 22, 32])], 0, 1000)
  r.client = { ...r.client, workers, eventsPerSecond: events, eventLoopUtilization: elu }
  return summarizeRun(r, { repeat, seed: 1, numPrompts: 2 })
}

const point = (concurrency: number, runs: RunResult[]): PointResult => ({ input_len: 128, output_len: 32, concurrency, runs })

describe('the client headroom', () => {
  it("is read at the sweep's heaviest run: the utilisation bound over its utilisation, its capacity the events that would take", () => {
    const h = clientHeadroom([point(1, [run(1, 900, 0.05)]), point(64, [run(1, 20_000, 0.2), run(2, 21_000, 0.25)]), point(16, [run(1, 8000, 0.1)])])
    expect(h).toEqual({
      input_len: 128,
      output_len: 32,
      concurrency: 64,
      repeat: 2,
      events_per_second: 21_000,
      event_loop_utilization: 0.25,
      capacity_events_per_second: 42_000,
      headroom: 2,
      load_hosts_needed: null,
    })
    expect(headroomLine(h)).toBe(
      'Client headroom: ×2.0 at 128×32 c=64, its heaviest point (21k token events/s, against the 42k this client handles before its busiest load thread is 50 % busy, where client_saturated fires).',
    )
  })

  it('under ×1.5 says how many load hosts sharing the load would restore it', () => {
    const near = clientHeadroom([point(256, [run(1, 30_000, 0.4)])])!
    expect(near.headroom).toBeCloseTo(1.25, 12)
    expect(near.load_hosts_needed).toBe(2)
    expect(headroomLine(near)).toMatch(/: under ×1\.5, so a busier server or host would saturate it; 2 load hosts sharing the load would restore ×1\.5\.$/)
    // A client past the bound (its runs client_saturated): at headroom ×0.5, three hosts; against a bound of 0.25, six.
    expect(clientHeadroom([point(512, [run(1, 60_000, 1.0)])])!.load_hosts_needed).toBe(3)
    expect(clientHeadroom([point(512, [run(1, 60_000, 1.0)])], 0.25)!.load_hosts_needed).toBe(6)
  })

  it('is null where no run measured its client (an imported result), and the line says so', () => {
    expect(clientHeadroom([])).toBeNull()
    expect(clientHeadroom([point(4, [run(1, 0, 0)])])).toBeNull()
    expect(headroomLine(null)).toBe('Client headroom: not measured (no run recorded its load client).')
  })
})
