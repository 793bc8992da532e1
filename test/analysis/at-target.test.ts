import { describe, expect, it } from 'vitest'
import { atTargetForResult, repeatsCutByInvalidRuns, throughputAtTarget } from '../../src/analysis/at-target.js'
import type { PointResult, Validity } from '../../src/types.js'
import { cleanRun, stats } from './run-fixture.js'

const pt = (concurrency: number, targetValueMs: number | null, outputThroughput: number) => ({ concurrency, targetValueMs, outputThroughput })

describe('throughputAtTarget', () => {
  it('interpolates between the last passing and first failing point', () => {
    expect(throughputAtTarget([pt(1, 20, 100), pt(4, 40, 300), pt(16, 60, 900)], 50)).toEqual({
      throughput: 600,
      concurrency: 10,
      bound: 'interpolated',
    })
  })

  it('sorts points by concurrency first', () => {
    expect(throughputAtTarget([pt(16, 60, 900), pt(4, 40, 300)], 50)).toEqual({ throughput: 600, concurrency: 10, bound: 'interpolated' })
  })

  it('is exact when the last passing point sits on the threshold', () => {
    expect(throughputAtTarget([pt(4, 40, 300), pt(16, 50, 900), pt(64, 70, 1200)], 50)).toEqual({
      throughput: 900,
      concurrency: 16,
      bound: 'exact',
    })
  })

  it('is a lower bound at the highest point when every point passes', () => {
    expect(throughputAtTarget([pt(1, 10, 100), pt(4, 20, 300)], 50)).toEqual({ throughput: 300, concurrency: 4, bound: 'lower_bound' })
  })

  it('is unreachable with nulls when the lowest concurrency already misses', () => {
    expect(throughputAtTarget([pt(1, 60, 100), pt(4, 45, 300)], 50)).toEqual({ throughput: null, concurrency: null, bound: 'unreachable' })
  })

  it('ignores a pass after a failure (non-monotonic curve): the first crossing counts', () => {
    // 1 → 4 crosses 50 at f = 20/30: concurrency 3, throughput 100 + 200·2/3
    const r = throughputAtTarget([pt(1, 30, 100), pt(4, 60, 300), pt(16, 45, 900)], 50)
    expect(r.bound).toBe('interpolated')
    expect(r.concurrency).toBeCloseTo(3, 12)
    expect(r.throughput).toBeCloseTo(700 / 3, 9)
  })

  it('handles a single point: pass, fail or on the threshold', () => {
    expect(throughputAtTarget([pt(8, 49, 400)], 50)).toEqual({ throughput: 400, concurrency: 8, bound: 'lower_bound' })
    expect(throughputAtTarget([pt(8, 51, 400)], 50).bound).toBe('unreachable')
    expect(throughputAtTarget([pt(8, 50, 400)], 50)).toEqual({ throughput: 400, concurrency: 8, bound: 'exact' })
  })

  it('treats a point without a value as failing, without interpolating through it', () => {
    expect(throughputAtTarget([pt(1, 30, 100), pt(4, null, 0), pt(16, 40, 900)], 50)).toEqual({
      throughput: 100,
      concurrency: 1,
      bound: 'lower_bound',
    })
    expect(throughputAtTarget([pt(1, null, 0), pt(4, 40, 300)], 50).bound).toBe('unreachable')
  })

  it('is unreachable for an empty curve and rejects duplicate concurrencies', () => {
    expect(throughputAtTarget([], 50).bound).toBe('unreachable')
    expect(() => throughputAtTarget([pt(4, 1, 1), pt(4, 2, 2)], 50)).toThrow(/concurrency 4 appears twice/)
  })
})

