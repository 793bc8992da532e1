import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { decideMetric, mdcLimit, type MetricInput } from '../../src/gate/decide.js'
import { estimateNoise, sigmaDiff } from '../../src/gate/noise.js'
import { DEFAULT_GATE_OPTIONS } from '../../src/gate/options.js'
import { tQuantile } from '../../src/gate/stats.js'
import { wiggle } from './fixtures.js'

const opts = DEFAULT_GATE_OPTIONS
const flat = (v: number, refreshes: number, runs = 3): number[][] => Array.from({ length: refreshes }, () => Array(runs).fill(v))
/** Ten refreshes of realistic ±1 % wiggles around `base`. */
const noisy = (base: number): number[][] => Array.from({ length: 10 }, (_, d) => [0, 1, 2].map((r) => wiggle(base, d, r)))
const latency = (history: number[][], candidate: number[]): MetricInput => ({ history, candidate, higherIsBetter: false, tolerance: 0.05 })
const throughput = (history: number[][], candidate: number[]): MetricInput => ({ history, candidate, higherIsBetter: true, tolerance: 0.05 })

describe('estimateNoise', () => {
  it('uses the data where they are noisier than the prior, and the prior where there are none', () => {
    // One refresh, logs 0, ±0.04: s² = 0.0016, four times the 2 % within prior², so it is taken as
    // measured; its 2 df keep a fading share of the prior's 8: 8 · (0.0004 / 0.0016)² = 0.5.
    // No day-to-day data, so day σ² is the one 2.5 % drift prior: 0.000625, worth minHistory − 1 = 4 df.
    const n = estimateNoise([[0, 0.04, -0.04]], [0, 0, 0], opts)
    expect(n.within2).toBeCloseTo(0.0016, 10)
    expect(n.withinDf).toBeCloseTo(2.5, 10)
    expect(n.day2).toBeCloseTo(0.000625, 10)
    expect(n.dayDf).toBe(4)
    // The quiet candidate uses the history's within spread and its df.
    expect(n.candidateWithin2).toBe(n.within2)
    expect(n.candidateDf).toBe(n.withinDf)
    // Centre is that single refresh's median: var = day2 + Var(median of 3) · within2.
    expect(n.center2).toBeCloseTo(0.000625 + 0.4487 * 0.0016, 10)
    // σ_diff² = day2 · (1 + 1) + 0.4487 · within (candidate) + 0.4487 · within (centre), with Welch–Satterthwaite df.
    const terms = [
      { v: 2 * 0.000625, df: 4 },
      { v: 0.4487 * 0.0016, df: 2.5 },
      { v: 0.4487 * 0.0016, df: 2.5 },
    ]
    const total = terms.reduce((a, t) => a + t.v, 0)
    const sd = sigmaDiff(n, 3)
    expect(sd.sigma).toBeCloseTo(Math.sqrt(total), 10)
    expect(sd.df).toBeCloseTo(total ** 2 / terms.reduce((a, t) => a + t.v ** 2 / t.df, 0), 8)
  })

  it("keeps all of the prior's df where the data meet it, and lets them fade above it: no step", () => {
    // Logs 0, ±0.02: s² = 0.0004, the within prior² itself: the blend and the data agree, on 2 + 8 df.
    const at = estimateNoise([[0, 0.02, -0.02]], [0, 0, 0], opts)
    expect(at.within2).toBeCloseTo(0.0004, 12)
    expect(at.withinDf).toBeCloseTo(10, 10)
    // Just below and just above the prior, the df differ by a hair.
    const below = estimateNoise([[0, 0.01998, -0.01998]], [0, 0, 0], opts)
    const above = estimateNoise([[0, 0.02002, -0.02002]], [0, 0, 0], opts)
    expect(below.withinDf).toBe(10)
    expect(above.withinDf).toBeCloseTo(2 + 8 * (0.0004 / 0.02002 ** 2) ** 2, 10)
    expect(below.withinDf - above.withinDf).toBeLessThan(0.05)
    // Far above, almost only the data's own df remain.
    expect(estimateNoise([[0, 0.2, -0.2]], [0, 0, 0], opts).withinDf).toBeCloseTo(2.0008, 4)
  })

  it('blends a too-quiet history with the prior by degrees of freedom', () => {
    // Ten identical refreshes: 20 within df of zero vs a prior worth 8 df of 0.02²;
    // 9 day df of zero vs the drift prior worth 4 df of 0.025².
    const n = estimateNoise(flat(0, 10), [0, 0, 0], opts)
    expect(n.within2).toBeCloseTo((8 * 0.0004) / 28, 12)
    expect(n.withinDf).toBe(28)
    expect(n.day2).toBeCloseTo((4 * 0.000625) / 13, 12)
    expect(n.dayDf).toBe(13)
  })

  it('trusts a candidate whose runs spread far wider than the history says runs do', () => {
    const n = estimateNoise(flat(0, 10), [0, 0.1, 0.2], opts)
    expect(n.candidateWithin2).toBeCloseTo(0.01, 12)
    expect(n.candidateWithin2).toBeGreaterThan(n.within2)
    // The wider spread is a protective inflation: it keeps the history's 28 df, not the candidate's own 2,
    // whose t quantile would blind the row outright.
    expect(n.candidateDf).toBe(n.withinDf)
    expect(n.candidateDf).toBe(28)
  })
})

