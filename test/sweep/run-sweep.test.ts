import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { resolveConfig, type RunFlags } from '../../src/config/resolve.js'
import { UsageError } from '../../src/errors.js'
import { startSim, type SimHandle } from '../../src/sim/index.js'
import { runSweep } from '../../src/sweep/run-sweep.js'
import { readResult, runCount } from './cli-child.js'

// The orchestrator's bookkeeping around --resume, in-process against tiny deterministic
// sweeps (2 ms TTFT, 1 ms ITL, 4 tokens): what it says and when it refuses.
describe('runSweep around --resume', () => {
  let simA: SimHandle
  let simB: SimHandle
  let dir: string
  const sweep = (sim: SimHandle, out: string, flags: RunFlags = {}) => {
    const lines: string[] = []
    const resumed: [number, number][] = []
    const cfg = resolveConfig({
      file: null,
      filePath: null,
      flags: {
        baseUrl: sim.url,
        inputLen: '16',
        outputLen: '4',
        concurrency: '1,2',
        repeats: '1',
        promptsPerConcurrency: '2',
        warmup: '0',
        out: join(dir, out),
        ...flags,
      },
      env: {},
    })
    return { lines, resumed, run: runSweep(cfg, { log: (l) => lines.push(l), onResume: (n, total) => resumed.push([n, total]) }) }
  }

  beforeAll(async () => {
    simA = await startSim({ ttftMs: 2, itlMs: 1 })
    simB = await startSim({ ttftMs: 2, itlMs: 1, model: 'other/model' })
    dir = mkdtempSync(join(tmpdir(), 'servegate-runsweep-'))
  })
  afterAll(async () => {
    await simA?.close()
    await simB?.close()
    if (dir) rmSync(dir, { recursive: true, force: true })
  })

  it('starts a new sweep when --resume names a file that does not exist yet, and says so', async () => {
    const s = sweep(simA, 'fresh.json', { resume: true })
    await s.run
    expect(s.lines).toContain(`--resume: ${join(dir, 'fresh.json')} does not exist yet, starting a new sweep.`)
    expect(s.resumed).toEqual([])
    expect(runCount(readResult(join(dir, 'fresh.json')))).toBe(2)
  })

  it('reports the runs already measured to onResume and measures nothing twice', async () => {
    await sweep(simA, 'grow.json', { concurrency: '1' }).run
    const s = sweep(simA, 'grow.json', { resume: true })
    const { result } = await s.run
    expect(s.resumed).toEqual([[1, 2]])
    expect(result.points.map((p) => [p.concurrency, p.runs.length])).toEqual([
      [1, 1],
      [2, 1],
    ])
  })

  it('gives the runs a resumed sweep measures fresh prompts, so a prefix cache holding the cut-off run cannot serve them', async () => {
    const cached = await startSim({ ttftMs: 2, itlMs: 1, prefixCache: true })
    try {
      // The whole sweep ran once (the server has cached every prompt); then pretend the file
      // was cut off before C = 2 was saved, as when the process dies mid-run.
      // The seed is pinned: without a resume the same prompts would go out again.
      const full = await sweep(cached, 'cut.json', { inputLen: '64', seed: '42' }).run
      const path = join(dir, 'cut.json')
      const partial = { ...full.result, points: full.result.points.filter((p) => p.concurrency === 1) }
      writeFileSync(path, JSON.stringify(partial))
      const { result } = await sweep(cached, 'cut.json', { inputLen: '64', seed: '42', resume: true }).run
      const c2 = result.points.find((p) => p.concurrency === 2)!.runs[0]!
      expect(c2.validity.issues.map((i) => i.code)).not.toContain('prefix_cache_contaminated')
      expect(c2.seed).not.toBe(full.result.points.find((p) => p.concurrency === 2)!.runs[0]!.seed)
      // Without a resume the same seed gives the same prompts, and the cache does catch them.
      const again = await sweep(cached, 'again.json', { inputLen: '64', seed: '42' }).run
      expect(again.result.points.flatMap((p) => p.runs).every((r) => r.validity.issues.some((i) => i.code === 'prefix_cache_contaminated'))).toBe(true)
    } finally {
      await cached.close()
    }
  })

  it('continues an unpinned sweep from the seed it started with, and records it', async () => {
    const first = await sweep(simA, 'unpinned.json', { concurrency: '1' }).run
    const seed = first.result.config.seed
    expect(first.result.config.seed_pinned).toBe(false)
    const s = sweep(simA, 'unpinned.json', { resume: true })
    const { result } = await s.run
    expect(result.config.seed).toBe(seed)
    expect(s.lines.some((l) => l.includes('fresh seed'))).toBe(false)
    // The kept run still carries the seed it was measured with.
    expect(result.points[0]!.runs[0]!.seed).toBe(first.result.points[0]!.runs[0]!.seed)
  })

  it('warns when a new sweep replaces a file holding finished runs', async () => {
    await sweep(simA, 'twice.json').run
    const s = sweep(simA, 'twice.json')
    await s.run
    expect(s.lines).toContain(`Replacing ${join(dir, 'twice.json')}, which held 2 finished runs (add --resume to continue a sweep instead).`)
  })

  it('refuses to resume against a server serving another model, leaving the file as it was', async () => {
    await sweep(simA, 'model.json', { concurrency: '1' }).run
    const before = readResult(join(dir, 'model.json'))
    const s = sweep(simB, 'model.json', { resume: true })
    await expect(s.run).rejects.toThrow(UsageError)
    await expect(s.run).rejects.toThrow('model "servegate/sim-model" in the file, "other/model" now')
    expect(readResult(join(dir, 'model.json'))).toEqual(before)
    expect(existsSync(join(dir, 'model.json'))).toBe(true)
  })
})
