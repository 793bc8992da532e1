import { describe, expect, it } from 'vitest'
import { assessValidity, DEFAULT_VALIDITY_THRESHOLDS } from '../../src/analysis/validity.js'
import type { GpuSample, RunResult } from '../../src/types.js'
import { cleanRun } from '../analysis/run-fixture.js'

// The calibrated client_saturated rule (docs/validity.md): event-loop delay
// p99 > 5 ms, or utilisation ≥ 0.5, or mean in-flight < 0.95 × C while
// requests waited. Send lag alone never fires it.
const CTX = { concurrency: 4, ignoreEos: true, expectPrefixCacheMisses: true }
const client = (over: Partial<NonNullable<RunResult['client']>>, rest: Partial<RunResult> = {}): RunResult =>
  cleanRun({ ...rest, client: { ...cleanRun().client!, ...over } })
const saturated = (run: RunResult): string | null => assessValidity(run, CTX).issues.find((i) => i.code === 'client_saturated')?.detail ?? null
const gpu = (utilization_pct: number): GpuSample => ({
  index: 0,
  name: 'NVIDIA B200',
  utilization_pct,
  sm_clock_mhz: 1900,
  max_sm_clock_mhz: 1965,
  power_w: 700,
  temperature_c: 60,
  throttle_reasons: [],
  foreign_processes: 0,
})

describe('client_saturated, as calibrated', () => {
  it('uses the calibrated limits', () => {
    expect(DEFAULT_VALIDITY_THRESHOLDS).toMatchObject({ clientEventLoopDelayP99MaxMs: 5, clientEluMax: 0.5, inFlightMinFraction: 0.95 })
  })

  it('fires on event-loop delay p99 above 5 ms, and says a mostly idle loop means a shared CPU', () => {
    expect(saturated(client({ event_loop_delay_p99_ms: 5.2, event_loop_utilization: 0.12 }))).toBe(
      'The load generator could not keep up: event-loop delay p99 was 5.20 ms (limit 5 ms), so token timestamps were late by up to that much; ' +
        'the loop itself was busy only 12.0% of the time, so the CPU was shared (the server on the same host, or other processes) (300 token events/s on 1 load thread, send lag p99 0.80 ms).',
    )
  })

  it('does not fire at exactly 5 ms of delay', () => {
    expect(saturated(client({ event_loop_delay_p99_ms: 5 }))).toBeNull()
  })

  it('fires at utilisation 0.5 but not 0.49', () => {
    expect(saturated(client({ event_loop_utilization: 0.5 }))).toMatch(
      /event-loop utilisation reached 50\.0% \(limit 50\.0%\), so tokens arriving together queued/,
    )
    expect(saturated(client({ event_loop_utilization: 0.49 }))).toBeNull()
  })

  it('fires when mean in-flight is below 0.95 × C while requests waited (3.79 of 4), not at 3.8', () => {
    expect(saturated(client({ mean_in_flight: 3.79 }))).toMatch(/only 3\.79 of 4 requests were in flight on average while more were waiting \(limit 95\.0%\)/)
    expect(saturated(client({ mean_in_flight: 3.8 }))).toBeNull()
  })

  it('ignores a long send lag from C requests ending together (closed-loop refill burst)', () => {
    expect(saturated(client({ send_lag_p50_ms: 6, send_lag_p99_ms: 25 }))).toBeNull()
  })

  it('adds the GPU utilisation when samples exist: low means the harness was the limit', () => {
    const busy = { event_loop_utilization: 0.8 }
    expect(saturated(client(busy, { gpu: [gpu(20), gpu(30)] }))).toMatch(
      /; GPU utilisation averaged only 25% meanwhile, so the harness, not the engine, was the limit\.$/,
    )
    expect(saturated(client(busy, { gpu: [gpu(90)] }))).toMatch(/; GPU utilisation averaged 90% meanwhile\.$/)
    expect(saturated(client(busy))).not.toMatch(/GPU/)
  })
})
