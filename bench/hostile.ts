/**
 * A hostile server beside clean streams: does a mix of misbehaving requests
 * (endless keep-alive comments, tokens past max_tokens, a one-byte trickle, an
 * 8 MiB SSE line) at C = 256 spoil the timestamps of the clean streams measured
 * alongside them? Runs the same load twice against the built-in simulator in
 * deterministic mode (ground truth per token), first with no faults, then with
 * each misbehaviour on a share of the requests, and prints for each: the clean
 * streams' |ITL error| p50 / p99 against the simulator's send times, errors by
 * kind, the load thread's event-loop delay p99, token events/s, wall time and
 * the process's peak RSS. The bound to keep (the client-accuracy bound of
 * docs/validity.md): |ITL error| p50 ≤ 0.5 ms and p99 ≤ 5 ms on clean streams.
 * Exit 1 when a clean stream failed, a misbehaving one was not ended by the
 * deadline or a cap, or the bound broke with faults but not without.
 *
 *   node --expose-gc --import tsx bench/hostile.ts [--concurrency 256] [--itl-ms 40]
 *     [--tokens 64] [--rounds 3] [--share 0.05] [--deadline-s 4] [--kinds keepalive,overrun,trickle,huge-line]
 *     [--huge-line-bytes 8388608]
 */
import { availableParallelism, loadavg } from 'node:os'
import { startSim } from '../src/sim/index.js'
import type { FaultKind } from '../src/sim/options.js'
import { runPoint } from '../src/load/run-point.js'
import { absPct } from './lib/percentile.js'
import type { PlannedRequest, RawRun } from '../src/types.js'
import { summarizeRun } from '../src/metrics/summarize.js'
import { assessValidity } from '../src/analysis/validity.js'

function flag(name: string, def: string): string {
  const i = process.argv.indexOf(`--${name}`)
  return i >= 0 ? (process.argv[i + 1] ?? def) : def
}
const C = Number(flag('concurrency', '256'))
const ITL_MS = Number(flag('itl-ms', '40'))
const TOKENS = Number(flag('tokens', '64'))
const ROUNDS = Number(flag('rounds', '3'))
const SHARE = Number(flag('share', '0.05'))
const DEADLINE_S = Number(flag('deadline-s', '4'))
const HUGE_LINE_BYTES = Number(flag('huge-line-bytes', String(8 << 20)))
const KINDS = flag('kinds', 'keepalive,overrun,trickle,huge-line').split(',') as FaultKind[]
const P50_LIMIT_MS = 0.5
const P99_LIMIT_MS = 5

function requests(root: string, n: number, tag: string): PlannedRequest[] {
  return Array.from({ length: n }, (_, i) => ({
    id: `${tag}-${i}`,
    url: `${root}/v1/completions`,
    body: JSON.stringify({
      model: 'servegate/sim-model',
      prompt: [1000 + i, 2, 3, 4],
      max_tokens: TOKENS,
      stream: true,
      stream_options: { include_usage: true },
      ignore_eos: true,
    }),
    headers: { 'content-type': 'application/json' },
    api: 'completions' as const,
    promptTokens: 4,
    maxTokens: TOKENS,
  }))
}

interface Outcome {
  label: string
  p50: number
  p99: number
  clean: number
  cleanFailed: number
  errors: Record<string, number>
  run: RawRun
  wallS: number
  peakRssMiB: number
  /** Whether servegate's own client_saturated rule marked the run invalid. */
  saturated: boolean
}

