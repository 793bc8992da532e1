/**
 * Does a sharded sweep measure what one client measures? Against the built-in simulator in
 * deterministic mode (a server process of its own), one sweep at total concurrency C is measured
 * by one client (`servegate run`) and by N = 1, 2, 4 shards (`servegate run --shard I/N`, N
 * processes over loopback, one --start-at), then merged (`servegate merge`). For each N it prints
 * the merged TTFT and ITL percentiles beside the single client's, their difference against the
 * client's own error bound (docs/accuracy.md: |ITL error| p50 ≤ 0.5 ms, p99 ≤ 5 ms), how far the
 * merged percentiles are from those recomputed here from every shard's records by an exact sort
 * (the histogram keeps values to ±0.0005 ms), and the shards' alignment. It runs the committed
 * bundle (bin/servegate.js → dist/cli.js), as a user would.
 *
 *   npx tsx bench/shards.ts [--concurrency 16] [--tokens 32] [--itl-ms 10] [--prompts 8] [--repeats 2] [--shards 1,2,4]
 */
import { spawn } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { gunzipSync } from 'node:zlib'
import type { ResultFile, RunResult, ShardRunRecords } from '../src/types.js'

function flag(name: string, def: string): string {
  const i = process.argv.indexOf(`--${name}`)
  return i >= 0 ? (process.argv[i + 1] ?? def) : def
}
const C = Number(flag('concurrency', '16'))
const TOKENS = Number(flag('tokens', '32'))
const ITL_MS = Number(flag('itl-ms', '10'))
const PROMPTS = Number(flag('prompts', '8'))
const REPEATS = Number(flag('repeats', '2'))
const SHARDS = flag('shards', '1,2,4').split(',').map(Number)
const TTFT_MS = 20
// The client's own error bound (docs/accuracy.md).
const P50_BOUND = 0.5
const P99_BOUND = 5

const CLI = fileURLToPath(new URL('../bin/servegate.js', import.meta.url))
const dir = mkdtempSync(join(tmpdir(), 'servegate-bench-shards-'))

function cli(args: string[]): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [CLI, ...args], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, CI: '1' } })
    let out = ''
    child.stdout.on('data', (b: Buffer) => (out += b.toString()))
    child.stderr.on('data', (b: Buffer) => (out += b.toString()))
    child.on('close', (code) => resolve({ code, out }))
  })
}

/** The simulator in a process of its own; resolves with its URL and a stop function. */
function startSim(): Promise<{ url: string; stop: () => void }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI, 'sim', '--port', '0', '--ttft-ms', String(TTFT_MS), '--itl-ms', String(ITL_MS)], {
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    let text = ''
    const onData = (b: Buffer): void => {
      text += b.toString()
      const m = /http:\/\/127\.0\.0\.1:\d+/.exec(text)
      if (m) {
        child.stdout.off('data', onData)
        child.stderr.off('data', onData)
        resolve({ url: m[0], stop: () => void child.kill('SIGTERM') })
      }
    }
    child.stdout.on('data', onData)
    child.stderr.on('data', onData)
    child.on('exit', (code) => reject(new Error(`simulator exited (${code}): ${text}`)))
  })
}

const sweepArgs = (url: string): string[] => [
  'run',
  '--base-url',
  url,
  '--input-len',
  '32',
  '--output-len',
  String(TOKENS),
  '--concurrency',
  String(C),
  '--prompts-per-concurrency',
  String(PROMPTS),
  '--repeats',
  String(REPEATS),
]

/** numpy's linear percentile. */
function percentile(values: number[], p: number): number {
  const x = [...values].sort((a, b) => a - b)
  const h = ((x.length - 1) * p) / 100
  const lo = Math.floor(h)
  return x[lo]! + (h - lo) * (x[Math.ceil(h)]! - x[lo]!)
}

const median = (xs: number[]): number => percentile(xs, 50)
const validRuns = (r: ResultFile): RunResult[] => r.points.flatMap((p) => p.runs).filter((x) => x.validity.valid)
const across = (runs: RunResult[], f: (r: RunResult) => number | null): number => median(runs.map(f).filter((x): x is number => x !== null))

