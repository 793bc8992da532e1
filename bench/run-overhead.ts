/**
 * What a run costs besides its requests, with load threads kept between runs (worker-pool.ts)
 * and with a thread started for every run and terminated after it (how runs were made before).
 * Each round makes RUNS runs of one tiny request-pair at C = 2 on one load thread against a local
 * stream server (10 ms to the first token, 2 tokens 4 ms apart), the two ways in turn; the
 * figure is the wall time per run, median of the rounds, and the ratio. The load thread runs the
 * worker bundled in dist/ (as the CLI does), not the TypeScript sources.
 *
 * Figures on the 2-core development machine (Node 20, nothing else running; 20 runs × 5 rounds):
 *   a thread started for every run  295.5 ms a run
 *   load threads kept between runs   57.6 ms a run   (238 ms saved a run, 5.1×)
 * The requests themselves take ~20 ms of each; the rest of a fresh thread's cost is starting it,
 * loading the worker bundle, compiling the client's code during the warmup, and terminating it.
 *
 *   npx tsx bench/run-overhead.ts [--runs 20] [--rounds 5]
 */
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { runPoint } from '../src/load/run-point.js'
import { LOAD_WORKER_ENV } from '../src/load/worker-entry.js'
import { closeIdleLoadWorkers } from '../src/load/worker-pool.js'
import { plan } from '../test/load/plan-fixture.js'
import { startStreamServer } from '../test/load/stream-server.mjs'

function arg(name: string, def: number): number {
  const i = process.argv.indexOf(`--${name}`)
  const v = i >= 0 ? Number(process.argv[i + 1]) : def
  if (!Number.isInteger(v) || v <= 0) throw new Error(`--${name} must be a positive whole number`)
  return v
}
const RUNS = arg('runs', 20)
const ROUNDS = arg('rounds', 5)

process.env[LOAD_WORKER_ENV] = join(fileURLToPath(new URL('..', import.meta.url)), 'dist', 'load-worker.js')
const server = await startStreamServer({ ttftMs: 10, itlMs: 4 })

/** Wall ms per run over RUNS runs; `fresh`: terminate the thread after each run, so every run starts one. */
async function perRun(fresh: boolean, tag: string): Promise<number> {
  await closeIdleLoadWorkers()
  const t0 = performance.now()
  for (let i = 0; i < RUNS; i++) {
    await runPoint({ warmup: plan(server.url, 2, `${tag}-w${i}`, 2), measured: plan(server.url, 2, `${tag}-m${i}`, 2), concurrency: 2, workers: 1 })
    if (fresh) await closeIdleLoadWorkers()
  }
  return (performance.now() - t0) / RUNS
}

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!
const kept: number[] = []
const fresh: number[] = []
for (let r = 0; r < ROUNDS; r++) {
  kept.push(await perRun(false, `k${r}`))
  fresh.push(await perRun(true, `f${r}`))
}
await closeIdleLoadWorkers()
await server.close()
const k = median(kept)
const f = median(fresh)
console.log(`runs of 2 requests at C = 2, one load thread, ${RUNS} runs × ${ROUNDS} rounds (median of rounds):`)
console.log(`  a thread started for every run  ${f.toFixed(1)} ms a run`)
console.log(`  load threads kept between runs  ${k.toFixed(1)} ms a run`)
console.log(`  saved ${(f - k).toFixed(1)} ms a run (${(f / k).toFixed(2)}×)`)
