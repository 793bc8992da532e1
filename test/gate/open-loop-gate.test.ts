import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { resolveConfig } from '../../src/config/resolve.js'
import { compareToBaseline } from '../../src/gate/compare.js'
import type { Baseline } from '../../src/gate/types.js'
import { startSim, type SimOptions } from '../../src/sim/index.js'
import { appendRefresh } from '../../src/gate/refresh.js'
import { baselineSchema } from '../../src/store/baseline-schema.js'
import { readResultFile } from '../../src/store/result-file.js'
import { runSweep } from '../../src/sweep/run-sweep.js'
import type { ResultFile } from '../../src/types.js'
import { expectHonest, measureAgain, spoiledRows } from '../fixtures/honest-verdict.js'

// An open-loop sweep gated against an open-loop baseline: the points are request rates, so the
// baseline's profile keeps the rates and every row is a `…@rateR` scope. Real sweeps against the
// deterministic simulator. A sweep whose client fell behind its arrivals on this shared host is
// measured again, at most twice (and up to three times more while nothing of it was valid); a gated
// row it still leaves unmeasured decides the verdict.
let dir: string
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'servegate-open-gate-'))
})
afterAll(() => {
  if (dir) rmSync(dir, { recursive: true, force: true })
})

const flags = { inputLen: '32', outputLen: '8', requestRate: '20,40', numPrompts: '16', warmup: '2', repeats: '2', hostRetries: '2' }

async function sweep(name: string, sim: Partial<SimOptions>, seed: string): Promise<ResultFile> {
  const out = join(dir, `${name}.json`)
  let result: ResultFile | null = null
  // A sweep the host spoiled whole (no valid run: nothing to keep, or a refresh the baseline refuses) is
  // measured up to three times more.
  for (let attempt = 0; measureAgain(attempt, result); attempt++) {
    // 30 ms between tokens: a busy host's scheduling jitter (a few ms) stays small beside it.
    const handle = await startSim({ ttftMs: 20, itlMs: 30, seed: 3, ...sim })
    try {
      await runSweep(resolveConfig({ file: null, filePath: null, flags: { baseUrl: handle.url, out, seed, ...flags }, env: {} }), { log: () => {} })
    } finally {
      await handle.close()
    }
    result = await readResultFile(out)
  }
  return result!
}

describe('gating an open-loop sweep', () => {
  let baseline: Baseline
  let same: ResultFile
  let slow: ResultFile

  beforeAll(async () => {
    // Two refreshes: one refresh of 2 repeats leaves σ a single degree of freedom, and its t bar
    // (level 1 % / 3 rows) can exceed even a 2.5-fold slowdown on a busy host.
    baseline = appendRefresh(appendRefresh(null, await sweep('base', {}, '1'), { name: 'open' }), await sweep('base2', {}, '4'), { name: 'open' })
    same = await sweep('same', {}, '2')
    slow = await sweep('slow', { slowdown: 4 }, '3')
  }, 240_000)

  it("stores the rates as the baseline's points", () => {
    expect(baseline.profile.request_rates).toEqual([20, 40])
    expect(Object.keys(baseline.refreshes[0]!.runs)).toContain('itl_p95@32x8@rate40')
    expect(baselineSchema.safeParse(JSON.parse(JSON.stringify(baseline))).success).toBe(true)
  })

  it('decides every rate point of an unchanged engine (no missing rows)', () => {
    const v = compareToBaseline(baseline, same)
    const itl = v.rows.filter((r) => r.key.startsWith('itl_p95@'))
    expect(itl.map((r) => r.key)).toEqual(['itl_p95@32x8@rate20', 'itl_p95@32x8@rate40'])
    // The same engine: decided as unchanged, or unmeasured (the busy host named) where the host spoiled a gated row.
    if (expectHonest(v, ['pass', 'improvement', 'undecided'], { baseline }) !== 'unmeasured') expect(itl.every((r) => r.n_candidate === 2)).toBe(true)
    expect(v.reasons.join('\n')).not.toMatch(/outside the baseline's gated sweep|of the 2 repeats/)
  })

  it('fails a slower engine on its rate points', () => {
    const v = compareToBaseline(baseline, slow)
    const itl = (label: string) => label.startsWith('p95 ITL ')
    // Two short refreshes set a wide bar, and a busy host widens it further by stretching the
    // baseline's gaps: 4 × slower is beyond it wherever the host let the row be measured calmly.
    if (expectHonest(v, 'regression', { baseline, shownBy: itl }) === 'regression') {
      const spoiled = spoiledRows(v, baseline).map((s) => s.label)
      const rows = v.rows.filter((r) => r.gated && itl(r.label) && !spoiled.includes(r.label))
      expect(rows.map((r) => r.label)).toEqual(['p95 ITL 32×8 rate=20/s', 'p95 ITL 32×8 rate=40/s'].filter((l) => !spoiled.includes(l)))
      // A row the noise left short of calling it is undecided with its bar above the change it saw, never a pass.
      for (const r of rows) {
        if (r.status === 'regression') continue
        expect(r.status, JSON.stringify(r)).toBe('undecided')
        expect(r.bar_pct!, JSON.stringify(r)).toBeGreaterThanOrEqual(r.delta_pct!)
      }
      expect(v.regressions.length).toBeGreaterThan(0)
    }
  })

  it('says which rate a cut curve lacks', () => {
    const cut = { ...same, points: same.points.map((p) => (p.request_rate === 40 ? { ...p, runs: p.runs.filter((r) => r.repeat !== 2) } : p)) }
    const v = compareToBaseline(baseline, cut)
    expect(v.reasons.join('\n')).toMatch(/repeat 2: the curve stopped early \(measured rate=20 of 20, 40\)/)
    expectHonest(v, 'incomplete', { baseline })
  })
})
