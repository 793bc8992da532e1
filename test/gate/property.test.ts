import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { UsageError } from '../../src/errors.js'
import { compareToBaseline } from '../../src/gate/compare.js'
import type { Baseline, Verdict, VerdictKind } from '../../src/gate/types.js'
import { renderVerdictMarkdown } from '../../src/report/verdict-markdown.js'
import { renderVerdictText } from '../../src/report/verdict-text.js'
import { appendRefresh } from '../../src/gate/refresh.js'
import { parseResult } from '../../src/store/result-file.js'
import type { ResultFile } from '../../src/types.js'
import { pipeDay, type PipeSpec } from './fixtures.js'

// The whole gate as a property: candidates built through the summarizer (as a sweep
// builds them), each with one defect of a kind drawn at random, never pass.

let baseline: Baseline | null = null
for (let d = 0; d < 3; d++) baseline = appendRefresh(baseline, pipeDay(d), { name: 'gate' })
const BASE = baseline!
const CONCS = [1, 4, 16]
const PROMPTS = 12

type Defect =
  | { kind: 'failed'; c: number; r: number; share: number }
  | { kind: 'early_stop'; c: number; r: number; out: number }
  | { kind: 'missing_repeat'; r: number }
  | { kind: 'missing_point'; c: number }
  | { kind: 'cut_curve'; from: number; r: number }
  | { kind: 'setting'; config: Record<string, unknown> }
  | { kind: 'target'; threshold: number; percentile: number }

const conc = fc.constantFrom(...CONCS)
const rep = fc.integer({ min: 0, max: 2 })
const defect: fc.Arbitrary<Defect> = fc.oneof(
  // 2 % of the run's requests up to all of them (a dead point): beyond the 1 % budget.
  fc.record({ kind: fc.constant('failed' as const), c: conc, r: rep, share: fc.double({ min: 0.02, max: 1, noNaN: true }) }),
  fc.record({ kind: fc.constant('early_stop' as const), c: conc, r: rep, out: fc.integer({ min: 1, max: 14 }) }),
  fc.record({ kind: fc.constant('missing_repeat' as const), r: rep }),
  fc.record({ kind: fc.constant('missing_point' as const), c: conc }),
  fc.record({ kind: fc.constant('cut_curve' as const), from: fc.constantFrom(4, 16), r: rep }),
  fc.record({
    kind: fc.constant('setting' as const),
    config: fc.constantFrom<Record<string, unknown>>({ server: { api: 'chat' } }, { model: 'org/other-model' }, { warmup: 2 }, { prompts_per_concurrency: 11 }),
  }),
  fc.record({ kind: fc.constant('target' as const), threshold: fc.constantFrom(40, 60), percentile: fc.constantFrom(95, 99) }),
)

const EXPECTED: Record<Defect['kind'], VerdictKind> = {
  failed: 'broken',
  early_stop: 'broken',
  missing_repeat: 'incomplete',
  missing_point: 'incomplete',
  cut_curve: 'incomplete',
  setting: 'not_comparable',
  target: 'not_comparable',
}

function candidate(day: number, factor: number, d: Defect | null): ResultFile {
  const over: Partial<PipeSpec> = {}
  if (d?.kind === 'failed') over.run = (c, r) => (c === d.c && r === d.r ? { failed: Math.max(1, Math.round(d.share * c * PROMPTS)) } : {})
  if (d?.kind === 'early_stop') over.run = (c, r) => (c === d.c && r === d.r ? { outTokens: d.out } : {})
  if (d?.kind === 'missing_repeat') over.skip = (_c, r) => r === d.r
  if (d?.kind === 'missing_point') over.skip = (c) => c === d.c
  if (d?.kind === 'cut_curve') over.skip = (c, r) => r === d.r && c >= d.from
  if (d?.kind === 'setting') over.config = d.config
  if (d?.kind === 'target') over.target = { metric: 'tpot', percentile: d.percentile, threshold_ms: d.threshold }
  return pipeDay(day, factor, over)
}

