/**
 * The decision rule's family-wise level, drift prior, blindness and looks (gate/decide.ts,
 * gate/noise.ts, gate/compare.ts): one false-alarm rate per pull request split over its gated
 * rows, one drift prior with no step at any history length, a blind row that never passes, and
 * a screening look that leaves a band a last look closes.
 */
import { describe, expect, it } from 'vitest'
import { compareToBaseline } from '../../src/gate/compare.js'
import { decideMetric, type MetricInput } from '../../src/gate/decide.js'
import { estimateNoise, sigmaDiff } from '../../src/gate/noise.js'
import { DEFAULT_GATE_OPTIONS } from '../../src/gate/options.js'
import { DEFAULT_FAIL_ON, gateExit } from '../../src/gate/outcome.js'
import { clippedSd, tQuantile, varMedianFactor } from '../../src/gate/stats.js'
import { median } from '../../src/util/median.js'
import type { Baseline, MetricKind } from '../../src/gate/types.js'
import { appendRefresh } from '../../src/gate/refresh.js'
import type { ResultFile } from '../../src/types.js'
import { dayResult, pipeDay } from './fixtures.js'

const opts = DEFAULT_GATE_OPTIONS
const latency = (history: number[][], candidate: number[]): MetricInput => ({ history, candidate, higherIsBetter: false, tolerance: 0.05 })
/** Ten refreshes whose runs spread ±2 % around 10 ms, with no drift between them. */
const steady = Array.from({ length: 10 }, () => [9.8, 10, 10.2])
const times = (v: number, n = 3): number[] => Array(n).fill(v)

function baselineOf(results: ResultFile[]): Baseline {
  let b: Baseline | null = null
  for (const r of results) b = appendRefresh(b, r, { name: 'gate' })
  return b!
}

describe('Bonferroni: one false-alarm rate per pull request', () => {
  it('judges each row at alpha / rows: the same data with 14 rows has a wider bar than with 4', () => {
    const at = (rows: number, pct: number) => decideMetric(latency(steady, times(10 * (1 + pct / 100))), { ...opts, rows })
    const four = at(4, 6.5)
    const fourteen = at(14, 6.5)
    expect(four.level).toBeCloseTo(0.01 / 4, 15)
    expect(fourteen.level).toBeCloseTo(0.01 / 14, 15)
    // Same noise, same degrees of freedom: only the quantile differs.
    expect(fourteen.sigma).toBe(four.sigma)
    expect(fourteen.df).toBe(four.df)
    expect(four.bar).toBeCloseTo(tQuantile(1 - 0.01 / 4, four.df!) * four.sigma!, 12)
    expect(fourteen.bar).toBeCloseTo(tQuantile(1 - 0.01 / 14, four.df!) * four.sigma!, 12)
    expect(fourteen.bar!).toBeGreaterThan(four.bar!)
    // +6.5 % lies between the two bars (6.4 % and 7.4 %): a regression among 4 rows, a pass among 14.
    expect(four.status).toBe('regression')
    expect(fourteen.status).toBe('pass')
  })

  it('counts the gated rows it builds, widens every bar with more of them, and says so in the family line', () => {
    const b = baselineOf(Array.from({ length: 10 }, (_, d) => pipeDay(d)))
    const cand = pipeDay(10, 1.03)
    const judge = (gated: MetricKind[]) => compareToBaseline(b, cand, { gated, rows: 99 })
    const few = judge(['itl_p95', 'tput_at_target'])
    const many = judge(['itl_p95', 'tput_at_target', 'ttft_p95', 'tpot_p95', 'e2el_p95'])
    // The caller's `rows` is replaced by the count compare builds: 3 ITL points + 1 shape, then 3 × 4 + 1.
    expect(few.family).toEqual({ rows: 4, alpha: 0.01, rowLevel: 0.0025 })
    expect(many.family).toEqual({ rows: 13, alpha: 0.01, rowLevel: 0.01 / 13 })
    expect(few.reasons.at(-1)).toBe('judged 4 gated rows at 1 % false alarms per pull request: each row one-sided at 0.25 % (Bonferroni)')
    expect(many.reasons.at(-1)).toBe('judged 13 gated rows at 1 % false alarms per pull request: each row one-sided at 0.077 % (Bonferroni)')
    const itl = (v: typeof few) => v.rows.find((r) => r.key === 'itl_p95@64x16@c1')!
    expect(itl(many).bar_pct!).toBeGreaterThan(itl(few).bar_pct!)
    expect(itl(many).sigma_pct).toBe(itl(few).sigma_pct)
    // +2.9 % is below both bars: both pass.
    expect([few.verdict, many.verdict]).toEqual(['pass', 'pass'])
  })
})

