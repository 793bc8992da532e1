import { describe, expect, it } from 'vitest'
import { bracketForResult } from '../../src/config/placement.js'
import { resolveConfig } from '../../src/config/resolve.js'
import { applyBracket, bracketPlacement } from '../../src/gate/bracket.js'
import { compareToBaseline } from '../../src/gate/compare.js'
import { DEFAULT_FAIL_ON, gateExit } from '../../src/gate/outcome.js'
import type { Baseline } from '../../src/gate/types.js'
import { appendRefresh } from '../../src/gate/refresh.js'
import type { ResultFile } from '../../src/types.js'
import { pipelineResult, wiggle } from './fixtures.js'

// A batching-like engine: the per-chunk gap (p95 TPOT, one token a chunk) grows with load and
// crosses the 50 ms target between C = 8 (32 ms) and C = 16 (56 ms).
const LIST = [1, 2, 4, 8, 16, 32]
const curve = (c: number): number => 8 + 3 * c
const SHAPE = { input_len: 64, output_len: 16 }

function day(d: number, factor: number, concurrency: number[], config: Record<string, unknown> = {}, skip?: (c: number, r: number) => boolean): ResultFile {
  return pipelineResult({
    shape: SHAPE,
    concurrency,
    repeats: 3,
    itl: (c, r) => wiggle(curve(c), d, r) * factor,
    env: (e) => {
      e.finished_at = `2025-01-${String(d + 1).padStart(2, '0')}T01:00:00.000Z`
    },
    config,
    ...(skip ? { skip } : {}),
  })
}

/** Five refreshes of the whole list, through the store as `servegate baseline update` appends them. */
function history(): Baseline {
  let b: Baseline | null = null
  for (let d = 0; d < 5; d++) b = appendRefresh(b, day(d, 1, LIST), { name: 'gate' })
  return b!
}

/** The sweep config a PR resolves, bracketed against the baseline by the same function the CLI and the Action call. */
function bracketed(baseline: Baseline, itl = '1') {
  const cfg = resolveConfig({
    file: { sweeps: { gate: { shapes: [SHAPE], concurrency: LIST, placement: 'bracket', itl_concurrency: itl.split(',').map(Number) } } },
    filePath: 'servegate.yaml',
    flags: { sweep: 'gate' },
    env: {},
  })
  return applyBracket(cfg, baseline, 'test').cfg
}

/** A candidate sweep run with the bracket in force: its points, and its config recording the placement. */
function candidate(baseline: Baseline, factor: number, skip?: (c: number, r: number) => boolean): ResultFile {
  const cfg = bracketed(baseline)
  return day(7, factor, cfg.concurrency, { concurrency: cfg.concurrency, placement: bracketForResult(cfg.bracket!) }, skip)
}

const tput = (v: ReturnType<typeof compareToBaseline>) => v.rows.find((r) => r.kind === 'tput_at_target')!

