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
import { expectHonest, hostSpoiled } from '../fixtures/honest-verdict.js'

// Goodput (requests/s meeting every --goodput SLO) gated with `gate.goodput: true`, end to end:
// real sweeps against the deterministic simulator, a baseline stored from one, and the gate.
let dir: string
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'servegate-goodput-gate-'))
})
afterAll(() => {
  if (dir) rmSync(dir, { recursive: true, force: true })
})

// TPOT is the simulator's fixed gap (10 ms; 20 ms slowed 2×): an SLO of 15 ms splits them (a late client
// event loop can bunch a request's chunks and shorten its measured TPOT, hence the wide margin).
const flags = { inputLen: '32', outputLen: '12', concurrency: '4', promptsPerConcurrency: '8', repeats: '2', goodput: 'tpot:15' }

/** One sweep; one whose client saturated on this shared host is measured again, at most twice. */
async function sweep(name: string, sim: Partial<SimOptions>, gateGoodput: boolean): Promise<ResultFile> {
  const out = join(dir, `${name}.json`)
  let result: ResultFile | null = null
  for (let attempt = 0; attempt < 3 && (result === null || hostSpoiled(result)); attempt++) {
    const handle = await startSim({ ttftMs: 15, itlMs: 10, seed: 5, ...sim })
    try {
      const cfg = resolveConfig({
        file: gateGoodput ? { gate: { goodput: true } } : null,
        filePath: gateGoodput ? 'servegate.yml' : null,
        flags: { baseUrl: handle.url, out, ...flags },
        env: {},
      })
      await runSweep(cfg, { log: () => {} })
    } finally {
      await handle.close()
    }
    result = await readResultFile(out)
  }
  return result!
}

describe('gating goodput', () => {
  let baseline: Baseline
  let slow: ResultFile

  beforeAll(async () => {
    baseline = appendRefresh(null, await sweep('base', {}, true), { name: 'goodput' })
    slow = await sweep('slow', { slowdown: 2 }, true)
  }, 240_000)

  it('stores that goodput is gated in the baseline, and the baseline parses', () => {
    expect(baseline.gated).toEqual(['itl_p95', 'tput_at_target', 'goodput'])
    expect(baseline.refreshes[0]!.runs['goodput@32x12@c4']!.every((x) => x > 0)).toBe(true)
    expect(baselineSchema.safeParse(JSON.parse(JSON.stringify(baseline))).success).toBe(true)
  })

  it('fails a candidate whose requests no longer meet the SLO on its goodput row', () => {
    for (const r of slow.points[0]!.runs) expect(r.goodput!.share).toBeLessThan(0.25)
    const v = compareToBaseline(baseline, slow)
    const row = v.rows.find((r) => r.key === 'goodput@32x12@c4')!
    // Unmeasured (the busy host named) only where the host left the goodput row without two valid runs a side.
    // The 2× slower ITL and throughput rows regress too. The goodput row, from one refresh of two
    // runs, is a regression, or (where a late client event loop spread the baseline's share, as a
    // busy CI host did once) blind, which it must then say: never a pass.
    if (expectHonest(v, 'regression', { baseline }) === 'regression') {
      if (row.status === 'undecided') expect(row.blind, JSON.stringify(row)).toBe(true)
      else {
        expect(row).toMatchObject({ gated: true, status: 'regression' })
        expect(v.regressions).toContain('goodput 32×12 c=4')
      }
    }
  })

  it('reports goodput without gating it when the config does not ask, and shows no row when no side measured it', async () => {
    const plain = appendRefresh(null, slow, { name: 'x' })
    const ungated = { ...baseline, gated: undefined }
    delete ungated.gated
    expect(compareToBaseline(ungated, slow).rows.find((r) => r.key === 'goodput@32x12@c4')).toMatchObject({ gated: false })
    const noSlo = { ...slow, points: slow.points.map((p) => ({ ...p, runs: p.runs.map(({ goodput: _g, ...r }) => r) })) }
    const noSloBaseline = {
      ...plain,
      refreshes: plain.refreshes.map((r) => ({ ...r, runs: Object.fromEntries(Object.entries(r.runs).filter(([k]) => !k.startsWith('goodput@'))) })),
    }
    delete noSloBaseline.gated
    expect(compareToBaseline(noSloBaseline, noSlo).rows.some((r) => r.key.startsWith('goodput@'))).toBe(false)
  })

  it('fails closed when goodput is gated but the candidate measured none', () => {
    const noSlo = { ...slow, points: slow.points.map((p) => ({ ...p, runs: p.runs.map(({ goodput: _g, ...r }) => r) })) }
    const v = compareToBaseline(baseline, noSlo)
    expect(v.rows.find((r) => r.key === 'goodput@32x12@c4')).toMatchObject({ gated: true, status: 'missing' })
    // The 2× slower ITL and throughput outrank the missing row; where the host spoiled them, the missing row fails it.
    expectHonest(v, 'regression', { baseline, shownBy: (label) => !label.startsWith('goodput ') })
  })
})

describe('gate.goodput in the config', () => {
  it('is refused in one line without goodput SLOs to gate on', () => {
    expect(() => resolveConfig({ file: { gate: { goodput: true } }, filePath: 'servegate.yml', flags: {}, env: {} })).toThrow(
      /^servegate\.yml: gate\.goodput is true but no goodput SLOs are set; add goodput: \{tpot: MS, \.\.\.\} or --goodput tpot:MS$/,
    )
  })
})