describe('the drift prior has no step', () => {
  /** A quiet history of `k` refreshes: identical medians, runs ±0.3 % (logs). */
  const quiet = (k: number) => Array.from({ length: k }, () => [-0.003, 0, 0.003])

  it('gives a σ_diff that falls with every refresh from 1 to 10, with no jump at minHistory', () => {
    const sigma = Array.from({ length: 10 }, (_, i) => sigmaDiff(estimateNoise(quiet(i + 1), [-0.003, 0, 0.003], opts), 3).sigma)
    for (let i = 1; i < sigma.length; i++) expect(sigma[i]!).toBeLessThan(sigma[i - 1]!)
    // The step from 4 to 5 refreshes (minHistory) is no larger than the step before it.
    const ratio = (k: number) => sigma[k - 1]! / sigma[k - 2]!
    expect(ratio(5)).toBeGreaterThan(ratio(4))
    // The day term is the 2.5 % prior's 4 df blended with k − 1 df of zero spread.
    for (let k = 1; k <= 10; k++) {
      const n = estimateNoise(quiet(k), [0, 0, 0], opts)
      expect(n.day2).toBeCloseTo((4 * 0.025 ** 2) / (k - 1 + 4), 15)
      expect(n.dayDf).toBe(k - 1 + 4)
    }
  })

  it('never puts the day spread below what the history itself shows', () => {
    // Refresh medians alternating ±d around 0 (runs ±0.3 %): the data's own day variance is
    // the medians' spread less what run noise explains; the prior only ever adds to a smaller one.
    for (const d of [0.005, 0.01, 0.02, 0.03, 0.05]) {
      for (let k = 2; k <= 10; k++) {
        const h = Array.from({ length: k }, (_, i) => [-0.003, 0, 0.003].map((x) => x + (i % 2 === 0 ? d : -d)))
        const n = estimateNoise(h, [0, 0, 0], opts)
        const own = Math.max(0, clippedSd(h.map((r) => median(r))) ** 2 - varMedianFactor(3) * n.within2)
        expect(n.day2).toBeGreaterThanOrEqual(own)
        // A history that shows more than the prior is taken as measured.
        if (own >= 0.025 ** 2) expect(n.day2).toBe(own)
      }
    }
  })
})

describe('a blind row never passes', () => {
  it('is undecided with a tiny change when its MDC exceeds max_mdc_pct, and the verdict exits 1', () => {
    // One refresh: the priors alone give p95 ITL an MDC of 24 % and throughput 19.4 %, above 15 %.
    const v = compareToBaseline(baselineOf([dayResult(0)]), dayResult(10, 1.005))
    expect(v.verdict).toBe('undecided')
    expect(v.rows.filter((r) => r.gated).map((r) => [r.status, r.blind])).toEqual([
      ['undecided', true],
      ['undecided', true],
      ['undecided', true],
    ])
    expect(v.blind).toEqual(['p95 ITL 4096×512 c=1', 'p95 ITL 4096×512 c=16', 'throughput at target 4096×512'])
    // With gate.max_mdc_pct unset the limit is three times each row's tolerance (15 % at 5 %); the
    // verdict opens with the blind rows and what would give them power.
    expect(v.reasons[0]).toBe(
      'undecided and blind: p95 ITL 4096×512 c=1 (MDC 24.0 % > 15 %), p95 ITL 4096×512 c=16 (MDC 24.0 % > 15 %), throughput at target 4096×512 (MDC 19.4 % > 15 %) could not have shown a regression of the size its limit promises (gate.max_mdc_pct), so the check fails; more refreshes, more repeats or a reference command give the gate power',
    )
    expect(v.reasons[1]).toMatch(/^p95 ITL 4096×512 c=1: undecided — blind: .* is 24\.0 %, more than 15 %;/)
    expect(gateExit(v.verdict, DEFAULT_FAIL_ON)).toBe(1)
  })

  it('still calls a change beyond the bar with agreeing runs a regression', () => {
    const d = decideMetric(latency([[10, 10, 10]], times(13)), opts)
    expect(d.blind).toBe(true)
    expect(d.status).toBe('regression')
    expect(decideMetric(latency([[10, 10, 10]], times(7.5)), opts)).toMatchObject({ status: 'improvement', blind: true })
  })

  it('passes the same change once max_mdc_pct allows the row its MDC', () => {
    const d = decideMetric(latency([[10, 10, 10]], times(10.05)), { ...opts, maxMdcPct: 20 })
    expect(d).toMatchObject({ status: 'pass', blind: false })
  })
})
