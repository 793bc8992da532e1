/**
 * startSim: build the engine for the chosen mode and serve it over node:http
 * on a loopback port. Closing ends every open stream at once.
 */
import { createServer, type Server } from 'node:http'
import type { Socket } from 'node:net'
import { createRng, deriveSeed } from '../util/rng.js'
import { BatchingEngine } from './batching-engine.js'
import type { SimContext } from './context.js'
import { DeterministicEngine } from './deterministic-engine.js'
import { createHostDrift } from './drift.js'
import { nowNs } from './clock.js'
import type { SimEngine } from './engine.js'
import { lognormalFactor } from './noise.js'
import { isDeterministic, resolveSimOptions, type SimOptions } from './options.js'
import { PrefixCache } from './prefix-cache.js'
import { BUILTIN_PROFILES, resolveProfile, type SimProfile } from './profiles.js'
import { SimMetrics } from './prom-metrics.js'
import { handleRequest } from './routes.js'
import { TraceStore, type TokenTrace } from './trace.js'

export interface SimHandle {
  /** Root URL, e.g. http://127.0.0.1:PORT (no trailing slash, no /v1). */
  url: string
  port: number
  /** Stop listening and end every open stream immediately. */
  close(): Promise<void>
  /** Ground truth of one request by its x-request-id. */
  trace(requestId: string): TokenTrace | undefined
  traces(): TokenTrace[]
  clearTraces(): void
}

/** Start a simulated engine; resolves once it listens. Throws UsageError on bad options. */
export async function startSim(partial: Partial<SimOptions> = {}): Promise<SimHandle> {
  const opts = resolveSimOptions(partial)
  const det = isDeterministic(opts)
  const profile: SimProfile = det ? (BUILTIN_PROFILES.default as SimProfile) : resolveProfile(opts.profile ?? 'default')
  const metrics = new SimMetrics()
  const traces = new TraceStore(opts.traceLimit)
  const cache = opts.prefixCache ? new PrefixCache(profile.blockSize, Math.floor(profile.kvCapacityTokens / profile.blockSize)) : null
  const noiseCv = opts.noiseCv > 0 ? opts.noiseCv : det ? 0 : profile.noiseCv
  const jitterCv = opts.jitterCv > 0 ? opts.jitterCv : det ? 0 : profile.jitterCv
  const noiseRng = createRng(deriveSeed(opts.seed, 'noise'))
  const jitterRng = createRng(deriveSeed(opts.seed, 'jitter'))
  const warn = (line: string): void => void process.stderr.write(`servegate sim: ${line}\n`)
  const drift = createHostDrift({ driftFile: opts.driftFile ?? null, driftPerMin: opts.driftPerMin }, nowNs(), warn)
  let engine: SimEngine
  let revision: string
  if (isDeterministic(opts)) {
    const f = opts.timeScale * opts.slowdown * lognormalFactor(noiseRng, noiseCv) * 1e6
    engine = new DeterministicEngine(
      { ttftNs: opts.ttftMs * f, itlNs: opts.itlMs * f, tokensPerChunk: opts.tokensPerChunk, jitterCv, kvCapacityTokens: profile.kvCapacityTokens },
      jitterRng,
      drift,
    )
    revision = `sim-deterministic-ttft${opts.ttftMs}-itl${opts.itlMs}`
  } else {
    engine = new BatchingEngine(
      { profile, tokensPerChunk: opts.tokensPerChunk, timeScale: opts.timeScale, slowdown: opts.slowdown, noiseCv, jitterCv },
      metrics,
      cache,
      noiseRng,
      jitterRng,
      drift,
    )
    revision = `sim-profile-${profile.name}`
  }
  let counter = 0
  const ctx: SimContext = {
    opts,
    engine,
    metrics,
    traces,
    maxModelLen: profile.maxModelLen,
    blockSize: profile.blockSize,
    revision,
    detCache: det ? cache : null,
    pending: new Set(),
    nextRequestId: () => `sim-${opts.seed}-${++counter}`,
  }
  const server = createServer({ noDelay: true, keepAlive: true }, (req, res) => handleRequest(ctx, req, res))
  // Streams can last minutes; idle keep-alive sockets stay open for the client's pool.
  server.requestTimeout = 0
  server.keepAliveTimeout = 60_000
  server.headersTimeout = 60_000
  server.maxRequestsPerSocket = 0
  const sockets = new Set<Socket>()
  server.on('connection', (s) => {
    sockets.add(s)
    s.on('close', () => sockets.delete(s))
  })
  const port = await listen(server, opts.host, opts.port)
  const hostForUrl = opts.host.includes(':') ? `[${opts.host}]` : opts.host
  let closing: Promise<void> | null = null
  return {
    url: `http://${hostForUrl}:${port}`,
    port,
    close: () => {
      closing ??= new Promise<void>((resolve) => {
        engine.close()
        for (const t of ctx.pending) clearTimeout(t)
        ctx.pending.clear()
        server.close(() => resolve())
        for (const s of sockets) s.destroy()
      })
      return closing
    },
    trace: (id) => traces.get(id),
    traces: () => traces.all(),
    clearTraces: () => traces.clear(),
  }
}

function listen(server: Server, host: string, port: number): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once('error', reject)
    // A deep accept queue: a benchmark opens hundreds of connections at once, and a
    // refused SYN costs a 1 s retransmit that would show up as a fake TTFT spike.
    server.listen({ port, host, backlog: 4096 }, () => {
      server.off('error', reject)
      const addr = server.address()
      resolve(typeof addr === 'object' && addr ? addr.port : port)
    })
  })
}
