/**
 * Can the simulator hold 1,024 concurrent streams on this machine, and at what
 * token event rate? The simulator runs in a child process (as it would beside
 * a real client); this process drives N streams through one undici Agent and
 * counts every content chunk. It refuses to report if any stream failed, any
 * stream's chunk count or usage differs from max_tokens, or the server did not
 * see all N streams running at once.
 *
 *   npx tsx bench/sim-capacity.ts [--streams 1024] [--tokens 256] [--ttft-ms 1000] [--itl-ms 20]
 */
import { spawn } from 'node:child_process'
import { createInterface } from 'node:readline'
import { fileURLToPath } from 'node:url'
import { Agent, request } from 'undici'
import { startSim } from '../src/sim/index.js'

function arg(name: string, def: number): number {
  const i = process.argv.indexOf(`--${name}`)
  const v = i >= 0 ? Number(process.argv[i + 1]) : def
  if (!Number.isFinite(v) || v <= 0) throw new Error(`--${name} must be a positive number`)
  return v
}

const STREAMS = arg('streams', 1024)
const TOKENS = arg('tokens', 256)
// A long TTFT lets all N connections open before tokens flow, so the steady window is long.
const TTFT_MS = arg('ttft-ms', 1000)
const ITL_MS = arg('itl-ms', 20)

async function serve(): Promise<void> {
  const sim = await startSim({ ttftMs: TTFT_MS, itlMs: ITL_MS, port: 0, traceLimit: 16 })
  process.stdout.write(`${JSON.stringify({ url: sim.url })}\n`)
  process.stdin.resume()
  process.stdin.on('end', () => void sim.close().then(() => process.exit(0)))
}

interface StreamStat {
  chunks: number
  usage: number | null
  done: boolean
  error: string | null
  firstNs: bigint
  lastNs: bigint
}

const NEEDLE = Buffer.from('"text":" tok')
const BUCKET_NS = 100_000_000n
/** Token events received per 100 ms since the run's start. */
const perBucket: number[] = []
let runStartNs = 0n

/** One stream: count content chunks by their marker without parsing JSON (keeps the client cheap). */
async function runStream(url: string, agent: Agent, body: string, id: number): Promise<StreamStat> {
  const st: StreamStat = { chunks: 0, usage: null, done: false, error: null, firstNs: 0n, lastNs: 0n }
  let carry: Buffer = Buffer.alloc(0)
  try {
    const res = await request(`${url}/v1/completions`, {
      method: 'POST',
      body,
      headers: { 'content-type': 'application/json', 'x-request-id': `cap-${id}` },
      dispatcher: agent,
    })
    if (res.statusCode !== 200) {
      st.error = `HTTP ${res.statusCode}`
      await res.body.text()
      return st
    }
    for await (const chunk of res.body) {
      const at = process.hrtime.bigint()
      const buf = carry.length > 0 ? Buffer.concat([carry, chunk as Buffer]) : (chunk as Buffer)
      let from = 0
      let n = 0
      for (let i = buf.indexOf(NEEDLE, from); i >= 0; i = buf.indexOf(NEEDLE, from)) {
        n++
        from = i + NEEDLE.length
      }
      if (n > 0) {
        const b = Number((at - runStartNs) / BUCKET_NS)
        perBucket[b] = (perBucket[b] ?? 0) + n
        if (st.chunks === 0) st.firstNs = at
        st.lastNs = at
        st.chunks += n
      }
      carry = buf.subarray(Math.max(from, buf.length - NEEDLE.length + 1))
      if (buf.includes('"usage"')) {
        const m = /"completion_tokens":(\d+)/.exec(buf.toString('latin1'))
        if (m) st.usage = Number(m[1])
      }
      if (buf.includes('data: [DONE]')) st.done = true
    }
  } catch (err) {
    st.error = (err as Error).message
  }
  return st
}

async function metric(url: string, name: string): Promise<number> {
  const text = await (await fetch(`${url}/metrics`)).text()
  const m = new RegExp(`^${name}\\{[^}]*\\} (\\S+)$`, 'm').exec(text)
  return m ? Number(m[1]) : Number.NaN
}

