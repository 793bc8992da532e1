/**
 * Writes the gate's catalogue of candidates: real sweeps against the built-in
 * simulator, each with one thing wrong (a fault at a rate around the failed-request
 * budget, another chunking, an early stop, skewed usage, a vocabulary the prompts
 * overrun, a starved client, a missing point, other settings, another model), plus
 * the unchanged engine and a slower one. test/gate/catalogue.test.ts reads the files
 * and checks that no candidate the gate did not measure validly ever exits 0.
 *
 *   npx tsx scripts/gate-catalogue.ts [--only NAME,NAME]
 *
 * Takes about five minutes on 2 cores. The files are committed, so the property test
 * runs in seconds; run this again when the result format or the fingerprint changes.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { mkdirSync, rmSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { resolveConfig, type RunFlags } from '../src/config/resolve.js'
import { startSim, type SimOptions } from '../src/sim/index.js'
import { readResultFile, writeResultFile } from '../src/store/result-file.js'
import { runSweep } from '../src/sweep/run-sweep.js'
import type { ResultFile } from '../src/types.js'

const OUT = join(dirname(fileURLToPath(import.meta.url)), '..', 'test', 'fixtures', 'gate-catalogue')

/** The gated sweep every baseline refresh and candidate of the catalogue runs, unless an entry edits it. */
// 10 requests of 15 gaps per run: the fewest that give a p99 (docs/validity.md, too_few_requests).
const SWEEP: RunFlags = { inputLen: '16', outputLen: '16', concurrency: '1,2', repeats: '3', promptsPerConcurrency: '10', warmup: '2' }
/** Deterministic engine: 10 ms to the first token, then a chunk every 8 ms, whatever the load. */
const ENGINE: Partial<SimOptions> = { ttftMs: 10, itlMs: 8 }

interface Entry {
  name: string
  sim?: Partial<SimOptions>
  flags?: RunFlags
  /** CPU hogs beside the sweep: a busy host whose client cannot keep up. */
  hogs?: number
  /** The result must show this validity code on enough runs that a point keeps fewer than two valid ones, or the entry is measured again (a busy host is not always busy enough). */
  mustShow?: string
}

const fault = (kind: string, rate: number, seed: number): Partial<SimOptions> => ({ faults: [{ kind: kind as never, rate }], seed })

export const ENTRIES: Entry[] = [
  // Baseline refreshes: the unchanged engine, four starts with their own seeds.
  ...[1, 2, 3, 4].map((s) => ({ name: `base-${s}`, sim: { seed: s }, flags: { seed: String(100 + s) } })),
  { name: 'unchanged', sim: { seed: 7 }, flags: { seed: '107' } },
  { name: 'slower-15pct', sim: { seed: 8, slowdown: 1.15 }, flags: { seed: '108' } },
  { name: 'slower-3x', sim: { seed: 9, slowdown: 3 }, flags: { seed: '109' } },
  // Case 1: the engine measured on a busy host, unchanged and 15 % slower.
  { name: 'busy-host-unchanged', sim: { seed: 10 }, flags: { seed: '110' }, hogs: 16, mustShow: 'client_saturated' },
  { name: 'busy-host-slower', sim: { seed: 10, slowdown: 1.15 }, flags: { seed: '110' }, hogs: 16, mustShow: 'client_saturated' },
  // Case 2: the whole answer in one chunk; case 8: twice the tokens per chunk (chunk gaps grow, per-token gaps do not).
  { name: 'one-chunk', sim: { seed: 11, tokensPerChunk: 16 }, flags: { seed: '111' } },
  { name: 'two-tokens-per-chunk', sim: { seed: 12, tokensPerChunk: 2 }, flags: { seed: '112' } },
  // Every fault kind, at rates around the 1 % failed-request budget (faults are drawn from seed and request id).
  ...(['http500', 'http429', 'disconnect', 'stall', 'malformed', 'stream-error'] as const).flatMap((kind, i) =>
    [0.02, 0.1].map((rate, j) => ({
      name: `fault-${kind}-${rate}`,
      sim: { ...fault(kind, rate, 20 + i * 2 + j), stallMs: 200 },
      flags: { seed: String(120 + i * 2 + j) },
    })),
  ),
  { name: 'stop-early', sim: { seed: 13, stopEarlyAt: 12 }, flags: { seed: '113' } },
  { name: 'usage-skew', sim: { seed: 14, usageSkew: 1.5 }, flags: { seed: '114' } },
  // Case 5-like: a point of the gated sweep left out.
  { name: 'missing-point', sim: { seed: 15 }, flags: { seed: '115', concurrency: '1' } },
  { name: 'fewer-repeats', sim: { seed: 16 }, flags: { seed: '116', repeats: '2' } },
  // Edited settings: another warmup, another prompt count, another deadline.
  { name: 'other-warmup', sim: { seed: 17 }, flags: { seed: '117', warmup: '3' } },
  { name: 'other-prompts', sim: { seed: 18 }, flags: { seed: '118', promptsPerConcurrency: '5' } },
  { name: 'other-deadline', sim: { seed: 19 }, flags: { seed: '119', requestTimeout: '30' } },
  // A foreign baseline: another model.
  ...[1, 2].map((s) => ({ name: `foreign-${s}`, sim: { seed: 30 + s, model: 'servegate/other-model' }, flags: { seed: String(130 + s) } })),
]

