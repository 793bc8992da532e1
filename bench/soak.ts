/**
 * Soak: does the client hold C = 1,024 streams for minutes without its memory
 * growing, its event loop stalling or a request failing? The simulator runs in
 * a child process (deterministic mode, so its own memory is not counted here);
 * this process runs the load exactly as `servegate run` does (runPoint, load
 * threads), in back-to-back rounds of a few waves each, and after every round
 * prints the process's RSS and main-thread heap (after a GC when --expose-gc
 * is given), the load threads' event-loop delay p99 and utilisation, token
 * events/s and failed requests. The last lines give RSS and heap at the end
 * of warmup (round --warm-rounds) and at the end, and the growth between them.
 *
 * It fails (exit 1) when a request fails or when RSS grew by more than
 * --max-growth-mb after warmup.
 *
 *   node --expose-gc --import tsx bench/soak.ts [--concurrency 1024] [--minutes 10]
 *     [--itl-ms 50] [--tokens 256] [--waves 4] [--workers auto] [--max-growth-mb 64] [--warm-rounds 2]
 */
import { spawn } from 'node:child_process'
import { availableParallelism, loadavg } from 'node:os'
import { runPoint } from '../src/load/run-point.js'
import type { PlannedRequest } from '../src/types.js'

function flag(name: string, def: string): string {
  const i = process.argv.indexOf(`--${name}`)
  return i >= 0 ? (process.argv[i + 1] ?? def) : def
}
const C = Number(flag('concurrency', '1024'))
const MINUTES = Number(flag('minutes', '10'))
const ITL_MS = Number(flag('itl-ms', '50'))
const TOKENS = Number(flag('tokens', '256'))
const WAVES = Number(flag('waves', '4'))
const WORKERS_FLAG = flag('workers', 'auto')
const WORKERS: number | 'auto' = WORKERS_FLAG === 'auto' ? 'auto' : Number(WORKERS_FLAG)
const MAX_GROWTH_MB = Number(flag('max-growth-mb', '64'))
// Rounds before memory is taken as warm: pools, JIT and the allocator's arenas settle over the
// first two (here RSS rose 142 → 177 MiB from round 1 to 2, then stayed within 2.5 MiB).
const WARM_ROUNDS = Number(flag('warm-rounds', '2'))
const MODEL = 'servegate/sim-model'

/** The simulator as its own process: `servegate sim` on a free port. */
async function startSimProcess(): Promise<{ url: string; stop: () => void }> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli.ts', 'sim', '--port', '0', '--ttft-ms', '20', '--itl-ms', String(ITL_MS)], {
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  const url = await new Promise<string>((resolve, reject) => {
    let text = ''
    const onData = (b: Buffer): void => {
      text += b.toString()
      const m = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(text)
      if (m) resolve(m[1]!)
    }
    child.stdout!.on('data', onData)
    child.stderr!.on('data', onData)
    child.once('exit', (code) => reject(new Error(`the simulator exited (${code}) before listening: ${text}`)))
  })
  return { url, stop: () => void child.kill('SIGTERM') }
}

let serial = 0
function requests(url: string, n: number, maxTokens: number): PlannedRequest[] {
  return Array.from({ length: n }, () => {
    const i = serial++
    return {
      id: `soak-${i}`,
      url: `${url}/v1/completions`,
      body: JSON.stringify({
        model: MODEL,
        prompt: [1000 + (i % 20000), 2, 3, 4],
        max_tokens: maxTokens,
        stream: true,
        stream_options: { include_usage: true },
        ignore_eos: true,
      }),
      headers: { 'content-type': 'application/json' },
      api: 'completions' as const,
      promptTokens: 4,
      maxTokens,
    }
  })
}

const mb = (bytes: number): number => bytes / 2 ** 20
const f = (x: number, w: number, d: number): string => x.toFixed(d).padStart(w)
const gc = (globalThis as { gc?: () => void }).gc

function memory(): { rss: number; heap: number } {
  gc?.()
  const m = process.memoryUsage()
  return { rss: mb(m.rss), heap: mb(m.heapUsed) }
}

