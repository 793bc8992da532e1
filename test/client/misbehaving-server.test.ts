/**
 * The client against a stand-in server on 127.0.0.1 that misbehaves the ways
 * real servers and proxies have: every request still ends — by its deadline
 * or a cap, with the right kind — its socket is closed, and a run counts it
 * among its failures by kind.
 */
import type { ServerResponse } from 'node:http'
import { Agent } from 'undici'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { fetchMetricsText, listModels, MAX_METRICS_BODY_BYTES, scrapeMetrics } from '../../src/client/endpoints.js'
import { createFetchJson, fetchJson, MAX_JSON_BODY_BYTES } from '../../src/client/http.js'
import { streamRequest, type ClientDeps } from '../../src/client/stream-request.js'
import { UsageError } from '../../src/errors.js'
import { runPoint } from '../../src/load/run-point.js'
import { preflight } from '../../src/sweep/preflight.js'
import { summarizeRun } from '../../src/metrics/summarize.js'
import type { PlannedRequest } from '../../src/types.js'
import { sleep, sse, sseHead, startFakeServer, type FakeServer } from './fake-server.js'

let server: FakeServer
const agent = new Agent({ connections: 16, pipelining: 1 })
const epochNs = process.hrtime.bigint()
const deps = (extra: Partial<ClientDeps> = {}): ClientDeps => ({
  dispatcher: agent,
  now: process.hrtime.bigint,
  epochNs,
  idleTimeoutMs: 10_000,
  deadlineMs: 20_000,
  ...extra,
})
/** Per path: did the server see the client close the connection before it finished writing? */
const closedEarly = new Map<string, boolean>()
const tok = (t: string) => ({ choices: [{ index: 0, text: t, finish_reason: null }] })

function planned(path: string, maxTokens = 4): PlannedRequest {
  return {
    id: `req-${path}`,
    url: `${server.url}${path}`,
    body: JSON.stringify({ model: 'm', prompt: [1, 2, 3], stream: true, max_tokens: maxTokens }),
    headers: {},
    api: 'completions',
    promptTokens: 3,
    maxTokens,
  }
}

/** Write `next()` until the client goes away (or `limit` writes), respecting backpressure; records whether the client left first. */
async function writeUntilClosed(path: string, res: ServerResponse, next: (i: number) => string | Buffer, limit = 1e9, pauseMs = 0): Promise<void> {
  let closed = false
  res.on('close', () => (closed = true))
  for (let i = 0; i < limit && !closed; i++) {
    if (!res.write(next(i))) await new Promise((r) => setTimeout(r, 1))
    if (pauseMs > 0) await sleep(pauseMs)
    else if (i % 64 === 63) await new Promise((r) => setImmediate(r))
  }
  closedEarly.set(path, closed)
  if (!closed) res.end()
}

/** Whether the client closed `path`'s connection before the server finished writing (waits for the writer to notice). */
async function serverSawClose(path: string): Promise<boolean | undefined> {
  for (let i = 0; i < 300 && !closedEarly.has(path); i++) await sleep(10)
  return closedEarly.get(path)
}

