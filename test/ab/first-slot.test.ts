/**
 * The PR's first sweep as the A/B's first B slot (src/ab/run-ab.ts `bFirst`): where the gate's
 * ladder climbs from the stored baseline to an A/B, its first sweep was already one start of B's
 * engine with one run per point, so the job keeps it as round 1's B slot instead of starting B
 * for it again. Both engines are the simulator, started by serve commands.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { runAB } from '../../src/ab/run-ab.js'
import { resolveConfig } from '../../src/config/resolve.js'
import { runSweep } from '../../src/sweep/run-sweep.js'
import { parseResult } from '../../src/store/result-file.js'
import { SIM } from './ab-cli-harness.js'

const dir = mkdtempSync(join(tmpdir(), 'servegate-first-slot-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

const cfg = (out: string) =>
  resolveConfig({
    file: null,
    filePath: null,
    flags: {
      serve: `${SIM} --profile default`,
      inputLen: '32',
      outputLen: '8',
      concurrency: '1,4',
      promptsPerConcurrency: '6',
      warmup: '1',
      repeats: '1',
      out,
    },
    env: {},
  })

describe("servegate ab with the PR's first sweep as its first B slot", () => {
  it('starts B once fewer, keeps the sweep as round 1 of B, and counts its start and runs once', async () => {
    const first = (await runSweep(cfg(join(dir, 'first.json')), { log: () => {} })).result
    const lines: string[] = []
    const outDir = join(dir, 'ab')
    const out = await runAB(
      {
        a: cfg(join(dir, 'a-unused.json')),
        b: cfg(join(dir, 'b-unused.json')),
        rounds: 2,
        maxRounds: 2,
        outDir,
        gateOptions: {},
        bFirst: first,
        spent: { engineStarts: 1, pointRuns: 2 },
      },
      { log: (l) => lines.push(l) },
    )
    expect(lines).toContain("servegate ab: slot 2 of 4 — B (round 1): the PR's first sweep, measured on an engine start of its own before the job")
    // Slots 1, 3 and 4 started an engine; slot 2 is the first sweep's start.
    expect(out.schedule.starts.map((s) => `${s.side}${s.slots.join(',')}`)).toEqual(['A1', 'B3', 'A4'])
    const b = parseResult(JSON.parse(readFileSync(join(outDir, 'b.json'), 'utf8')), 'b.json')
    expect(b.points.map((p) => p.runs.length)).toEqual([2, 2])
    expect(b.points.map((p) => [p.runs[0]!.seed, p.runs[0]!.itl_ms])).toEqual(first.points.map((p) => [p.runs[0]!.seed, p.runs[0]!.itl_ms]))
    // The first sweep's start and its 2 point-runs are counted once: 1 + 3 starts, 2 + 6 point-runs.
    expect(out.verdict.cost).toMatchObject({ engine_starts: 4, point_runs: 8 })
  }, 120_000)
})