describe('atTargetForResult', () => {
  const run = (repeat: number, tpotP95: number, itlP95: number, thr: number) =>
    cleanRun({ repeat, tpot_ms: stats(tpotP95, 1, 99), itl_ms: stats(itlP95, 1, 99), output_throughput: thr })
  const points: PointResult[] = [
    { input_len: 128, output_len: 64, concurrency: 1, runs: [run(0, 20, 20, 100), run(1, 30, 60, 110)] },
    { input_len: 128, output_len: 64, concurrency: 4, runs: [run(1, 60, 60, 330), run(0, 40, 40, 300)] },
    { input_len: 512, output_len: 64, concurrency: 1, runs: [run(0, 70, 70, 90)] },
  ]

  it('groups by shape and repeat and reads the target metric at its percentile', () => {
    const out = atTargetForResult(points, { metric: 'tpot', percentile: 95, threshold_ms: 50 })
    expect(out).toHaveLength(2)
    expect(out[0]).toMatchObject({ input_len: 128, output_len: 64 })
    expect(out[0]?.runs[0]).toEqual({ repeat: 0, throughput: 300, concurrency: 4, bound: 'lower_bound' })
    // repeat 1: 30 → 60 crosses 50 at f = 2/3
    expect(out[0]?.runs[1]?.bound).toBe('interpolated')
    expect(out[0]?.runs[1]?.throughput).toBeCloseTo(110 + (220 * 2) / 3, 9)
    expect(out[1]?.runs).toEqual([{ repeat: 0, throughput: null, concurrency: null, bound: 'unreachable' }])
  })

  it('uses ITL and other percentiles when asked', () => {
    const out = atTargetForResult(points, { metric: 'itl', percentile: 95, threshold_ms: 50 })
    expect(out[0]?.runs[1]?.bound).toBe('unreachable') // ITL p95 60 at C = 1
    const p99 = atTargetForResult(points, { metric: 'tpot', percentile: 99, threshold_ms: 50 })
    expect(p99[0]?.runs[0]?.bound).toBe('unreachable') // p99 is 99 everywhere
  })

  it('throws for a percentile other than 50, 95 or 99', () => {
    expect(() => atTargetForResult(points, { metric: 'tpot', percentile: 90, threshold_ms: 50 })).toThrow(/90 is not supported: use 50, 95 or 99/)
  })
})

describe('invalid runs and throughput at target', () => {
  const target = { metric: 'tpot', percentile: 95, threshold_ms: 50 } as const
  const bad: Validity = { valid: false, issues: [{ code: 'client_saturated', detail: 'ELU 0.99' }] }
  const run = (repeat: number, tpotP95: number, thr: number, valid = true) =>
    cleanRun({ repeat, tpot_ms: stats(tpotP95), output_throughput: thr, ...(valid ? {} : { validity: bad }) })
  const curve = (c4Valid: boolean, c64Valid: boolean): PointResult[] => [
    { input_len: 128, output_len: 64, concurrency: 1, runs: [run(0, 20, 100)] },
    { input_len: 128, output_len: 64, concurrency: 4, runs: [run(0, 30, 300, c4Valid)] },
    { input_len: 128, output_len: 64, concurrency: 16, runs: [run(0, 70, 900)] },
    { input_len: 128, output_len: 64, concurrency: 64, runs: [run(0, 200, 1000, c64Valid)] },
  ]

  it('never builds a figure from an invalid run: the curve runs through the valid points only', () => {
    // With C = 4 valid the crossing is interpolated between 4 (30 ms) and 16 (70 ms);
    // without it, between 1 (20 ms, 100 tok/s) and 16 (70 ms, 900 tok/s): f = 30/50.
    expect(atTargetForResult(curve(true, true), target)[0]?.runs[0]).toEqual({ repeat: 0, throughput: 300 + 0.5 * 600, concurrency: 10, bound: 'interpolated' })
    expect(atTargetForResult(curve(false, true), target)[0]?.runs[0]).toEqual({
      repeat: 0,
      throughput: 100 + 0.6 * 800,
      concurrency: 1 + 0.6 * 15,
      bound: 'interpolated',
    })
  })

  it('gives a repeat without one valid run no figure, rather than calling the target unreachable', () => {
    const allBad: PointResult[] = [
      { input_len: 128, output_len: 64, concurrency: 1, runs: [run(0, 20, 100, false), run(1, 20, 100)] },
      { input_len: 128, output_len: 64, concurrency: 4, runs: [run(0, 30, 300, false), run(1, 60, 300)] },
    ]
    expect(atTargetForResult(allBad, target)[0]?.runs).toEqual([
      { repeat: 1, throughput: 100 + (30 / 40) * 200, concurrency: 1 + (30 / 40) * 3, bound: 'interpolated' },
    ])
  })

  it('names the repeats whose walk meets an invalid run before the crossing, and only those', () => {
    expect(repeatsCutByInvalidRuns(curve(false, true), 128, 64, target)).toEqual(new Set([0]))
    // An invalid run past the first failing point (C = 16) does not touch the figure.
    expect(repeatsCutByInvalidRuns(curve(true, false), 128, 64, target)).toEqual(new Set())
    expect(atTargetForResult(curve(true, false), target)).toEqual(atTargetForResult(curve(true, true), target))
    expect(repeatsCutByInvalidRuns(curve(false, true), 512, 64, target)).toEqual(new Set())
  })
})
