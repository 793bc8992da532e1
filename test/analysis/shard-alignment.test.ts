import { describe, expect, it } from 'vitest'
import { ALIGN_MS, clockUncertainty, judgeAlignment, type PartTimes } from '../../src/analysis/shard-alignment.js'
import type { HostClock } from '../../src/types.js'

const here: HostClock = { server: null, offset_ms: null, uncertainty_ms: null }
const part = (index: number, startMs: number, measureMs: number, endMs: number, hostKey = 'boot-a', clock = here): PartTimes => ({
  index,
  hostKey,
  clock,
  startMs,
  measureMs,
  endMs,
})
const ntp = (u: number): HostClock => ({ server: 'ntp.example:123', offset_ms: 3, uncertainty_ms: u })

describe("the shards' alignment", () => {
  it('adds nothing for the clock on one host, the two largest uncertainties across hosts, and cannot bound hosts never compared', () => {
    expect(clockUncertainty([part(0, 0, 0, 0), part(1, 0, 0, 0)])).toBe(0)
    expect(clockUncertainty([part(0, 0, 0, 0, 'a', ntp(1)), part(1, 0, 0, 0, 'b', ntp(4)), part(2, 0, 0, 0, 'c', ntp(2))])).toBe(6)
    expect(clockUncertainty([part(0, 0, 0, 0, 'a', ntp(1)), part(1, 0, 0, 0, 'b')])).toBeNull()
  })

  it('passes shards that kept the schedule, and records the spreads and bounds', () => {
    const { alignment, issue } = judgeAlignment([part(0, 0, 750, 1900), part(1, 3, 754, 1960)], 120, 3)
    expect(issue).toBeNull()
    expect(alignment).toEqual({
      start_spread_ms: 3,
      measure_spread_ms: 4,
      end_spread_ms: 60,
      bound_ms: ALIGN_MS,
      start_bound_ms: ALIGN_MS + 75,
      end_bound_ms: ALIGN_MS + 120,
      clock_uncertainty_ms: 0,
    })
  })

  it('calls a run whose measured starts spread beyond the bound unaligned, naming the shards', () => {
    const { issue } = judgeAlignment([part(0, 0, 750, 1900), part(1, 0, 790, 1910), part(2, 0, 751, 1905)], 100, 3)
    expect(issue).toEqual({
      code: 'shards_unaligned',
      detail:
        "The shards did not keep one schedule: their measured requests started 40.0 ms apart (shard 0 first, shard 1 last; bound 25.0 ms). For part of the window the server carried fewer than the point's streams.",
    })
  })

  it('lets warmups start a tenth of the warmup window apart, and ends one p99 E2EL more than the bound', () => {
    expect(judgeAlignment([part(0, 0, 750, 1900), part(1, 99, 751, 2044)], 120, 3).issue).toBeNull()
    const late = judgeAlignment([part(0, 0, 750, 1900), part(1, 101, 751, 2046)], 120, 3).issue!.detail
    expect(late).toContain('their warmups started 101.0 ms apart (shard 0 first, shard 1 last; bound 100.0 ms)')
    expect(late).toContain('they ended 146.0 ms apart (shard 0 first, shard 1 last; bound 145.0 ms, one p99 E2EL over the start bound)')
  })

  it('widens the bound by what the clocks may hide across hosts, and fails hosts whose clocks were not compared', () => {
    const far = [part(0, 0, 750, 1900, 'a', ntp(10)), part(1, 0, 790, 1900, 'b', ntp(8))]
    expect(judgeAlignment(far, 100, 3).issue).toBeNull()
    expect(judgeAlignment(far, 100, 3).alignment.bound_ms).toBe(ALIGN_MS + 18)
    const blind = judgeAlignment([part(0, 0, 750, 1900, 'a'), part(1, 0, 750, 1900, 'b')], 100, 3)
    expect(blind.alignment.clock_uncertainty_ms).toBeNull()
    expect(blind.issue?.detail).toContain(
      'the shards ran on 2 hosts and the clocks of shards 0, 1 were not compared with a time server (--time-server), so their alignment cannot be shown',
    )
  })
})
