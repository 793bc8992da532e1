import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { spawn } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { startSim, type SimOptions } from '../../src/sim/index.js'
import { resolveConfig } from '../../src/config/resolve.js'
import { runSweep } from '../../src/sweep/run-sweep.js'
import { writeBaseline } from '../../src/store/baseline.js'
import { appendRefresh } from '../../src/gate/refresh.js'
import type { Baseline } from '../../src/gate/types.js'
import { readResultFile, writeResultFile } from '../../src/store/result-file.js'
import type { ResultFile } from '../../src/types.js'
import { expectHonest, hostSpoiled, hostThinned, judgedFromText, measureAgain, spoiledRuns } from '../fixtures/honest-verdict.js'
import { cliArgs } from '../fixtures/servegate-cli.js'

const root = join(import.meta.dirname, '..', '..')

// Issue 6's acceptance against the simulator: a baseline of three refreshes of
// a small gated sweep, then candidates that are slower, unchanged, or failing.
describe('the gate end to end against the simulator', () => {
  let dir: string
  const out = (name: string): string => join(dir, `${name}.json`)

  /**
   * One gated sweep (64 in / 8 out, C = 1 and 4, 3 repeats) against a fresh simulator. `refresh`:
   * it is one of the baseline's three refreshes, whose valid runs add up with the others'.
   */
  async function sweep(name: string, sim: Partial<SimOptions> = {}, refresh = false): Promise<string> {
    // This host's CPUs are shared: a run whose client saturated is measured again in place (at most
    // twice, host_retries); a sweep the host still spoiled is measured again (at most
    // twice), and the attempt with the fewest runs the host spoiled is kept; one whose every run
    // the host spoiled (nothing measured) is measured again up to three times more. A refresh is
    // measured again only where the host left a point of it with fewer than two valid runs: the
    // baseline keeps each refresh's valid runs (a spoiled one is left out, its cause recorded), so
    // one spoiled run of nine costs it a run, not a sweep.
    const spoiled = refresh ? hostThinned : hostSpoiled
    let kept: ResultFile | null = null
    let last: ResultFile | null = null
    for (let attempt = 0; measureAgain(attempt, kept, spoiled); attempt++) {
      const handle = await startSim({ ttftMs: 20, itlMs: 10, seed: 7, ...sim })
      try {
        const cfg = resolveConfig({
          file: null,
          filePath: null,
          // 8 tokens out and 15 prompts a concurrency: 105 gaps at c = 1, over the 100 a p95 needs, in two thirds of the time 16 × 12 took.
          flags: {
            baseUrl: handle.url,
            inputLen: '64',
            outputLen: '8',
            promptsPerConcurrency: '15',
            concurrency: '1,4',
            repeats: '3',
            hostRetries: '2',
            out: out(name),
          },
          env: {},
        })
        await runSweep(cfg, { log: () => {} })
      } finally {
        await handle.close()
      }
      last = await readResultFile(out(name))
      if (kept === null || spoiledRuns(last) < spoiledRuns(kept)) kept = last
    }
    if (kept !== last) await writeResultFile(out(name), kept!)
    return out(name)
  }

  /** `servegate compare` in a child process; `tag` names its markdown file, so two may run side by side. */
  async function compare(candidate: string, extra: string[] = [], tag = ''): Promise<{ code: number | null; stdout: string; markdown: string }> {
    const md = join(dir, `${candidate.split('/').pop()}${tag}.md`)
    const child = spawn(process.execPath, cliArgs('compare', out('baseline'), candidate, '--markdown', md, ...extra), {
      cwd: root,
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (b: Buffer) => (stdout += b.toString()))
    child.stderr.on('data', (b: Buffer) => (stderr += b.toString()))
    const code = await new Promise<number | null>((resolve) => child.once('close', (c) => resolve(c)))
    return { code, stdout: stdout + stderr, markdown: code === 2 ? '' : readFileSync(md, 'utf8') }
  }

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'servegate-gate-e2e-'))
    let baseline: Baseline | null = null
    for (const i of [1, 2, 3]) {
      baseline = appendRefresh(baseline, await readResultFile(await sweep(`refresh-${i}`, {}, true)), { name: 'baseline' })
    }
    await writeBaseline(out('baseline'), baseline!)
  }, 240_000)

  afterAll(() => {
    if (dir) rmSync(dir, { recursive: true, force: true })
  })

  it('keeps three refreshes in the baseline', () => {
    const b = JSON.parse(readFileSync(out('baseline'), 'utf8')) as Baseline
    expect(b.refreshes).toHaveLength(3)
  })

  // Three refreshes are a short history: the rule assumes ~3 % drift between server starts,
  // which puts the 3-run bar near 14 % (docs/gate.md). 30 % is beyond it on any host; 15 %
  // sat on the bar and went either way when a busy neighbour widened the candidate's spread.
  it('fails a 30% slower candidate with exit 1 and names the regressed metrics', async () => {
    const r = await compare(await sweep('slow', { slowdown: 1.3 }))
    expect(r.code, r.stdout).toBe(1)
    expect(r.markdown).toMatch(/regression/i)
    expect(r.markdown).toMatch(/ITL/)
  }, 120_000)

  // Three refreshes of the simulator put p95 ITL's MDC near the default limit (three times the 5 %
  // tolerance): one draw of refreshes leaves it just under, another just over. Under it the unchanged
  // engine passes (exit 0); over it the row is blind, undecided, and the check fails (exit 1) — never a
  // regression. A config that accepts an MDC of 30 % (gate.max_mdc_pct) lets it pass either way.
  it('does not fail an unchanged candidate once the config lets three refreshes see (exit 0)', async () => {
    const same = await sweep('same')
    const cfg = join(dir, 'servegate.yaml')
    writeFileSync(cfg, 'server:\n  base_url: http://127.0.0.1:8000\ngate:\n  max_mdc_pct: 30\n')
    // The two compares read the same files and measure nothing: they run side by side.
    const [strict, r] = await Promise.all([compare(same), compare(same, ['--config', cfg], '-mdc30')])
    // (Where the busy host spoiled a gated row of the candidate even after its retries, both
    // compares must say unmeasured, naming the cause: expectHonest.)
    const baseline = JSON.parse(readFileSync(out('baseline'), 'utf8')) as Baseline
    const sv = expectHonest(judgedFromText(strict.stdout), ['pass', 'improvement', 'undecided'], { baseline })
    expect(strict.code, strict.stdout).toBe(sv === 'pass' || sv === 'improvement' ? 0 : 1)
    if (sv === 'undecided') expect(strict.stdout).toMatch(/undecided and blind: /)
    expect(r.markdown).not.toMatch(/verdict[^\n]*regression/i)
    // A quiet host passes it. A host busy enough that three refreshes cannot see 30 % leaves a row
    // blind: that fails, honestly, and only so — every undecided row blind beyond 30 %, none regressed.
    const v = judgedFromText(r.stdout)
    const seen = expectHonest(v, ['pass', 'improvement', 'undecided'], { baseline })
    if (r.code === 0) expect(['pass', 'improvement'], r.stdout).toContain(v.verdict)
    else if (seen === 'unmeasured') expect(r.code, r.stdout).toBe(1)
    else {
      expect([r.code, v.verdict], r.stdout).toEqual([1, 'undecided'])
      const undecided = v.rows.filter((row) => row.status === 'undecided')
      expect(undecided.length, r.stdout).toBeGreaterThan(0)
      expect(v.rows.filter((row) => !['pass', 'improvement', 'undecided'].includes(row.status))).toEqual([])
      for (const row of undecided) expect(r.stdout).toContain(`${row.label} (MDC `)
      expect(r.stdout).toMatch(/undecided and blind: .*> 30 %\)/)
    }
  }, 120_000)
})