beforeAll(async () => {
  server = await startFakeServer(async (req, res) => {
    const path = req.url ?? ''
    if (path === '/keepalive') {
      sseHead(res)
      await writeUntilClosed(path, res, () => ': keep-alive\n\n')
    } else if (path === '/keepalive-slow') {
      sseHead(res)
      sse(res, tok('a'))
      await writeUntilClosed(path, res, () => ': keep-alive\n\n', 1e9, 50)
    } else if (path === '/past-max') {
      sseHead(res)
      await writeUntilClosed(path, res, (i) => `data: ${JSON.stringify(tok(` t${i}`))}\n\n`)
    } else if (path === '/trickle') {
      sseHead(res)
      const bytes = Buffer.from(`data: ${JSON.stringify(tok('slow'))}\n\n`)
      await writeUntilClosed(path, res, (i) => bytes.subarray(i % bytes.length, (i % bytes.length) + 1), 1e9, 200)
    } else if (path === '/huge-line') {
      sseHead(res)
      const block = Buffer.alloc(64 * 1024, 'x')
      res.write('data: ')
      // 8 MiB with no line end.
      await writeUntilClosed(path, res, () => block, 128)
    } else if (path === '/endless-error') {
      res.writeHead(503, { 'content-type': 'text/html' })
      await writeUntilClosed(path, res, () => '<p>\n  Service   Unavailable\n</p>\n')
    } else if (path === '/nginx-502') {
      res.writeHead(502, { 'content-type': 'text/html' })
      res.end(
        '<html>\r\n<head><title>502 Bad Gateway</title></head>\r\n<body>\r\n<center><h1>502 Bad Gateway</h1></center>\r\n<hr><center>nginx/1.25.3</center>\r\n</body>\r\n</html>\r\n',
      )
    } else if (path === '/ok') {
      sseHead(res)
      for (let i = 0; i < 4; i++) sse(res, tok(` t${i}`))
      sse(res, { choices: [], usage: { prompt_tokens: 3, completion_tokens: 4 } })
      sse(res, '[DONE]')
      res.end()
    } else if (path === '/v1/models' || path === '/metrics') {
      res.writeHead(200, { 'content-type': path === '/metrics' ? 'text/plain' : 'application/json' })
      // No content-length: the client can only find out by counting.
      const block = Buffer.alloc(256 * 1024, ' ')
      res.write(path === '/metrics' ? '# HELP x\n' : '{"data": [')
      await writeUntilClosed(path, res, () => block, 64) // 16 MiB
    } else if (path === '/pf/v1/models') {
      res.writeHead(200, { 'content-type': 'application/json' })
      res.end(JSON.stringify({ data: [{ id: 'm' }] }))
    } else if (path === '/pf/v1/completions') {
      sseHead(res)
      await writeUntilClosed(path, res, (i) => `data: ${JSON.stringify(tok(` t${i}`))}\n\n`)
    } else if (path === '/declared/v1/models') {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': String(MAX_JSON_BODY_BYTES + 1) })
      res.write('{"data": [')
      await sleep(2000)
      res.destroy()
    } else {
      res.writeHead(404)
      res.end()
    }
  })
})

afterAll(async () => {
  await agent.close()
  await server.close()
})

