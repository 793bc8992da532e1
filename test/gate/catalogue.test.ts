import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { atTargetForResult } from '../../src/analysis/at-target.js'
import { compareToBaseline } from '../../src/gate/compare.js'
import { DEFAULT_FAIL_ON, gateExit } from '../../src/gate/outcome.js'
import { optionsFromGateSettings } from '../../src/gate/settings.js'
import type { Baseline, GateOptions, VerdictKind } from '../../src/gate/types.js'
import { appendRefresh } from '../../src/gate/refresh.js'
import { parseResult } from '../../src/store/result-file.js'
import type { ResultFile, RunResult } from '../../src/types.js'

// The catalogue: real sweeps against the simulator, each with one thing wrong, written by
// `npx tsx scripts/gate-catalogue.ts` (see its header). Baselines are built from its refreshes
// with the store's own appendRefresh, as `servegate baseline update` builds them.
const DIR = join(import.meta.dirname, '..', 'fixtures', 'gate-catalogue')
const results = new Map<string, ResultFile>()
for (const f of readdirSync(DIR)
  .filter((x) => x.endsWith('.json'))
  .sort()) {
  results.set(f.replace(/\.json$/, ''), parseResult(JSON.parse(readFileSync(join(DIR, f), 'utf8')), f))
}
const get = (name: string): ResultFile => structuredClone(results.get(name)!)

function baselineOf(...names: string[]): Baseline {
  let b: Baseline | null = null
  for (const n of names) b = appendRefresh(b, get(n), { name: 'catalogue' })
  return b!
}

const STANDARD = baselineOf('base-1', 'base-2', 'base-3')
const BASELINES: Record<string, Baseline> = {
  standard: STANDARD,
  'one-refresh': baselineOf('base-4'),
  // A schema-valid file whose history was emptied by hand.
  empty: { ...STANDARD, refreshes: [] },
  foreign: baselineOf('foreign-1', 'foreign-2'),
}
const CANDIDATES = [...results.keys()].filter((n) => !n.startsWith('base-'))

/**
 * What a user may set so that this short catalogue history can pass at all: `gate.max_mdc_pct: 25`
 * in the config, through the same mapping the Action and `compare --config` use. With the default
 * 15 % the three refreshes leave p95 ITL blind (MDC 24.8 % at c=1, 17.2 % at c=2), and four are
 * not enough either (20.8 % at c=1), so no catalogue baseline lets anything pass by default.
 */
const LENIENT: Partial<GateOptions> = optionsFromGateSettings({ tolerancePct: {}, maxFailedRequests: null, maxMdcPct: 25 })

const exitOf = (b: Baseline, c: ResultFile, opts: Partial<GateOptions> = {}): 0 | 1 | 2 => gateExit(compareToBaseline(b, c, opts).verdict, DEFAULT_FAIL_ON)