function startHogs(n: number): ChildProcess[] {
  return Array.from({ length: n }, () => spawn(process.execPath, ['-e', 'for(;;){}'], { stdio: 'ignore' }))
}

async function measure(e: Entry): Promise<ResultFile> {
  const sim = await startSim({ ...ENGINE, ...e.sim })
  // A try that is measured again must not leave its file behind: the sweep writes beside, the caller keeps the last.
  const out = join(OUT, `.${e.name}.try.json`)
  const hogs = startHogs(e.hogs ?? 0)
  try {
    const cfg = resolveConfig({ file: null, filePath: null, flags: { baseUrl: sim.url, ...SWEEP, ...e.flags, out }, env: {} })
    await runSweep(cfg, { log: () => {} })
  } finally {
    for (const h of hogs) h.kill('SIGKILL')
    await sim.close()
  }
  const result = await readResultFile(out)
  rmSync(out, { force: true })
  return result
}

const shows = (r: ResultFile, code: string): boolean => r.points.some((p) => p.runs.some((run) => run.validity.issues.some((i) => i.code === code)))
// A point left with fewer than two valid runs: a gated metric the gate cannot decide on.
const spoiled = (r: ResultFile, code: string): boolean => shows(r, code) && r.points.some((p) => p.runs.filter((run) => run.validity.valid).length < 2)

async function main(): Promise<void> {
  const onlyAt = process.argv.indexOf('--only')
  const only = onlyAt > 0 ? new Set((process.argv[onlyAt + 1] ?? '').split(',')) : null
  if (only === null) rmSync(OUT, { recursive: true, force: true })
  mkdirSync(OUT, { recursive: true })
  for (const e of ENTRIES.filter((x) => only === null || only.has(x.name))) {
    // A busy entry must show the busy host; every other entry must not (run this on a quiet machine).
    const wanted = (r: ResultFile): boolean => (e.mustShow !== undefined ? spoiled(r, e.mustShow) : !shows(r, 'client_saturated'))
    let r = await measure(e)
    for (let tries = 1; !wanted(r); tries++) {
      if (tries >= 5) throw new Error(`${e.name}: ${e.mustShow ?? 'a quiet client'} not seen in 5 tries`)
      r = await measure(e)
    }
    // Results carry start times and host facts; nothing else is edited.
    await writeResultFile(join(OUT, `${e.name}.json`), r)
    const codes = [...new Set(r.points.flatMap((p) => p.runs.flatMap((run) => run.validity.issues.map((i) => i.code))))]
    console.log(`${e.name}: ${r.points.reduce((n, p) => n + p.runs.length, 0)} runs${codes.length > 0 ? `, ${codes.join(', ')}` : ''}`)
  }
}

await main()