async function main(): Promise<void> {
  const sim = await startSimProcess()
  try {
    const roundS = (WAVES * (20 + TOKENS * ITL_MS)) / 1000
    const rounds = Math.max(WARM_ROUNDS + 1, Math.ceil((MINUTES * 60) / roundS))
    console.log(
      `soak: C=${C}, ${TOKENS} tokens at ${ITL_MS} ms (≈ ${Math.round((C * 1000) / ITL_MS)} token events/s), ${rounds} rounds of ${WAVES} waves (≈ ${roundS.toFixed(0)} s each), workers ${WORKERS_FLAG}; ` +
        `${availableParallelism()} cores, load average ${loadavg()[0]?.toFixed(2)}, GC between rounds: ${gc ? 'yes' : 'no (run with --expose-gc)'}`,
    )
    const start = memory()
    console.log(`start: RSS ${start.rss.toFixed(1)} MiB, heap ${start.heap.toFixed(1)} MiB`)
    console.log('round  elapsed s  requests  failed   events/s  ELD p99 ms   ELU  RSS MiB  heap MiB')
    const t0 = Date.now()
    let failed = 0
    const mem: Array<{ rss: number; heap: number }> = []
    const eld: number[] = []
    const eps: number[] = []
    for (let r = 1; r <= rounds; r++) {
      const run = await runPoint({ warmup: [], measured: requests(sim.url, C * WAVES, TOKENS), concurrency: C, workers: WORKERS })
      const bad = run.records.filter((x) => x.error !== null)
      failed += bad.length
      if (bad.length > 0) console.log(`  failed: ${[...new Set(bad.map((x) => `${x.error!.kind}: ${x.error!.detail}`))].slice(0, 3).join(' | ')}`)
      const m = memory()
      mem.push(m)
      eld.push(run.client.eventLoopDelayP99Ms)
      eps.push(run.client.eventsPerSecond)
      console.log(
        `${f(r, 5, 0)}  ${f((Date.now() - t0) / 1000, 9, 0)}  ${f(run.records.length, 8, 0)}  ${f(bad.length, 6, 0)}  ${f(run.client.eventsPerSecond, 9, 0)}  ` +
          `${f(run.client.eventLoopDelayP99Ms, 10, 2)}  ${f(run.client.eventLoopUtilization, 4, 2)}  ${f(m.rss, 7, 1)}  ${f(m.heap, 8, 1)}`,
      )
    }
    const warm = mem[WARM_ROUNDS - 1]!
    const end = mem[mem.length - 1]!
    const growth = end.rss - warm.rss
    console.log(
      `after warmup (round ${WARM_ROUNDS}): RSS ${warm.rss.toFixed(1)} MiB, heap ${warm.heap.toFixed(1)} MiB; end: RSS ${end.rss.toFixed(1)} MiB, heap ${end.heap.toFixed(1)} MiB`,
    )
    console.log(
      `growth after warmup: RSS ${growth >= 0 ? '+' : ''}${growth.toFixed(1)} MiB, heap ${end.heap - warm.heap >= 0 ? '+' : ''}${(end.heap - warm.heap).toFixed(1)} MiB over ${rounds - WARM_ROUNDS} rounds; ` +
        `max RSS ${Math.max(...mem.map((m) => m.rss)).toFixed(1)} MiB; ELD p99 worst ${Math.max(...eld).toFixed(2)} ms; token events/s median ${[...eps].sort((a, b) => a - b)[Math.floor(eps.length / 2)]!.toFixed(0)}; failed requests ${failed}`,
    )
    if (failed > 0) throw new Error(`${failed} requests failed`)
    if (growth > MAX_GROWTH_MB) throw new Error(`RSS grew by ${growth.toFixed(1)} MiB after warmup (limit ${MAX_GROWTH_MB} MiB)`)
  } finally {
    sim.stop()
  }
}

await main().catch((err: unknown) => {
  console.error(`soak: ${err instanceof Error ? err.message : String(err)}`)
  process.exit(1)
})