async function main(): Promise<void> {
  const sim = await startSim()
  const rows: string[] = []
  try {
    const single = await cli([...sweepArgs(sim.url), '--out', join(dir, 'single.json')])
    if (single.code !== 0) throw new Error(`single client failed:\n${single.out}`)
    const one = JSON.parse(readFileSync(join(dir, 'single.json'), 'utf8')) as ResultFile
    const ref = validRuns(one)
    const slotS = Math.ceil(((TTFT_MS + (TOKENS - 1) * ITL_MS) * (PROMPTS + 2)) / 1000 / 0.75 + 1)
    for (const n of SHARDS) {
      const start = new Date(Math.ceil((Date.now() + 4000) / 1000) * 1000).toISOString()
      const files = Array.from({ length: n }, (_, i) => join(dir, `n${n}-shard-${i}.json`))
      const runs = await Promise.all(
        files.map((out, i) => cli([...sweepArgs(sim.url), '--shard', `${i}/${n}`, '--start-at', start, '--slot', String(slotS), '--out', out])),
      )
      for (const r of runs) if (r.code !== 0) throw new Error(`a shard failed:\n${r.out}`)
      const mergedPath = join(dir, `n${n}.json`)
      const m = await cli(['merge', ...files, '--out', mergedPath])
      const merged = JSON.parse(readFileSync(mergedPath, 'utf8')) as ResultFile
      const valid = validRuns(merged)
      // Every record of every shard, grouped by repeat: the exact percentiles of the union.
      const entries = files.flatMap((f) => {
        const rec = (JSON.parse(readFileSync(f, 'utf8')) as ResultFile).shard!.records
        return gunzipSync(readFileSync(join(dir, rec)))
          .toString('utf8')
          .trim()
          .split('\n')
          .map((l) => JSON.parse(l) as ShardRunRecords)
      })
      let exactUs = 0
      for (const run of merged.points.flatMap((p) => p.runs)) {
        const done = entries
          .filter((e) => e.repeat === run.repeat)
          .flatMap((e) => e.raw.records)
          .filter((r) => r.error === null && r.ttftMs !== null)
        const gaps = done.flatMap((r) => r.chunkArrivalsMs.slice(1).map((t, k) => t - r.chunkArrivalsMs[k]!))
        for (const q of [50, 95, 99] as const) {
          exactUs = Math.max(exactUs, Math.abs(run.itl_ms[`p${q}`]! - percentile(gaps, q)) * 1000)
          exactUs = Math.max(
            exactUs,
            Math.abs(
              run.ttft_ms[`p${q}`]! -
                percentile(
                  done.map((r) => r.ttftMs!),
                  q,
                ),
            ) * 1000,
          )
        }
      }
      const f = (x: number): string => x.toFixed(2)
      const d = (x: number): string => `${x >= 0 ? '+' : ''}${x.toFixed(2)}`
      const itl50 = across(valid, (r) => r.itl_ms.p50)
      const itl99 = across(valid, (r) => r.itl_ms.p99)
      const ttft50 = across(valid, (r) => r.ttft_ms.p50)
      const ttft99 = across(valid, (r) => r.ttft_ms.p99)
      const dItl50 = itl50 - across(ref, (r) => r.itl_ms.p50)
      const dItl99 = itl99 - across(ref, (r) => r.itl_ms.p99)
      const dTtft50 = ttft50 - across(ref, (r) => r.ttft_ms.p50)
      const dTtft99 = ttft99 - across(ref, (r) => r.ttft_ms.p99)
      const within = Math.abs(dItl50) <= P50_BOUND && Math.abs(dTtft50) <= P50_BOUND && Math.abs(dItl99) <= P99_BOUND && Math.abs(dTtft99) <= P99_BOUND
      const spread = Math.max(...merged.points.flatMap((p) => p.runs).map((r) => r.shards!.alignment.measure_spread_ms))
      const split = merged.points[0]!.runs[0]!.shards!.parts.map((p) => p.concurrency).join('+')
      rows.push(
        `| ${n} | ${split} | ${valid.length}/${REPEATS} | ${f(ttft50)} / ${f(ttft99)} | ${f(itl50)} / ${f(itl99)} | ${d(dTtft50)} / ${d(dTtft99)} | ${d(dItl50)} / ${d(dItl99)} | ${within ? 'yes' : 'NO'} | ${exactUs.toFixed(2)} µs | ${spread.toFixed(1)} ms |`,
      )
      if (m.code !== 0)
        rows.push(
          `|   | merge exit ${m.code}: ${m.out
            .split('\n')
            .filter((l) => /invalid|UNALIGNED/.test(l))
            .join(' ')} |`,
        )
    }
    const f = (x: number): string => x.toFixed(2)
    console.log(
      `\nC = ${C}, ${TOKENS} tokens out, simulator ITL ${ITL_MS} ms, TTFT ${TTFT_MS} ms, ${PROMPTS} prompts a slot, ${REPEATS} repeats; load average ${loadavg()[0]!.toFixed(2)} at the end`,
    )
    console.log(
      `One client: TTFT p50 / p99 ${f(across(ref, (r) => r.ttft_ms.p50))} / ${f(across(ref, (r) => r.ttft_ms.p99))} ms, ITL p50 / p99 ${f(across(ref, (r) => r.itl_ms.p50))} / ${f(across(ref, (r) => r.itl_ms.p99))} ms (${ref.length}/${REPEATS} valid runs)\n`,
    )
    console.log(
      '| shards | split of C | valid runs | TTFT p50 / p99 ms | ITL p50 / p99 ms | TTFT Δ vs one client | ITL Δ vs one client | within the client bound | merged vs exact, max | measured starts apart, max |',
    )
    console.log('|---|---|---|---|---|---|---|---|---|---|')
    for (const r of rows) console.log(r)
  } finally {
    sim.stop()
    rmSync(dir, { recursive: true, force: true })
  }
}

await main()