describe('streamRequest against a misbehaving server', () => {
  it('ends an endless stream of keep-alive comments as overrun and closes the socket', async () => {
    const r = await streamRequest(planned('/keepalive'), deps())
    expect(r.error?.kind).toBe('overrun')
    expect(r.error?.detail).toContain('keep-alive')
    expect(await serverSawClose('/keepalive')).toBe(true)
  })

  it('ends slow keep-alives that beat the idle timeout at the request deadline', async () => {
    const t0 = performance.now()
    const r = await streamRequest(planned('/keepalive-slow'), deps({ idleTimeoutMs: 5000, deadlineMs: 600 }))
    const elapsed = performance.now() - t0
    expect(r.error?.kind).toBe('deadline')
    expect(r.error?.detail).toMatch(/^no complete answer within the 0\.6 s request deadline \(--request-timeout; 1 content chunks/)
    expect(r.contentChunks).toBe(1)
    expect(elapsed).toBeGreaterThanOrEqual(590)
    expect(elapsed).toBeLessThan(5000)
  })

  it('ends a stream that keeps sending tokens past max_tokens as overrun, with max_tokens + 16 arrivals kept', async () => {
    const r = await streamRequest(planned('/past-max', 4), deps())
    expect(r.error?.kind).toBe('overrun')
    expect(r.error?.detail).toBe('more than 20 content chunks for max_tokens 4 (the server ignores max_tokens)')
    expect(r.contentChunks).toBe(20)
    expect(r.chunkArrivalsMs).toHaveLength(20)
    expect(await serverSawClose('/past-max')).toBe(true)
  })

  it('ends a trickle of one byte every 200 ms at its 1 s deadline', async () => {
    const t0 = performance.now()
    const r = await streamRequest(planned('/trickle'), deps({ idleTimeoutMs: 5000, deadlineMs: 1000 }))
    const elapsed = performance.now() - t0
    expect(r.error?.kind).toBe('deadline')
    expect(r.contentChunks).toBe(0)
    expect(elapsed).toBeGreaterThanOrEqual(990)
    expect(elapsed).toBeLessThan(6000)
    // Armed at dispatch; streamEndMs counts from the write, a connect later.
    expect(r.streamEndMs).toBeGreaterThanOrEqual(900)
  })

  it('refuses an 8 MiB line as malformed after its first MiB, without reading the rest', async () => {
    const r = await streamRequest(planned('/huge-line'), deps())
    expect(r.error).toEqual({ kind: 'malformed', detail: 'SSE line over 1 MiB with no line end yet' })
    expect(await serverSawClose('/huge-line')).toBe(true)
  })

  it('stops reading an endless error body after 4 KiB and keeps one clean line', async () => {
    const r = await streamRequest(planned('/endless-error'), deps())
    expect(r.error?.kind).toBe('http_status')
    expect(r.error?.detail).toMatch(/^HTTP 503: Service Unavailable Service Unavailable/)
    expect(r.error?.detail).not.toMatch(/[\n<>]/)
    expect(r.error!.detail.length).toBeLessThanOrEqual('HTTP 503: '.length + 160)
    expect(await serverSawClose('/endless-error')).toBe(true)
  })

  it('reduces an HTML error page to its text on one line', async () => {
    const r = await streamRequest(planned('/nginx-502'), deps())
    expect(r.error).toEqual({ kind: 'http_status', detail: 'HTTP 502: 502 Bad Gateway 502 Bad Gateway nginx/1.25.3' })
  })

  it("counts deadline and overrun requests among a run's failures, by kind", async () => {
    const measured = ['/ok', '/past-max', '/ok', '/keepalive-slow', '/keepalive', '/ok'].map((p, i) => ({ ...planned(p), id: `run-${i}` }))
    const raw = await runPoint({ warmup: [], measured, concurrency: 3, workers: 0, priority: null, idleTimeoutMs: 5000, deadlineMs: 800 })
    const run = summarizeRun(raw, { repeat: 1, seed: 1, numPrompts: measured.length })
    expect(run.errors).toEqual({ overrun: 2, deadline: 1 })
    expect(run.completed).toBe(3)
    expect(run.failed).toBe(3)
  })
})

describe('preflight against a misbehaving server', () => {
  it('fails with one line naming the overrun when every probe streams past max_tokens', async () => {
    const err = await preflight(`${server.url}/pf`, 'm', 'completions', null).catch((e: unknown) => e)
    expect(err).toBeInstanceOf(UsageError)
    expect((err as Error).message).toBe(
      `The server at ${server.url}/pf/v1/completions failed a probe request three times (overrun: more than 18 content chunks for max_tokens 2 (the server ignores max_tokens))`,
    )
  })
})

describe('non-streaming endpoints against a huge answer', () => {
  it('refuses a /v1/models answer over 8 MiB, naming the URL and the cap', async () => {
    const err = await listModels(server.url).catch((e: unknown) => e)
    expect(err).toBeInstanceOf(UsageError)
    expect((err as Error).message).toBe(
      `GET ${server.url}/v1/models: the answer is over 8 MiB, more than servegate reads from this endpoint; it stopped reading`,
    )
    expect(await serverSawClose('/v1/models')).toBe(true)
  })

  it('refuses at once an answer whose content-length is over the cap', async () => {
    const t0 = performance.now()
    await expect(fetchJson(`${server.url}/declared/v1/models`)).rejects.toThrow(/the answer is over 1 MiB/)
    expect(performance.now() - t0).toBeLessThan(1500)
  })

  it('refuses a /metrics answer over 8 MiB with a clear message, and a scrape of it gives no figures', async () => {
    expect(MAX_METRICS_BODY_BYTES).toBe(8 << 20)
    await expect(fetchMetricsText(server.url)).rejects.toThrow(`GET ${server.url}/metrics: the answer is over 8 MiB`)
    expect(await scrapeMetrics(server.url)).toBeNull()
  })

  it('gives null for an environment info endpoint answer over the cap', async () => {
    expect(await createFetchJson({ maxBytes: 64 * 1024 })(`${server.url}/v1/models`)).toBeNull()
  })
})