describe('a bracketed candidate against a full-list baseline', () => {
  const baseline = history()

  it('runs the two concurrencies around the crossing plus the ITL concurrency', () => {
    const cfg = bracketed(baseline)
    expect(cfg.concurrency).toEqual([1, 8, 16])
    expect(cfg.bracket!.shapes['64x16']).toMatchObject({ below: 8, above: 16, concurrency: [1, 8, 16] })
  })

  it('passes an unchanged engine, with rows only for the points it planned', () => {
    const v = compareToBaseline(baseline, candidate(baseline, 1))
    expect(v.verdict).toBe('pass')
    expect(v.rows.filter((r) => r.kind === 'itl_p95').map((r) => r.key)).toEqual(['itl_p95@64x16@c1', 'itl_p95@64x16@c8', 'itl_p95@64x16@c16'])
    expect(tput(v).status).toBe('pass')
    expect(gateExit(v.verdict, DEFAULT_FAIL_ON)).toBe(0)
  })

  it('interpolates throughput at target from the bracket exactly as the full sweep does', () => {
    const full = day(7, 1, LIST)
    const narrow = candidate(baseline, 1)
    expect(narrow.at_target[0]!.runs).toEqual(full.at_target[0]!.runs)
  })

  it('calls a 15 % slower engine a regression, throughput at target included', () => {
    const v = compareToBaseline(baseline, candidate(baseline, 1.15))
    expect(v.verdict).toBe('regression')
    expect(tput(v).status).toBe('regression')
    expect(gateExit(v.verdict, DEFAULT_FAIL_ON)).toBe(1)
  })

  it('fails closed when a faster engine moves the crossing above the bracket (never a pass)', () => {
    // 40 % faster: C = 16 holds the target, so the figure is only a lower bound at C = 16.
    const v = compareToBaseline(baseline, candidate(baseline, 0.6))
    expect(tput(v).status).toBe('incomplete')
    expect(tput(v).notes.join(' ')).toMatch(/crossing moved above the bracket.*64x16@c16/)
    expect(v.verdict).toBe('incomplete')
    expect(gateExit(v.verdict, DEFAULT_FAIL_ON)).toBe(1)
  })

  it('fails closed when a much slower engine moves the crossing below the bracket', () => {
    // 70 % slower: C = 8 already misses, so the full sweep would interpolate between C = 4 and 8.
    const v = compareToBaseline(baseline, candidate(baseline, 1.7))
    expect(tput(v).status).toBe('incomplete')
    expect(tput(v).notes.join(' ')).toMatch(/crossing moved below the bracket.*64x16@c8/)
    expect(v.verdict).not.toBe('pass')
    expect(gateExit(v.verdict, DEFAULT_FAIL_ON)).toBe(1)
  })

  it('is incomplete when a planned bracket point was not measured', () => {
    const v = compareToBaseline(
      baseline,
      candidate(baseline, 1, (c, r) => c === 16 && r === 2),
    )
    expect(v.verdict).toBe('incomplete')
    expect(tput(v).notes.join(' ')).toMatch(/measured c=1, 8 of 1, 8, 16/)
  })

  it('keeps a narrower list without a recorded bracket not comparable, as before', () => {
    const v = compareToBaseline(baseline, day(7, 1, [1, 8, 16]))
    expect(v.verdict).toBe('not_comparable')
    expect(v.reasons.join(' ')).toMatch(/concurrency: baseline 1, 2, 4, 8, 16, 32, candidate 1, 8, 16/)
  })

  it('keeps a bracketed candidate with a point the baseline lacks not comparable', () => {
    const cfg = bracketed(baseline)
    // As if its ITL point were C = 3, which the baseline never measured.
    const { bracket } = bracketPlacement(baseline, { ...cfg, concurrency: [...LIST, 3], itlConcurrency: [3] })
    const v = compareToBaseline(baseline, day(7, 1, [3, 8, 16], { concurrency: [3, 8, 16], placement: bracketForResult(bracket) }))
    expect(v.verdict).toBe('not_comparable')
    expect(v.reasons.join(' ')).toMatch(/outside the baseline's gated sweep: 64x16@c3/)
  })

  it('refuses a bracketed sweep as a baseline refresh', () => {
    expect(() => appendRefresh(baseline, candidate(baseline, 1), { source: 'pr.json' })).toThrow(/pr.json is a bracketed sweep \(64x16 at c=1, 8, 16 only\)/)
  })
})

describe('a baseline without a bracket', () => {
  const cfgFor = (_baseline: Baseline) =>
    resolveConfig({
      file: { sweeps: { gate: { shapes: [SHAPE], concurrency: LIST, placement: 'bracket' } } },
      filePath: 'servegate.yaml',
      flags: { sweep: 'gate' },
      env: {},
    })

  it('falls back to the whole list with one note when the baseline holds the target everywhere', () => {
    const fast = appendRefresh(null, pipelineResult({ shape: SHAPE, concurrency: LIST, repeats: 3, itl: () => 12 }), { name: 'fast' })
    const { cfg, notes } = applyBracket(cfgFor(fast), fast, 'test')
    expect(cfg.concurrency).toEqual(LIST)
    expect(cfg.bracket!.shapes['64x16']).toMatchObject({ concurrency: LIST, below: null, above: null })
    expect(notes).toEqual([
      '64x16: no bracket (the baseline holds p95 TPOT ≤ 50 ms at every concurrency up to c=32); running the whole list 1, 2, 4, 8, 16, 32',
    ])
  })

  it('falls back when the baseline stores no per-point figure of the target percentile', () => {
    const target = { metric: 'tpot' as const, percentile: 99, threshold_ms: 50 }
    const p99 = appendRefresh(null, pipelineResult({ shape: SHAPE, concurrency: LIST, repeats: 3, itl: (c) => curve(c), target }), { name: 'p99' })
    const cfg = { ...cfgFor(p99), target: { metric: 'tpot' as const, percentile: 99, thresholdMs: 50 } }
    const { notes } = applyBracket(cfg, p99, 'test')
    expect(notes).toEqual(['64x16: no bracket (the baseline stores no per-point p99 TPOT (only p95 figures)); running the whole list 1, 2, 4, 8, 16, 32'])
  })

  it('refuses to bracket against a baseline measured for another target', () => {
    const baseline = history()
    const cfg = { ...cfgFor(baseline), target: { metric: 'tpot' as const, percentile: 95, thresholdMs: 30 } }
    expect(() => applyBracket(cfg, baseline, '--bracket-baseline b.json')).toThrow(
      /--bracket-baseline b.json: cannot bracket against baseline gate: its target is p95 TPOT ≤ 50 ms, the sweep's p95 TPOT ≤ 30 ms/,
    )
  })
})

describe('a PR cannot narrow the gated points with its own list (case 5)', () => {
  // A baseline measured at c=1, 2, 4 that holds the target everywhere: no crossing, so the
  // placement rule runs the whole list — and a PR whose own list is c=1, 4 ran only those.
  const SMALL = [1, 2, 4]
  let small: Baseline | null = null
  for (let d = 0; d < 5; d++) small = appendRefresh(small, day(d, 1, SMALL), { name: 'gate' })
  const prCfg = (concurrency: number[]) =>
    applyBracket(
      resolveConfig({
        file: { sweeps: { gate: { shapes: [SHAPE], concurrency, placement: 'bracket' } } },
        filePath: 'servegate.yaml',
        flags: { sweep: 'gate' },
        env: {},
      }),
      small!,
      'test',
    ).cfg
  const run = (concurrency: number[], factor = 1) => {
    const cfg = prCfg(concurrency)
    return { cfg, result: day(7, factor, cfg.concurrency, { concurrency: cfg.concurrency, placement: bracketForResult(cfg.bracket!) }) }
  }

  it('a candidate that left c=2 out is incomplete, its p95 ITL at c=2 a missing row, never a pass', () => {
    const { cfg, result } = run([1, 4])
    expect(cfg.bracket!.shapes['64x16']).toMatchObject({ concurrency: [1, 4], below: null, above: null })
    const v = compareToBaseline(small!, result)
    expect(v.verdict).toBe('incomplete')
    expect(gateExit(v.verdict, DEFAULT_FAIL_ON)).toBe(1)
    expect(v.rows.find((r) => r.key === 'itl_p95@64x16@c2')!.status).toBe('missing')
    expect(tput(v).status).toBe('incomplete')
    expect(v.reasons).toEqual([
      'p95 ITL 64×16 c=2: missing — candidate has no runs for this point',
      expect.stringMatching(/^throughput at target 64×16: incomplete — .*repeat 0: the curve stopped early \(measured c=1, 4 of 1, 2, 4\)/),
      // The missing c=2 row still counts among the gated rows the PR's false-alarm rate is split over.
      'judged 4 gated rows at 1 % false alarms per pull request: each row one-sided at 0.25 % (Bonferroni)',
    ])
  })

  it("with the base's list (what the Action now runs) the rule places every point, and an unchanged engine passes", () => {
    const { cfg, result } = run(SMALL)
    expect(cfg.concurrency).toEqual(SMALL)
    expect(compareToBaseline(small!, result).verdict).toBe('pass')
  })

  it('a recorded bracket the rule would not place narrows nothing, even around a real crossing', () => {
    const baseline = history()
    const cfg = bracketed(baseline)
    // The rule places c=1, 8, 16; a plan that claims the same crossing but drops c=1 is the candidate's own.
    const forged = { ...cfg.bracket!, shapes: { '64x16': { ...cfg.bracket!.shapes['64x16']!, concurrency: [8, 16] } }, itlConcurrency: [1] }
    const v = compareToBaseline(baseline, day(7, 1, [8, 16], { concurrency: [8, 16], placement: bracketForResult(forged) }))
    expect(v.verdict).toBe('incomplete')
    expect(v.rows.filter((r) => r.kind === 'itl_p95').map((r) => `${r.key} ${r.status}`)).toEqual(
      LIST.map((c) => `itl_p95@64x16@c${c} ${[8, 16].includes(c) ? 'pass' : 'missing'}`),
    )
  })
})