describe('the catalogue of real candidates against a three-refresh baseline', () => {
  // Each verdict follows from what was injected; the cause is named on the first reason line
  // (an undecided verdict opens with the line naming its blind rows and their MDCs).
  const table: Array<[string, VerdictKind, RegExp | null]> = [
    // Three refreshes of this simulator leave p95 ITL blind (MDC 24.8 % at c=1, 17.2 % at c=2, above 15 %,
    // three times the 5 % tolerance): an unchanged engine is undecided, never a pass, however small its change (−1 %).
    [
      'unchanged',
      'undecided',
      /^undecided and blind: p95 ITL 16×16 c=1 \(MDC 24\.8 % > 15 %\), p95 ITL 16×16 c=2 \(MDC 17\.2 % > 15 %\) could not have shown a regression of the size its limit promises \(gate\.max_mdc_pct\), so the check fails;.*\np95 ITL 16×16 c=1: undecided — blind: the smallest change this row would catch 90 % of the time is 24\.8 %, more than 15 %;/,
    ],
    // p95 ITL rises 15 % and 11 %, inside its blind rows' bars (16.8 %, 11.8 %); throughput at target sees the slowdown.
    ['slower-15pct', 'regression', /^throughput at target 16×16: −13\.0 %, beyond the bar of −9\.1 %$/m],
    ['slower-3x', 'regression', /^p95 ITL 16×16 c=1: \+181\.8 %, beyond the bar of \+16\.8 %$/m],
    // A busy host: every run at C=1 saturated the client, so only what the valid runs show is decided.
    ['busy-host-unchanged', 'unmeasured', /^unmeasured: a busy host/],
    ['busy-host-slower', 'regression', /p95 ITL 16×16 c=2: \+/],
    ['one-chunk', 'unmeasured', /too_few_requests/],
    // Twice the tokens per chunk halves the gaps a run measures, below the 100 a p99 needs: gated per chunk, that is unmeasured.
    ['two-tokens-per-chunk', 'unmeasured', /too_few_requests/],
    ['stop-early', 'broken', /output_len_mismatch/],
    ['usage-skew', 'broken', /token_count_mismatch/],
    // A sweep planned without a point of the gated sweep is another sweep; one that lost a point is incomplete (below).
    ['missing-point', 'not_comparable', /concurrency/],
    ['fewer-repeats', 'incomplete', /2 of the baseline's 3 runs per refresh/],
    ['other-warmup', 'not_comparable', /warmup/],
    ['other-prompts', 'not_comparable', /prompts per concurrency: baseline 10, candidate 5/],
    ['other-deadline', 'not_comparable', /request_timeout|deadline/],
    ['foreign-1', 'not_comparable', /model/],
  ]
  it.each(table)('%s: %s', (name, verdict, cause) => {
    const v = compareToBaseline(STANDARD, get(name))
    expect(v.verdict).toBe(verdict)
    if (cause !== null) expect(v.reasons.join('\n')).toMatch(cause)
  })

  it("decides a busy host's slower engine on its valid runs only: C=1 stays unmeasured, the regression stands on C=2", () => {
    const v = compareToBaseline(STANDARD, get('busy-host-slower'))
    expect(v.rows.find((r) => r.key === 'itl_p95@16x16@c1')).toMatchObject({ status: 'invalid', n_candidate: 0 })
    expect(v.rows.find((r) => r.key === 'itl_p95@16x16@c2')).toMatchObject({ status: 'regression', n_candidate: 2 })
    expect(v.regressions).toEqual(['p95 ITL 16×16 c=2'])
  })

  it('calls every fault that failed requests beyond the budget broken, naming the failures', () => {
    const faults = CANDIDATES.filter((n) => n.startsWith('fault-'))
    expect(faults.length).toBe(12)
    // Every kind but the stall failed requests at both rates.
    expect(faults.filter((n) => get(n).points.some((p) => p.runs.some((r) => r.failed > 0)))).toHaveLength(10)
    for (const name of faults) {
      const c = get(name)
      const v = compareToBaseline(STANDARD, c)
      const failed = c.points.some((p) => p.runs.some((r) => r.failed > 0))
      // A stall holds a stream but fails nothing: it is a slow request, not a broken one.
      if (failed) {
        expect(v.verdict, name).toBe('broken')
        expect(v.reasons.join('\n'), name).toMatch(/failed/)
        expect(exitOf(STANDARD, c), name).toBe(1)
      }
    }
    // The stalls are judged as measured: 2 % of streams held costs throughput at target 0.3 % (a pass) while
    // the blind ITL rows keep it undecided; 10 % held costs 19.4 %, a regression.
    expect(compareToBaseline(STANDARD, get('fault-stall-0.02'))).toMatchObject({ verdict: 'undecided', regressions: [] })
    expect(compareToBaseline(STANDARD, get('fault-stall-0.1'))).toMatchObject({ verdict: 'regression', regressions: ['throughput at target 16×16'] })
  })

  it('says a 3× slower engine against an emptied baseline is unmeasured, naming the empty history', () => {
    const v = compareToBaseline(BASELINES['empty']!, get('slower-3x'))
    expect(v.verdict).toBe('unmeasured')
    expect(v.reasons[0]).toMatch(/^unmeasured: baseline catalogue has no refreshes/)
    expect(exitOf(BASELINES['empty']!, get('slower-3x'))).toBe(1)
  })

  it('calls the unchanged engine against a foreign baseline not comparable', () => {
    expect(compareToBaseline(BASELINES['foreign']!, get('unchanged')).verdict).toBe('not_comparable')
  })
})

/** Runs the gate may count: valid, or failing only through requests within the 1 % budget. */
function countable(r: RunResult): boolean {
  if (r.validity.valid) return true
  const total = r.completed + r.failed
  return r.validity.issues.every((i) => i.code === 'requests_failed') && total > 0 && r.failed / total <= 0.01
}

const BROKEN_CODES = new Set(['output_len_mismatch', 'token_count_mismatch', 'input_len_mismatch'])

/**
 * The invariant's right-hand side, computed from the files alone (not from the verdict): the
 * candidate measured every gated point of the baseline with its planned repeats, at least two and
 * two thirds of them countable, nothing broke, the settings match, and the baseline has at least
 * two valid runs of every gated point.
 */
function measuredValidlyOnBothSides(b: Baseline, c: ResultFile): boolean {
  const newest = b.refreshes.at(-1)
  if (newest === undefined || c.fingerprint === undefined || newest.fingerprint === undefined) return false
  const settings = (f: object): string =>
    JSON.stringify(
      Object.entries(f)
        .filter(([k]) => k !== 'tokens_per_chunk')
        .sort(([a], [b]) => a.localeCompare(b)),
    )
  if (settings(newest.fingerprint) !== settings(c.fingerprint)) return false
  const planned = Number(c.config['repeats'])
  for (const shape of b.profile.shapes) {
    for (const conc of b.profile.concurrency) {
      const p = c.points.find((x) => x.input_len === shape.input_len && x.output_len === shape.output_len && x.concurrency === conc)
      if (p === undefined || p.runs.length < planned) return false
      if (p.runs.some((r) => r.validity.issues.some((i) => BROKEN_CODES.has(i.code)) || r.failed > 0.01 * (r.completed + r.failed))) return false
      const ok = p.runs.filter(countable).length
      if (ok < 2 || ok * 3 < planned * 2) return false
      const key = `itl_p95@${shape.input_len}x${shape.output_len}@c${conc}`
      if (b.refreshes.reduce((n, r) => n + (r.runs[key]?.length ?? 0), 0) < 2) return false
    }
  }
  return true
}

describe('exit 0 ⇒ every gated metric was measured validly on both sides', () => {
  it('holds for every baseline × candidate of the catalogue, with any runs an interrupted sweep lost, at the default and a lenient max_mdc_pct', () => {
    const baselineNames = Object.keys(BASELINES)
    fc.assert(
      fc.property(
        fc.constantFrom(...baselineNames),
        fc.constantFrom(...CANDIDATES),
        fc.array(fc.nat(), { maxLength: 4 }),
        fc.boolean(),
        (bName, cName, drops, lenient) => {
          const b = BASELINES[bName]!
          const c = get(cName)
          // Lose some runs, as a sweep cut short does; the curve is drawn again through what is left.
          const runs = c.points.flatMap((p, pi) => p.runs.map((_, ri) => [pi, ri] as const))
          const lost = new Set(drops.map((d) => runs[d % runs.length]!.join(':')))
          c.points = c.points.map((p, pi) => ({ ...p, runs: p.runs.filter((_, ri) => !lost.has(`${pi}:${ri}`)) })).filter((p) => p.runs.length > 0)
          c.at_target = atTargetForResult(c.points, c.target)
          if (exitOf(b, c, lenient ? LENIENT : {}) === 0)
            expect(measuredValidlyOnBothSides(b, c), `${bName} × ${cName} minus ${[...lost].join(',')}`).toBe(true)
        },
      ),
      { numRuns: 400, seed: 20261204 },
    )
  })

  it('lets the unchanged candidate pass against the three-refresh baseline at gate.max_mdc_pct 25 (the invariant is not vacuous)', () => {
    // By default its p95 ITL rows are blind, so it is undecided and exits 1; a user who accepts an MDC of 25 %
    // (ITL at c=1 has 24.8 %) lets it pass, which the property above then holds to the invariant.
    expect(exitOf(STANDARD, get('unchanged'))).toBe(1)
    expect(LENIENT).toEqual({ maxMdcPct: 25 })
    expect(compareToBaseline(STANDARD, get('unchanged'), LENIENT).verdict).toBe('pass')
    expect(exitOf(STANDARD, get('unchanged'), LENIENT)).toBe(0)
    expect(measuredValidlyOnBothSides(STANDARD, get('unchanged'))).toBe(true)
  })
})
