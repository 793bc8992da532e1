import { describe, expect, it } from 'vitest'
import { compareToBaseline } from '../../src/gate/compare.js'
import { extractFigures } from '../../src/gate/extract.js'
import type { Baseline } from '../../src/gate/types.js'
import { appendRefresh } from '../../src/gate/refresh.js'
import type { ResultFile } from '../../src/types.js'
import { dayResult, makeResult } from './fixtures.js'

/** A baseline of ten refreshes (days 0–9), ITL 10/20 ms at c=1/16, 1000 tok/s at target. */
function history(days = 10): Baseline {
  let b: Baseline | null = null
  for (let d = 0; d < days; d++) b = appendRefresh(b, dayResult(d), { name: 'gate' })
  return b!
}

const row = (v: ReturnType<typeof compareToBaseline>, key: string) => v.rows.find((r) => r.key === key)!

describe('compareToBaseline', () => {
  it('passes an unchanged candidate with exit-0 semantics and no confirmation', () => {
    const v = compareToBaseline(history(), dayResult(10))
    expect(v.verdict).toBe('pass')
    expect(v.regressions).toEqual([])
    expect(v.confirm).toBeNull()
    expect(v.envChanges).toEqual([])
  })

  it('gates p95 ITL per concurrency and throughput at target per shape, and reports the rest', () => {
    const v = compareToBaseline(history(), dayResult(10))
    expect(v.rows.filter((r) => r.gated).map((r) => r.key)).toEqual(['itl_p95@4096x512@c1', 'itl_p95@4096x512@c16', 'tput_at_target@4096x512'])
    expect(v.rows.filter((r) => !r.gated).map((r) => r.kind)).toContain('ttft_p95')
    const itl = row(v, 'itl_p95@4096x512@c16')
    expect(itl).toMatchObject({ unit: 'ms', n_baseline: 30, n_candidate: 3, history: 10, status: 'pass' })
    expect(itl.bar_pct!).toBeGreaterThanOrEqual(5)
    expect(itl.mdc_pct!).toBeGreaterThan(itl.bar_pct!)
  })

  it('names the regressed metrics of a 15 % slowdown', () => {
    const v = compareToBaseline(history(), dayResult(10, 1.15))
    expect(v.verdict).toBe('regression')
    expect(v.regressions).toEqual(['p95 ITL 4096×512 c=1', 'p95 ITL 4096×512 c=16', 'throughput at target 4096×512'])
    const t = row(v, 'tput_at_target@4096x512')
    expect(t.delta_pct!).toBeCloseTo((1 / 1.15 - 1) * 100, 0)
    // Three gated rows at 0.33 % each: the t bar (+5.5 %) sits just above the 5 % tolerance.
    expect(v.reasons[0]).toBe('p95 ITL 4096×512 c=1: +14.9 %, beyond the bar of +5.5 %')
    expect(v.reasons.at(-1)).toBe('judged 3 gated rows at 1 % false alarms per pull request: each row one-sided at 0.33 % (Bonferroni)')
  })

  it('shows a 15 % speed-up as an improvement', () => {
    const v = compareToBaseline(history(), dayResult(10, 1 / 1.15))
    expect(v.verdict).toBe('improvement')
    expect(v.rows.filter((r) => r.gated).every((r) => r.status === 'improvement')).toBe(true)
  })

  it('is not comparable on a different GPU model, even with a regression', () => {
    const cand = dayResult(10, 1.2)
    cand.env.gpu.names = ['NVIDIA H100', 'NVIDIA H100']
    const v = compareToBaseline(history(), cand)
    expect(v.verdict).toBe('not_comparable')
    expect(v.reasons[0]).toBe('not comparable: GPU differs: baseline 2 × NVIDIA B200, candidate 2 × NVIDIA H100')
    expect(v.regressions).toEqual([])
  })

  it('is not comparable on a different GPU count, nor when the candidate shows no GPU where the baseline had some', () => {
    const more = dayResult(10)
    more.env.gpu.count = 4
    expect(compareToBaseline(history(), more).verdict).toBe('not_comparable')
    const unknown = dayResult(10)
    unknown.env.gpu = { ...unknown.env.gpu, names: [], count: 'unknown' }
    const v = compareToBaseline(history(), unknown)
    expect(v.verdict).toBe('not_comparable')
    expect(v.reasons[0]).toBe(
      'not comparable: the baseline ran on GPUs (2 × NVIDIA B200) and the candidate shows none (nvidia-smi saw no GPU, or the server ran on another machine): nothing shows it ran on the same GPUs',
    )
    expect(v.envChanges.map((c) => c.field)).toEqual(['GPU', 'GPU count'])
  })

  it('lists every environment change beside the verdict', () => {
    const cand = dayResult(10)
    cand.env.engine.version = '0.9.1'
    cand.env.gpu.driver_version = '575.0'
    cand.env.container_digest = 'sha256:bbbb'
    cand.env.model.revision = 'def456'
    expect(compareToBaseline(history(), cand).envChanges).toEqual([
      { field: 'driver', baseline: '570.1', candidate: '575.0', blame: 'host' },
      { field: 'engine', baseline: 'vllm 0.9.0', candidate: 'vllm 0.9.1', blame: 'repository' },
      { field: 'model revision', baseline: 'abc123', candidate: 'def456', blame: 'repository' },
      { field: 'container digest', baseline: 'sha256:aaaa', candidate: 'sha256:bbbb', blame: 'repository' },
    ])
  })

  it('is not comparable when the interactivity target differs', () => {
    const cand = dayResult(10)
    cand.target = { metric: 'tpot', percentile: 99, threshold_ms: 50 }
    const v = compareToBaseline(history(), cand)
    expect(v.verdict).toBe('not_comparable')
    expect(v.reasons[0]).toMatch(/interactivity target differs/)
  })

  it('is not comparable when the candidate measured points outside the baseline sweep', () => {
    const cand = makeResult({ itl: { 1: [10, 10, 10], 64: [30, 30, 30] } })
    expect(compareToBaseline(history(), cand).verdict).toBe('not_comparable')
  })

  it('is incomplete, never pass, when a gated point is missing', () => {
    const cand = makeResult({ itl: { 1: [10, 10.1, 9.9] } })
    const v = compareToBaseline(history(), cand)
    expect(v.verdict).toBe('incomplete')
    expect(row(v, 'itl_p95@4096x512@c16')).toMatchObject({ status: 'missing', candidate: null, n_candidate: 0 })
    expect(v.reasons).toContain('p95 ITL 4096×512 c=16: missing — candidate has no runs for this point')
  })

  it('is unmeasured, never pass, when fewer than two of three candidate runs are valid', () => {
    const cand = dayResult(10)
    for (const r of [1, 2]) cand.points[1]!.runs[r]!.validity = { valid: false, issues: [{ code: 'client_saturated', detail: 'ELU 0.99' }] }
    const v = compareToBaseline(history(), cand)
    expect(v.verdict).toBe('unmeasured')
    expect(row(v, 'itl_p95@4096x512@c16')).toMatchObject({ status: 'invalid', n_candidate: 1 })
    expect(row(v, 'itl_p95@4096x512@c16').notes).toContain('run 2 invalid (client_saturated)')
    // Throughput at target of repeats 1 and 2 rests on that point.
    expect(row(v, 'tput_at_target@4096x512').status).toBe('invalid')
    expect(v.reasons[0]).toMatch(/^unmeasured: a busy host: servegate's client could not keep up/)
  })

  it('decides on two valid runs of three: one invalid run is named but does not leave the row unmeasured', () => {
    const cand = dayResult(10)
    cand.points[1]!.runs[2]!.validity = { valid: false, issues: [{ code: 'client_saturated', detail: 'ELU 0.99' }] }
    const v = compareToBaseline(history(), cand)
    expect(row(v, 'itl_p95@4096x512@c16')).toMatchObject({ status: 'pass', n_candidate: 2 })
    expect(row(v, 'itl_p95@4096x512@c16').notes).toContain('run 2 invalid (client_saturated)')
    expect(v.verdict).toBe('pass')
  })

  it('keeps throughput at target decided when the invalid run lies past the crossing', () => {
    // p95 TPOT 10 → 20 → 80 → 200 ms: the 50 ms target is crossed between C = 16 and C = 64.
    const cand = makeResult({
      itl: { 1: [10, 10, 10], 16: [20, 20, 20], 64: [80, 80, 80], 256: [200, 200, 200] },
      run: (c, r) => (c === 256 && r === 2 ? { invalid: ['client_saturated'] } : {}),
    })
    const figures = extractFigures(cand).get('tput_at_target@4096x512')!
    expect(figures.map((f) => f.valid)).toEqual([true, true, true])
    const early = makeResult({
      itl: { 1: [10, 10, 10], 16: [20, 20, 20], 64: [80, 80, 80] },
      run: (c, r) => (c === 16 && r === 2 ? { invalid: ['client_saturated'] } : {}),
    })
    expect(
      extractFigures(early)
        .get('tput_at_target@4096x512')!
        .map((f) => f.valid),
    ).toEqual([true, true, false])
    // The first failing point itself sets the interpolation, so an invalid run there counts too.
    const atCrossing = makeResult({
      itl: { 1: [10, 10, 10], 16: [20, 20, 20], 64: [80, 80, 80] },
      run: (c, r) => (c === 64 && r === 0 ? { invalid: ['client_saturated'] } : {}),
    })
    expect(
      extractFigures(atCrossing)
        .get('tput_at_target@4096x512')!
        .map((f) => f.valid),
    ).toEqual([false, true, true])
  })

  it('keeps a regression shown by the valid runs even when another run is invalid', () => {
    const cand = dayResult(10, 1.3)
    cand.points[1]!.runs[2]!.validity = { valid: false, issues: [{ code: 'gpu_throttled', detail: 'x' }] }
    expect(compareToBaseline(history(), cand).verdict).toBe('regression')
  })

  it('is broken when the output tokens per request changed (different work, faster ITL)', () => {
    const cand = makeResult({
      itl: { 1: [9, 9, 9], 16: [18, 18, 18] },
      run: () => ({ outTokens: 400 }),
    })
    const v = compareToBaseline(history(), cand)
    expect(v.verdict).toBe('broken')
    expect(row(v, 'itl_p95@4096x512@c1').notes).toContain('4096x512@c1: output tokens per request changed from 512 to 400')
  })

  it('only gates what is configured, and uses configured tolerances', () => {
    const cand = dayResult(10)
    for (const p of cand.points) for (const r of p.runs) r.ttft_ms.p95 = 300
    expect(compareToBaseline(history(), cand).verdict).toBe('pass')
    const v = compareToBaseline(history(), cand, { gated: ['itl_p95', 'tput_at_target', 'ttft_p95'] })
    expect(v.verdict).toBe('regression')
    expect(v.regressions).toContain('p95 TTFT 4096×512 c=1')
    // A huge tolerance on ITL lets a 15 % slowdown of ITL through (throughput still regresses).
    const slow = compareToBaseline(history(), dayResult(10, 1.15), { tolerances: { itl_p95: 0.5 } })
    expect(slow.regressions).toEqual(['throughput at target 4096×512'])
  })

  it('takes tolerances from the baseline file when the caller gives none', () => {
    // +8 % is beyond the default 5 % bar, inside the file's 10 % (whose MDC, 12.6 %, is below max_mdc_pct: the rows may pass).
    expect(compareToBaseline(history(), dayResult(10, 1.08)).verdict).toBe('regression')
    const b = { ...history(), tolerances: { itl_p95: 0.1, tput_at_target: 0.1 } }
    const v = compareToBaseline(b, dayResult(10, 1.08))
    expect(v.verdict).toBe('pass')
    expect(row(v, 'itl_p95@4096x512@c1').bar_pct).toBeCloseTo(10, 10)
    expect(row(v, 'itl_p95@4096x512@c1').mdc_pct).toBeCloseTo(12.64, 2)
  })

  it('gives every row its tolerance, beside the bar and the MDC the blind limit is read against', () => {
    // The verdict tables print it (Tolerance / TOL); the default 5 %, or the baseline's own.
    const v = compareToBaseline(history(), dayResult(10))
    expect(v.rows.map((r) => r.tolerance_pct)).toEqual(v.rows.map(() => 5))
    const loose = compareToBaseline({ ...history(), tolerances: { itl_p95: 0.1, tput_at_target: 0.1 } }, dayResult(10))
    expect(row(loose, 'itl_p95@4096x512@c1').tolerance_pct).toBe(10)
  })

  it('treats a one-refresh baseline with its priors: blind, so undecided, never a pass', () => {
    const v = compareToBaseline(history(1), dayResult(10))
    // The 2.5 % drift prior over one refresh gives p95 ITL an MDC of 24 %, above max_mdc_pct (15 %).
    expect(v.verdict).toBe('undecided')
    expect(v.blind).toEqual(['p95 ITL 4096×512 c=1', 'p95 ITL 4096×512 c=16', 'throughput at target 4096×512'])
    expect(row(v, 'itl_p95@4096x512@c1').notes[0]).toMatch(/^blind: .* more refreshes \(1 so far\)/)
    expect(row(v, 'itl_p95@4096x512@c1').bar_pct!).toBeGreaterThan(8)
    // Three refreshes of the same history give it power: the unchanged candidate passes.
    expect(compareToBaseline(history(3), dayResult(10)).verdict).toBe('pass')
  })
})

describe('compareToBaseline on a host that changed since the baseline', () => {
  const upgraded = (factor: number): ResultFile => {
    const cand = dayResult(10, factor)
    cand.env.gpu.driver_version = '575.0'
    return cand
  }

  it('is unmeasured, never a regression charged to the PR, and says how to measure it', () => {
    const v = compareToBaseline(history(), upgraded(1.15))
    expect(v.verdict).toBe('unmeasured')
    expect(v.reasons[0]).toBe(
      "unmeasured: the host changed since the baseline (driver 570.1 → 575.0), so the stored baseline cannot tell the pull request's effect from the host's (against it the rows read regression: p95 ITL 4096×512 c=1, p95 ITL 4096×512 c=16, throughput at target 4096×512); refresh the baseline on this host, or set gate.reference_command so the gate measures the base engine beside the PR",
    )
    expect(v.regressions).toEqual([])
    expect(v.confirm).toBeNull()
    // The rows keep what they read, for the reader.
    expect(v.rows.filter((r) => r.gated).map((r) => r.status)).toEqual(['regression', 'regression', 'regression'])
  })

  it('turns a pass into unmeasured as well: the baseline certifies nothing on another host', () => {
    const v = compareToBaseline(history(), upgraded(1))
    expect(v.verdict).toBe('unmeasured')
    expect(v.reasons[0]).toMatch(
      /^unmeasured: the host changed since the baseline \(driver 570\.1 → 575\.0\), .* \(against it the rows read pass\); refresh the baseline/,
    )
  })

  it("keeps the rows' verdict with onHostChange 'judge' (the scheduled watch, which blames the host)", () => {
    const v = compareToBaseline(history(), upgraded(1.15), { onHostChange: 'judge' })
    expect(v.verdict).toBe('regression')
    expect(v.regressions).toEqual(['p95 ITL 4096×512 c=1', 'p95 ITL 4096×512 c=16', 'throughput at target 4096×512'])
  })

  it('keeps a broken candidate broken: that is not the host', () => {
    const cand = upgraded(1)
    cand.points[0]!.runs[0]!.failed = 5
    cand.points[0]!.runs[0]!.validity = { valid: false, issues: [{ code: 'requests_failed', detail: '5 failed' }] }
    expect(compareToBaseline(history(), cand).verdict).toBe('broken')
  })
})
