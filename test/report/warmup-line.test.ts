import { describe, expect, it } from 'vitest'
import { warmupRampLine } from '../../src/report/warmup-line.js'
import type { RunResult } from '../../src/types.js'
import { run, steady } from './fixtures.js'

const base = { ttft: [100, 110] as [number, number], itl: [20, 25] as [number, number], tput: 48, perUser: 49.8 }
const r = (warmup: number, ramp: number | null, completed = 12): RunResult => ({
  ...run(1, base),
  warmup_requests: warmup,
  steady_state: ramp === null ? null : steady(ramp),
  completed,
})
const RULE = 'at C > 1 a run over 25%, or with no such window, is flagged ramp_dominated.'

describe('warmupRampLine', () => {
  it('gives the min–max of warmup and ramp across the runs, and the ramp_dominated rule', () => {
    expect(warmupRampLine([r(4, 0.031), r(16, 0.12), r(16, 0.08)], 'auto')).toBe(
      'Warmup: 4–16 requests per run discarded before measuring (auto: one per slot, at least 4). ' +
        `Ramp: 3.1–12% of each run's duration fell outside the steady-state window in which all C slots were busy; ${RULE}`,
    )
  })

  it('gives a single value when every run agrees', () => {
    expect(warmupRampLine([r(4, 0.05), r(4, 0.05)], 'auto')).toBe(
      'Warmup: 4 requests per run discarded before measuring (auto: one per slot, at least 4). ' +
        `Ramp: 5% of each run's duration fell outside the steady-state window in which all C slots were busy; ${RULE}`,
    )
  })

  it('counts runs that never had all slots busy, but not runs that completed nothing', () => {
    expect(warmupRampLine([r(8, 0.1), r(8, null), r(8, null), r(8, null, 0)], 8)).toBe(
      'Warmup: 8 requests per run discarded before measuring (as configured). ' +
        `Ramp: 10% of each run's duration fell outside the steady-state window in which all C slots were busy (2 runs had no such window); ${RULE}`,
    )
  })

  it('omits the ramp when no run has a steady state', () => {
    expect(warmupRampLine([r(1, null), r(1, null)], undefined)).toBe('Warmup: 1 request per run discarded before measuring.')
  })

  it('says when nothing was discarded, and is null before any run', () => {
    expect(warmupRampLine([r(0, null)], 0)).toBe('Warmup: none (no request discarded before measuring).')
    expect(warmupRampLine([], 'auto')).toBeNull()
  })

  it('names the runs host_retries measured again, the discarded attempts and their codes', () => {
    const spoiled = (seed: number, ...codes: Array<'client_saturated' | 'gpu_shared'>) => ({
      seed,
      started_at: '2026-12-06T08:00:00.000Z',
      finished_at: '2026-12-06T08:00:01.000Z',
      issues: codes.map((code) => ({ code, detail: `${code} detail` })),
    })
    const again = { ...r(4, null), discarded_attempts: [spoiled(1, 'gpu_shared', 'client_saturated'), spoiled(2, 'client_saturated')] }
    const once = { ...r(4, null), discarded_attempts: [spoiled(3, 'gpu_shared')] }
    expect(warmupRampLine([again, r(4, null), once], 4)).toBe(
      'Warmup: 4 requests per run discarded before measuring (as configured). ' +
        "Measured again (host_retries): 2 runs after the host spoiled an attempt (gpu_shared 2, client_saturated 2); the 3 discarded attempts are left out of every figure and listed in the result's discarded_attempts.",
    )
    expect(warmupRampLine([r(4, 0.05), once], 4)).toMatch(
      /ramp_dominated\. Measured again \(host_retries\): 1 run after the host spoiled an attempt \(gpu_shared 1\); the 1 discarded attempt is left out/,
    )
  })
})