async function measure(label: string, faults: Array<{ kind: FaultKind; rate: number }>, tag: string): Promise<Outcome> {
  const sim = await startSim({ ttftMs: 20, itlMs: ITL_MS, seed: 11, faults, hugeLineBytes: HUGE_LINE_BYTES, traceLimit: C * (ROUNDS + 2) })
  let peak = 0
  const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 100)
  try {
    const t0 = Date.now()
    const run = await runPoint({
      warmup: requests(sim.url, C, `${tag}w`),
      measured: requests(sim.url, C * ROUNDS, `${tag}m`),
      concurrency: C,
      workers: 'auto',
      deadlineMs: DEADLINE_S * 1000,
    })
    const wallS = (Date.now() - t0) / 1000
    const errs: number[] = []
    const errors: Record<string, number> = {}
    let clean = 0
    let cleanFailed = 0
    for (const r of run.records) {
      const t = sim.trace(r.id)
      const faulted = t?.fault !== null && t?.fault !== undefined
      if (r.error !== null) {
        errors[r.error.kind] = (errors[r.error.kind] ?? 0) + 1
        if (!faulted) cleanFailed++
        continue
      }
      if (faulted || t === undefined) continue
      clean++
      for (let i = 1; i < t.chunkSendNs.length && i < r.chunkArrivalsMs.length; i++) {
        const client = (r.chunkArrivalsMs[i] as number) - (r.chunkArrivalsMs[i - 1] as number)
        errs.push(client - Number((t.chunkSendNs[i] as bigint) - (t.chunkSendNs[i - 1] as bigint)) / 1e6)
      }
    }
    const summary = summarizeRun(run, { repeat: 1, seed: 0, numPrompts: run.records.length })
    const saturated = assessValidity(summary, { concurrency: C, ignoreEos: true, expectPrefixCacheMisses: false }).issues.some(
      (i) => i.code === 'client_saturated',
    )
    return { label, p50: absPct(errs, 50), p99: absPct(errs, 99), clean, cleanFailed, errors, run, wallS, peakRssMiB: peak / 2 ** 20, saturated }
  } finally {
    clearInterval(sampler)
    await sim.close()
  }
}

const f = (x: number, w: number, d: number): string => x.toFixed(d).padStart(w)

async function main(): Promise<void> {
  console.log(
    `hostile: C=${C}, ${TOKENS} tokens at ${ITL_MS} ms, ${ROUNDS} rounds of C measured, deadline ${DEADLINE_S} s; faults ${KINDS.join(', ')} on ${(SHARE * 100).toFixed(0)} % of requests each; ` +
      `${availableParallelism()} cores, load average ${loadavg()[0]?.toFixed(2)}`,
  )
  const clean = await measure('clean only', [], 'c')
  const hostile = await measure(
    'with faults',
    KINDS.map((kind) => ({ kind, rate: SHARE })),
    'h',
  )
  console.log('load          clean streams  |err| p50 ms  p99 ms  ELD p99 ms   events/s  wall s  peak RSS MiB  client_saturated  errors by kind')
  for (const o of [clean, hostile]) {
    console.log(
      `${o.label.padEnd(12)}  ${f(o.clean, 13, 0)}  ${f(o.p50, 12, 3)}  ${f(o.p99, 6, 2)}  ${f(o.run.client.eventLoopDelayP99Ms, 10, 2)}  ${f(o.run.client.eventsPerSecond, 9, 0)}  ` +
        `${f(o.wallS, 6, 1)}  ${f(o.peakRssMiB, 12, 0)}  ${(o.saturated ? 'fired' : '-').padStart(16)}  ${JSON.stringify(o.errors)}`,
    )
  }
  const kept = (o: Outcome): boolean => o.p50 <= P50_LIMIT_MS && o.p99 <= P99_LIMIT_MS
  console.log(
    `bound (p50 ≤ ${P50_LIMIT_MS} ms, p99 ≤ ${P99_LIMIT_MS} ms): clean only ${kept(clean) ? 'kept' : 'BROKE'}, with faults ${kept(hostile) ? 'kept' : 'BROKE'}; p99 ratio with/without faults ${(hostile.p99 / clean.p99).toFixed(2)}`,
  )
  const problems: string[] = []
  if (clean.cleanFailed + hostile.cleanFailed > 0) problems.push(`${clean.cleanFailed + hostile.cleanFailed} clean requests failed`)
  const faultedEnded = Object.values(hostile.errors).reduce((a, b) => a + b, 0)
  if (faultedEnded === 0) problems.push('no misbehaving request was counted')
  // A broken bound that servegate flags itself (client_saturated: the run is invalid, never gated) is
  // honest; one it does not flag would be a silently wrong number.
  if (kept(clean) && !kept(hostile) && !hostile.saturated) problems.push("the faults broke the clean streams' accuracy bound and client_saturated did not fire")
  if (problems.length > 0) throw new Error(problems.join('; '))
}

await main().catch((err: unknown) => {
  console.error(`hostile: ${err instanceof Error ? err.message : String(err)}`)
  process.exit(1)
})
