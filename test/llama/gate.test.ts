/**
 * The gate end to end against llama.cpp, as a user runs it: a baseline of three refreshes (each a
 * fresh engine started by `run --serve`), an unchanged engine, which passes, and a real
 * slowdown (the same model with twice the layers: every token costs llama.cpp ~30 % more), which
 * is a regression; then `ab` of the two engines on this host, B blamed, and of A against itself.
 *
 * This host's CPUs are shared: a result or an A/B whose gated rows a host code spoiled (the client
 * saturated) is judged by the honest-verdict rules (test/fixtures/honest-verdict.ts), never
 * turned into a pass: the verdict then is `unmeasured`, exit 1, with the cause named.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { ResultFile } from '../../src/types.js'
import { expectHonest, hostSpoiled, judgedFromText, spoiledUndecided } from '../fixtures/honest-verdict.js'
import { runCli } from '../sweep/cli-child.js'
import { BASE, DEEPER, kitReady, serveCommand } from './engine.js'
import type { TestModelSpec } from './model.js'

// The gated sweep: 4 in / 8 out at C = 2, 10 prompts a slot, five runs, ~9 s with the engine's
// start. A short prompt keeps every gap of the two streams a decode step (a prefill of 4 tokens costs
// about one), so p95 ITL is one population whether the streams run in step or staggered. With 32-token
// prompts it was not: a new request's prefill lands inside the other stream's gap only while they are
// staggered, and p95 ITL jumped between the decode tail and that prefill gap from run to run (24–48 ms
// for the deeper model), leaving the row blind. Five runs a slot let the gate shrug off one stray run
// (a median and a clipped spread). A CPU engine that shares 2 cores with its load generator still
// drifts between starts, more than the ~3 % the gate's noise prior assumes of a GPU engine: three
// refreshes that happened to agree set a throughput bar of −10.3 %, and the unchanged engine's next
// start measured −10.7 % (a false regression in CI). So the config says what this host can tell
// apart: changes under 20 % of p95 ITL and 25 % of throughput at target are not regressions here
// (gate.tolerance_pct). Throughput at target moves most: it is read where TPOT crosses the target,
// and a small shift of a steep curve moves the crossing far; an unchanged engine's start measured
// −20.4 % against a bar of −16.7 % at a tolerance of 20 % (a false regression in CI, one CI in about
// six). And a row must be able to
// see 40 % (gate.max_mdc_pct), less than twice the layers costs (p95 ITL +40–62 %, throughput at
// target −32–43 % in four quiet runs here): with a limit of 100 % a busy loop beside the lane let the
// deeper engine pass, on rows too noisy to see it. A row blinder than that never passes: the check
// fails as `undecided`, naming it, for the unchanged engine and the deeper one alike. A run whose
// client the shared host saturated is measured again in place (host_retries), a run rather than a sweep.
export const LLAMA_GATE_CONFIG = `target: {metric: tpot, percentile: 95, threshold_ms: 50}
gate:
  tolerance_pct: {itl: 20, throughput: 25}
  max_mdc_pct: 40
sweeps:
  gate:
    shapes: [{input_len: 4, output_len: 8}]
    concurrency: [2]
    prompts_per_concurrency: 10
    warmup: 4
    repeats: 5
    host_retries: 2
`

let dir = ''
const path = (name: string): string => join(dir, name)

/** One gated sweep of a fresh engine; one a host code spoiled is measured again, at most twice. */
async function sweep(name: string, serve: string): Promise<string> {
  const out = path(`${name}.json`)
  for (let attempt = 0; ; attempt++) {
    const r = await runCli(['run', '--config', path('servegate.yml'), '--sweep', 'gate', '--serve', serve, '--out', out])
    const result = JSON.parse(readFileSync(out, 'utf8')) as ResultFile
    if (attempt < 2 && hostSpoiled(result)) continue
    expect([0, 1], r.stdout + r.stderr).toContain(r.code)
    return out
  }
}

async function compare(candidate: string): Promise<{ code: number | null; stdout: string }> {
  const r = await runCli(['compare', path('baseline.json'), candidate, '--config', path('servegate.yml')])
  return { code: r.code, stdout: r.stdout + r.stderr }
}

/**
 * Whether the verdict's first line names `label` as undecided for the host's noise: blind by its MDC
 * (compare's one look), or a sequential row (ab) that its rounds left blind or between its boundaries.
 */
function namedUndecided(stdout: string, label: string): boolean {
  const lines = stdout.split('\n').filter((l) => /^\s*(- )?undecided( and blind)?: /.test(l))
  return stdout.includes(`${label} (MDC `) || lines.some((l) => l.includes(label))
}

/**
 * An unchanged engine passes (exit 0). Only where this host's noise left a gated row blind (its MDC
 * over gate.max_mdc_pct) is the honest verdict `undecided`, exit 1, every undecided row named blind
 * and none regressed; a host code that spoiled a row demands `unmeasured` (expectHonest).
 */
function expectPassOrBlind(r: { code: number | null; stdout: string }): void {
  const v = judgedFromText(r.stdout)
  const seen = expectHonest(v, ['pass', 'undecided'])
  expect(r.code, r.stdout).toBe(seen === 'pass' ? 0 : 1)
  if (seen === 'undecided') {
    const undecided = v.rows.filter((row) => row.status === 'undecided')
    expect(undecided.length, r.stdout).toBeGreaterThan(0)
    for (const row of undecided) expect(namedUndecided(r.stdout, row.label), r.stdout).toBe(true)
    expect(
      v.rows.filter((row) => !['pass', 'improvement', 'undecided'].includes(row.status)),
      r.stdout,
    ).toEqual([])
  }
}