/** Every number anywhere in the verdict is finite (or null), and no rendering prints NaN or Infinity. */
function assertPrintable(v: Verdict): void {
  const walk = (x: unknown, path: string): void => {
    if (typeof x === 'number') expect(Number.isFinite(x), `${path} = ${x}`).toBe(true)
    else if (Array.isArray(x)) x.forEach((y, i) => walk(y, `${path}[${i}]`))
    else if (typeof x === 'object' && x !== null) for (const [k, y] of Object.entries(x)) walk(y, `${path}.${k}`)
  }
  walk(v, 'verdict')
  for (const text of [renderVerdictText(v), renderVerdictMarkdown(v), JSON.stringify(v)]) {
    expect(text).not.toMatch(/NaN|Infinity/)
  }
}

describe('the gate as a property', () => {
  it('passes clean candidates of any day', () => {
    fc.assert(
      fc.property(fc.integer({ min: 3, max: 12 }), (day) => {
        const v = compareToBaseline(BASE, candidate(day, 1, null))
        expect(v.verdict, v.reasons.join('\n')).toBe('pass')
        assertPrintable(v)
      }),
      { numRuns: 10 },
    )
  })

  it('never passes a candidate with a defect, whatever its speed, and blames the defect', () => {
    fc.assert(
      fc.property(defect, fc.integer({ min: 3, max: 12 }), fc.double({ min: 0.6, max: 1.5, noNaN: true }), (d, day, factor) => {
        const v = compareToBaseline(BASE, candidate(day, factor, d))
        expect(['pass', 'improvement'], `${JSON.stringify(d)} ×${factor}: ${v.reasons.join('; ')}`).not.toContain(v.verdict)
        assertPrintable(v)
        // Near the baseline's speed nothing outranks the defect's own blame.
        const near = compareToBaseline(BASE, candidate(day, 1, d))
        expect(near.verdict, `${JSON.stringify(d)}: ${near.reasons.join('; ')}`).toBe(EXPECTED[d.kind])
        assertPrintable(near)
      }),
      { numRuns: 70 },
    )
  })

  it('prints only finite numbers for zero throughput at target on either side', () => {
    let never: Baseline | null = null
    for (let d = 0; d < 3; d++) never = appendRefresh(never, pipeDay(d, 1, { itl: () => 60 }), {})
    for (const [b, c] of [
      [never!, pipeDay(5, 1, { itl: () => 60 })],
      [never!, pipeDay(5)],
      [BASE, pipeDay(5, 1, { itl: () => 60 })],
    ] as const) {
      const v = compareToBaseline(b, c)
      assertPrintable(v)
      expect(v.confirm).toBeNull()
    }
  })

  it('rejects a non-finite or negative latency, and a TTFT or E2EL of 0, when the result is read (exit 2, naming the field)', () => {
    const text = JSON.stringify(pipeDay(3))
    const fields = ['ttft_ms', 'tpot_ms', 'itl_ms', 'e2el_ms', 'itl_per_token_ms'] as const
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 2 }),
        fc.integer({ min: 0, max: 2 }),
        fc.oneof(
          fc.tuple(fc.constantFrom(...fields), fc.constantFrom('-3.5', '1e999', '-1e999')),
          fc.tuple(fc.constantFrom('ttft_ms' as const, 'e2el_ms' as const), fc.constant('0')),
        ),
        fc.constantFrom('p50', 'p95', 'p99', 'mean'),
        (pi, ri, [field, bad], stat) => {
          const json = JSON.parse(text) as { points: Array<{ runs: Array<Record<string, Record<string, number>>> }> }
          // Mark the one statistic, then write the bad number in its place as the file would hold it.
          json.points[pi]!.runs[ri]![field]![stat] = 0
          const edited = JSON.parse(JSON.stringify(json).replace(new RegExp(`("${field}":\\{[^}]*"${stat}":)0([,}])`), `$1${bad}$2`)) as unknown
          let err: unknown
          try {
            parseResult(edited, 'cand.json')
          } catch (e) {
            err = e
          }
          expect(err).toBeInstanceOf(UsageError)
          expect((err as Error).message).toMatch(new RegExp(`^cand\\.json is not a valid servegate result file:[\\s\\S]*${field}\\.${stat}`))
        },
      ),
      { numRuns: 40 },
    )
  })
})