async function main(): Promise<void> {
  const child = spawn(process.execPath, [...process.execArgv, fileURLToPath(import.meta.url), '--serve', ...process.argv.slice(2)], {
    stdio: ['pipe', 'pipe', 'inherit'],
  })
  const first = await new Promise<string>((resolve, reject) => {
    createInterface({ input: child.stdout }).once('line', resolve)
    child.once('exit', (code) => reject(new Error(`simulator exited with ${code}`)))
  })
  const { url } = JSON.parse(first) as { url: string }
  const agent = new Agent({ connections: STREAMS + 8, pipelining: 1, keepAliveTimeout: 60_000 })
  const body = JSON.stringify({
    prompt: Array.from({ length: 16 }, (_, i) => i + 1),
    max_tokens: TOKENS,
    ignore_eos: true,
    stream: true,
    stream_options: { include_usage: true },
  })
  const startNs = process.hrtime.bigint()
  runStartNs = startNs
  const all = Array.from({ length: STREAMS }, (_, i) => runStream(url, agent, body, i))
  // Poll the server's own count until every stream runs at once (or the streams end).
  let finished = false
  const statsP = Promise.all(all).then((s) => ((finished = true), s))
  let runningMid = 0
  while (!finished && runningMid < STREAMS) {
    await new Promise((r) => setTimeout(r, 200))
    if (!finished) runningMid = Math.max(runningMid, await metric(url, 'vllm:num_requests_running'))
  }
  const stats = await statsP
  const endNs = process.hrtime.bigint()
  const itlSum = await metric(url, 'vllm:inter_token_latency_seconds_sum')
  const itlCount = await metric(url, 'vllm:inter_token_latency_seconds_count')
  child.stdin.end()
  await agent.close()

  const problems: string[] = []
  const failed = stats.filter((s) => s.error !== null)
  if (failed.length > 0) problems.push(`${failed.length} streams failed (first: ${failed[0]?.error})`)
  const wrong = stats.filter((s) => s.error === null && (s.chunks !== TOKENS || s.usage !== TOKENS || !s.done))
  if (wrong.length > 0) problems.push(`${wrong.length} streams had wrong counts (first: ${JSON.stringify(wrong[0])}`)
  if (runningMid !== STREAMS) problems.push(`server saw at most ${runningMid} streams running at once, expected ${STREAMS}`)
  if (problems.length > 0) {
    process.stderr.write(`sim-capacity: NOT REPORTING, the run is wrong:\n  ${problems.join('\n  ')}\n`)
    process.exitCode = 1
    return
  }
  const events = stats.reduce((a, s) => a + s.chunks, 0)
  // Steady window: after the last stream's first chunk, before the first stream's last chunk.
  const steadyFrom = stats.reduce((m, s) => (s.firstNs > m ? s.firstNs : m), 0n)
  const steadyTo = stats.reduce((m, s) => (s.lastNs < m ? s.lastNs : m), endNs)
  const wallS = Number(endNs - startNs) / 1e9
  // Whole 100 ms buckets inside the steady window.
  const b0 = Number((steadyFrom - startNs) / BUCKET_NS) + 1
  const b1 = Number((steadyTo - startNs) / BUCKET_NS) - 1
  let steadyEvents = 0
  for (let b = b0; b < b1; b++) steadyEvents += perBucket[b] ?? 0
  const steadyRate = b1 > b0 ? steadyEvents / ((b1 - b0) * 0.1) : Number.NaN
  const clientItl = stats.map((s) => Number(s.lastNs - s.firstNs) / 1e6 / (s.chunks - 1)).sort((a, b) => a - b)
  const ideal = (STREAMS * 1000) / ITL_MS
  const lines = [
    `sim-capacity: ${STREAMS} concurrent streams × ${TOKENS} tokens (deterministic TTFT ${TTFT_MS} ms, ITL ${ITL_MS} ms), simulator in a child process`,
    `  all ${STREAMS} streams completed, ${events} token events, server saw ${runningMid} running at once`,
    `  event rate over the run: ${(events / wallS).toFixed(0)} /s (wall ${wallS.toFixed(2)} s)`,
    b1 > b0
      ? `  SUSTAINED token event rate with all ${STREAMS} streams open: ${steadyRate.toFixed(0)} /s over ${((b1 - b0) * 0.1).toFixed(1)} s (the schedule asks for ${ideal.toFixed(0)} /s)`
      : '  no whole 100 ms window with all streams open (the ramp outlasted the streams; use more --tokens)',
    `  per-stream mean ITL at the client: p50 ${clientItl[Math.floor(clientItl.length / 2)]?.toFixed(2)} ms, max ${clientItl.at(-1)?.toFixed(2)} ms (target ${ITL_MS} ms)`,
    `  server-side mean ITL: ${((itlSum / itlCount) * 1000).toFixed(2)} ms`,
  ]
  process.stdout.write(`${lines.join('\n')}\n`)
}

if (process.argv.includes('--serve')) void serve()
else void main()