/**
 * The engine with twice the layers is a regression (exit 1), shown by a gated row. Only where this
 * host's noise left every gated row blind (its MDC over gate.max_mdc_pct: it could not have seen the
 * change) is the honest verdict `undecided`, exit 1, each row named blind; never a pass, and no row
 * passes. A host code that spoiled a row demands `unmeasured` (expectHonest).
 */
function expectRegressionOrBlind(r: { code: number | null; stdout: string }, shown: RegExp): void {
  const v = judgedFromText(r.stdout)
  const seen = expectHonest(v, ['regression', 'undecided'])
  expect(r.code, r.stdout).toBe(1)
  if (seen === 'regression') expect(r.stdout).toMatch(shown)
  if (seen === 'undecided') {
    for (const row of v.rows.filter((x) => x.gated !== false)) {
      expect(row.status, r.stdout).toBe('undecided')
      expect(namedUndecided(r.stdout, row.label), r.stdout).toBe(true)
    }
  }
}

// The two candidates are measured between the baseline's refreshes (refresh, unchanged, refresh,
// deeper, refresh), not after them. This host's speed drifts over a minute (a neighbour of the VM):
// with the three refreshes first, one slow spell covered all of them and not the deeper engine after
// them, which then measured −12.7 % throughput against a baseline whose spread promised to see 33.8 %,
// and passed that row. Interleaved, a drift over the lane lands in the baseline's spread (its rows
// then say they are blind) or on a candidate and a refresh beside it alike, as refreshes taken over
// days of a real baseline's life take the host's drift in.
const ORDER: ReadonlyArray<[name: string, model: TestModelSpec]> = [
  ['refresh-1', BASE],
  ['same', BASE],
  ['refresh-2', BASE],
  ['deeper', DEEPER],
  ['refresh-3', BASE],
]
const candidates = new Map<string, string>()

beforeAll(async () => {
  await kitReady()
  dir = mkdtempSync(join(tmpdir(), 'servegate-llama-gate-'))
  writeFileSync(path('servegate.yml'), LLAMA_GATE_CONFIG)
  for (const [name, model] of ORDER) {
    const out = await sweep(name, serveCommand(model))
    if (!name.startsWith('refresh-')) {
      candidates.set(name, out)
      continue
    }
    const r = await runCli(['baseline', 'update', out, '--into', path('baseline.json')])
    expect(r.code, r.stdout + r.stderr).toBe(0)
  }
}, 600_000)
afterAll(() => {
  if (dir) rmSync(dir, { recursive: true, force: true })
})

describe('the gate end to end against llama.cpp', () => {
  it('keeps three refreshes, and passes the unchanged engine (exit 0)', async () => {
    expect((JSON.parse(readFileSync(path('baseline.json'), 'utf8')) as { refreshes: unknown[] }).refreshes).toHaveLength(3)
    const r = await compare(candidates.get('same')!)
    expectPassOrBlind(r)
  })

  it('fails the engine with twice the layers as a regression (exit 1) and names the rows', async () => {
    const r = await compare(candidates.get('deeper')!)
    expectRegressionOrBlind(r, /\d gated metrics? regressed: (p95 ITL 4×8 c=2|throughput at target 4×8)/)
  })
})

// ab of the two engines: every row is a sequential test over the rounds (docs/gate.md, "The
// sequential decision"), and a round of one run per point moves a row's Λ by a third of its
// regression boundary at most, so a regression needs three rounds (--rounds 3) and a pass at least
// two (--rounds 2). This config's tolerance of 20 % designs every row for twice that, 40 %, which a
// round of this engine's spread sees: both jobs may stop at their first look, and go on to 6 only
// where it cannot decide yet.
describe('ab against llama.cpp', () => {
  /**
   * One `servegate ab` of two serve commands; one a saturated client left undecided or unmeasured is
   * run again, at most twice: a lost pair costs the power its verdict needs (beside a busy loop, 3
   * pairs of 4 left the deeper engine's p95 ITL blind, MDC 388 %).
   */
  async function ab(a: string, b: string, name: string, rounds: string[]): Promise<{ code: number | null; stdout: string }> {
    const args = ['ab', '--a-serve', a, '--b-serve', b, ...rounds, '--config', path('servegate.yml'), '--out-dir', path(name)]
    let r = await runCli(args)
    for (let i = 0; i < 2 && spoiledUndecided(r.stdout + r.stderr); i++) r = await runCli(args)
    return { code: r.code, stdout: r.stdout + r.stderr }
  }

  it('blames B, the engine with twice the layers (exit 1)', async () => {
    const r = await ab(serveCommand(BASE), serveCommand(DEEPER), 'deeper', ['--rounds', '3', '--max-rounds', '6'])
    expectRegressionOrBlind(r, /B regressed: .+ \(B is worse than A beyond the bar\)/)
  }, 400_000)

  it('passes A against itself (exit 0)', async () => {
    const r = await ab(serveCommand(BASE), serveCommand(BASE), 'same', ['--rounds', '2', '--max-rounds', '6'])
    // A host whose load changed between A's slots and B's may make B look better beyond the
    // tolerance: the label improvement, which gates like a pass (exit 0). Never a regression.
    const judged = judgedFromText(r.stdout)
    if (judged.verdict === 'improvement') {
      expect(r.code, r.stdout).toBe(0)
      expect(judged.rows.filter((row) => row.status === 'regression')).toEqual([])
    } else expectPassOrBlind(r)
  }, 400_000)
})