describe('decideMetric', () => {
  it('passes an unchanged candidate', () => {
    const d = decideMetric(latency(noisy(10), [10.05, 9.9, 10.1]), opts)
    expect(d.status).toBe('pass')
    expect(d.nBaseline).toBe(30)
    expect(d.history).toBe(10)
  })

  it('flags a 15 % latency rise as a regression', () => {
    const d = decideMetric(latency(noisy(10), [11.5, 11.6, 11.4]), opts)
    expect(d.status).toBe('regression')
    expect(d.d).toBeCloseTo(Math.log(11.5 / d.baseline!), 10)
  })

  it('orients throughput: a fall is a regression, a rise an improvement', () => {
    expect(decideMetric(throughput(noisy(1000), [850, 860, 840]), opts).status).toBe('regression')
    expect(decideMetric(throughput(noisy(1000), [1150, 1160, 1140]), opts).status).toBe('improvement')
  })

  it('orients latency: a fall is an improvement', () => {
    expect(decideMetric(latency(noisy(10), [8.5, 8.6, 8.4]), opts).status).toBe('improvement')
  })

  it('with zero variance the bar is the tolerance itself', () => {
    const d = decideMetric(latency(flat(10, 10), [10.6, 10.6, 10.6]), opts)
    expect(d.status).toBe('regression')
    expect(d.bar).toBeCloseTo(Math.log(1.05), 12)
    expect(decideMetric(latency(flat(10, 10), [10, 10, 10]), opts)).toMatchObject({ status: 'pass', d: 0 })
  })

  it('closes the band on the last look: a change below the bar passes', () => {
    // Zero-variance history: bar ln 1.05 = 4.88 %; nothing follows this look, so +4 % passes.
    const d = decideMetric(latency(flat(10, 10), [10.4, 10.4, 10.4]), opts)
    expect(d).toMatchObject({ status: 'pass', margin: 0, blind: false, extraRepeats: null })
    expect(d.bar).toBeCloseTo(Math.log(1.05), 12)
  })

  it('is undecided when the median is beyond the bar but the runs disagree', () => {
    // Wide but consistent history (±5 % runs), so the candidate's spread is not abnormal.
    const history = Array.from({ length: 10 }, () => [9.5, 10, 10.5])
    const d = decideMetric(latency(history, [11.5, 11.5, 9.95]), opts)
    expect(d.d!).toBeGreaterThan(d.bar!)
    expect(d.status).toBe('undecided')
    expect(d.notes).toContain('only 2 of 3 runs are worse than the baseline')
    // Five runs tolerate one dissenter.
    expect(d.extraRepeats).toBe(2)
  })

  it('widens the bar with a short history, so the same change is not yet a regression', () => {
    const long = decideMetric(latency(flat(10, 10), [10.8, 10.8, 10.8]), opts)
    const short = decideMetric(latency(flat(10, 1), [10.8, 10.8, 10.8]), opts)
    expect(long.status).toBe('regression')
    // One refresh: priors only (2.5 % drift worth 4 df, within 2 % blended with 2 df of zero: 0.00032 over 10 df).
    const day2 = 0.000625
    const within2 = (8 * 0.0004) / 10
    const terms = [
      { v: 2 * day2, df: 4 },
      { v: 0.4487 * within2, df: 10 },
      { v: 0.4487 * within2, df: 10 },
    ]
    const total = terms.reduce((a, t) => a + t.v, 0)
    const df = total ** 2 / terms.reduce((a, t) => a + t.v ** 2 / t.df, 0)
    expect(short.sigma).toBeCloseTo(Math.sqrt(total), 6)
    expect(short.df).toBeCloseTo(df, 6)
    expect(short.bar).toBeCloseTo(tQuantile(0.99, df) * Math.sqrt(total), 6)
    // +8 % lies below that bar (12.3 %), and the MDC (19.7 %) exceeds max_mdc_pct: blind, so undecided, never a pass.
    expect(short).toMatchObject({ status: 'undecided', blind: true })
    expect(short.notes).toEqual([
      'blind: the smallest change this row would catch 90 % of the time is 19.7 %, more than 15 %; more repeats, more refreshes (1 so far) or a reference command would give it power',
    ])
  })

  it('with gate.max_mdc_pct unset, calls a row blind above three times its own tolerance, and says so', () => {
    // One refresh: the priors give this row an MDC of 19.7 % at any tolerance.
    const at = (tolerance: number, maxMdcPct: number | null = null) =>
      decideMetric({ ...latency([[10, 10, 10]], [10.05, 10.05, 10.05]), tolerance }, { ...opts, maxMdcPct })
    expect(opts.maxMdcPct).toBeNull()
    expect(at(0.05)).toMatchObject({ status: 'undecided', blind: true })
    expect(at(0.05).notes).toEqual([
      'blind: the smallest change this row would catch 90 % of the time is 19.7 %, more than 15 %; more repeats, more refreshes (1 so far) or a reference command would give it power',
    ])
    expect(at(0.065).notes[0]).toMatch(/is 19\.7 %, more than 19\.5 %;/)
    // A loosened 10 % tolerance may have an MDC up to 30 %: the same row can see, and passes.
    expect(at(0.1)).toMatchObject({ status: 'pass', blind: false, notes: [] })
    // A set gate.max_mdc_pct holds whatever the tolerance.
    expect(at(0.1, 15)).toMatchObject({ status: 'undecided', blind: true })
    expect(at(0.05, 20)).toMatchObject({ status: 'pass', blind: false })
    expect(mdcLimit({ maxMdcPct: null }, 0.033)).toBe(9.9)
    expect(mdcLimit({ maxMdcPct: 25 }, 0.05)).toBe(25)
  })

  it('is missing without candidate runs or without baseline runs', () => {
    expect(decideMetric(latency(noisy(10), []), opts)).toMatchObject({ status: 'missing', notes: ['no valid candidate runs'] })
    expect(decideMetric(latency([[], []], [10]), opts)).toMatchObject({ status: 'missing', notes: ['no valid baseline runs'] })
  })

  it('treats an unreachable target (zero throughput) as a regression, not an error', () => {
    const d = decideMetric(throughput(noisy(1000), [0, 0, 0]), opts)
    expect(d.status).toBe('regression')
    expect(d.candidate).toBe(0)
  })

  it('takes the baseline centre from the newest refreshes only', () => {
    const history = [...flat(20, 5), ...flat(10, 10)]
    const d = decideMetric(latency(history, [10, 10, 10]), opts)
    expect(d.baseline).toBeCloseTo(10, 10)
    expect(d.nBaseline).toBe(30)
  })

  it('depends only on ratios: scaling every figure by one factor never changes the decision', () => {
    const values = fc.array(fc.double({ min: 0.8, max: 1.25, noNaN: true }), { minLength: 1, maxLength: 5 })
    fc.assert(
      fc.property(
        fc.array(values, { minLength: 1, maxLength: 10 }),
        values,
        fc.double({ min: 0.01, max: 1000, noNaN: true }),
        fc.boolean(),
        (hist, cand, scale, hib) => {
          const a = decideMetric({ history: hist, candidate: cand, higherIsBetter: hib, tolerance: 0.05 }, opts)
          const b = decideMetric(
            { history: hist.map((r) => r.map((x) => x * scale)), candidate: cand.map((x) => x * scale), higherIsBetter: hib, tolerance: 0.05 },
            opts,
          )
          return a.status === b.status
        },
      ),
      { numRuns: 300, seed: 7 },
    )
  })

  it('mirrors orientation: a latency regression read as a throughput is an improvement or a pass, never a regression', () => {
    const values = fc.array(fc.double({ min: 0.8, max: 1.25, noNaN: true }), { minLength: 1, maxLength: 5 })
    fc.assert(
      fc.property(fc.array(values, { minLength: 1, maxLength: 10 }), values, (hist, cand) => {
        const lat = decideMetric({ history: hist, candidate: cand, higherIsBetter: false, tolerance: 0.05 }, opts)
        const tput = decideMetric({ history: hist, candidate: cand, higherIsBetter: true, tolerance: 0.05 }, opts)
        if (lat.status === 'regression') return tput.status === 'improvement'
        if (tput.status === 'regression') return lat.status === 'improvement'
        return true
      }),
      { numRuns: 300, seed: 11 },
    )
  })
})
