/**
 * `servegate gate` at a terminal, as the Action's gate mode climbs its ladder: the config's gated
 * sweep against a stored baseline, then an A/B with the reference engine for what the baseline
 * leaves open (the first sweep, one run per point, as its first B slot); a candidate given by URL
 * gets one look, with the sweep's own repeats. The engines are the simulator.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startSim, type SimHandle } from '../../src/sim/index.js'
import { parseResult } from '../../src/store/result-file.js'
import { SIM } from '../ab/ab-cli-harness.js'
import { expectHonest, judgedFromText } from '../fixtures/honest-verdict.js'
import { runCli } from '../sweep/cli-child.js'

// One shape, two concurrencies, the fewest prompts a p95 of the gaps at c = 1 takes: each engine start is a few seconds.
const CONFIG = `target: {metric: tpot, percentile: 95, threshold_ms: 50}
sweeps:
  gate:
    shapes: [{input_len: 32, output_len: 8}]
    concurrency: [1, 4]
    prompts_per_concurrency: 15
    warmup: 1
    host_retries: 2
`
let dir = ''
let url: SimHandle | undefined
const ENGINE = `${SIM} --profile default`

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'servegate-gate-cli-'))
  writeFileSync(join(dir, 'servegate.yml'), CONFIG)
  url = await startSim({ ttftMs: 20, itlMs: 10 })
  const base = await runCli(['run', '--config', join(dir, 'servegate.yml'), '--serve', ENGINE, '--out', join(dir, 'base.json')])
  expect(base.code, base.stderr).toBe(0)
  const stored = await runCli(['baseline', 'update', join(dir, 'base.json'), '--into', join(dir, 'gate.json')])
  expect(stored.code, stored.stderr).toBe(0)
}, 120_000)

afterAll(async () => {
  await url?.close()
  if (dir) rmSync(dir, { recursive: true, force: true })
})

describe('servegate gate', () => {
  it('escalates to an A/B with the reference engine and calls a twice as slow candidate a regression, its first sweep the first B slot', async () => {
    const r = await runCli([
      'gate',
      ...['--baseline', join(dir, 'gate.json'), '--config', join(dir, 'servegate.yml')],
      ...['--serve', `${ENGINE} --slowdown 2`, '--reference', ENGINE, '--max-rounds', '6'],
      ...['--out', join(dir, 'slow.json'), '--json', join(dir, 'slow.verdict.json')],
    ])
    if (expectHonest(judgedFromText(r.stdout), 'regression') !== 'regression') return
    expect(r.code, r.stdout + r.stderr).toBe(1)
    expect(r.stderr).toContain("servegate gate: the first sweep runs one run per point (the sweep's repeats: 3)")
    expect(r.stderr).toContain('servegate gate: escalating to A/B with the reference engine')
    expect(r.stderr).toContain("B (round 1): the PR's first sweep, measured on an engine start of its own before the job")
    // One start for the first sweep, then every A/B slot but the one it filled.
    const schedule = JSON.parse(readFileSync(join(dir, 'slow-ab', 'schedule.json'), 'utf8')) as { rounds: number; starts: unknown[] }
    expect(schedule.starts).toHaveLength(2 * schedule.rounds - 1)
    const verdict = JSON.parse(readFileSync(join(dir, 'slow.verdict.json'), 'utf8')) as { verdict: string; cost: { engine_starts: number } }
    expect(verdict.verdict).toBe('regression')
    expect(verdict.cost.engine_starts).toBe(2 * schedule.rounds)
    expect(r.stdout).toMatch(new RegExp(`cost: ${2 * schedule.rounds} engine starts, `))
  }, 240_000)

  it('gives a candidate given by URL one look, with the sweep’s own repeats: it cannot be started again', async () => {
    const r = await runCli([
      'gate',
      ...['--baseline', join(dir, 'gate.json'), '--config', join(dir, 'servegate.yml'), '--base-url', url!.url, '--out', join(dir, 'url.json')],
    ])
    expect(r.stderr).not.toContain('one run per point')
    const res = parseResult(JSON.parse(readFileSync(join(dir, 'url.json'), 'utf8')), 'url.json')
    expect(res.points.map((p) => p.runs.length)).toEqual([3, 3])
    expect(r.stdout).toMatch(/cost: 0 engine starts, 6 point-runs/)
    expect(r.stderr).not.toContain('escalating')
  }, 120_000)

  it('refuses a candidate without a server, and bad rounds, before anything runs (exit 2)', async () => {
    const none = await runCli(['gate', '--baseline', join(dir, 'gate.json'), '--config', join(dir, 'servegate.yml')])
    expect(none.code).toBe(2)
    expect(none.stderr).toContain('servegate gate: the candidate has no server: give --serve or --base-url')
    const bad = await runCli(['gate', '--baseline', join(dir, 'gate.json'), '--serve', ENGINE, '--rounds', '1'])
    expect(bad.code).toBe(2)
    expect(bad.stderr).toContain('servegate gate --rounds 1 --max-rounds 32:')
  })
})
