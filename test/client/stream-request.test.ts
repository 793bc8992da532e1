import { Agent } from 'undici'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { httpDetail } from '../../src/client/stream-failures.js'
import { streamRequest, type ClientDeps } from '../../src/client/stream-request.js'
import type { PlannedRequest } from '../../src/types.js'
import { sleep, sse, sseHead, startFakeServer, type FakeServer } from './fake-server.js'

const cmpl = (text: string, extra: Record<string, unknown> = {}) => ({ choices: [{ index: 0, text, finish_reason: null }], ...extra })
const chat = (delta: Record<string, unknown>, finish: string | null = null) => ({ choices: [{ index: 0, delta, finish_reason: finish }] })
const usage = (completion: number, prompt = 5) => ({
  choices: [],
  usage: { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion },
})

let server: FakeServer
let seenHeaders: Record<string, string | string[] | undefined> = {}
let seenBody = ''
const agent = new Agent({ connections: 8, pipelining: 1 })
const epochNs = process.hrtime.bigint()
const deps = (idleTimeoutMs = 5000): ClientDeps => ({ dispatcher: agent, now: process.hrtime.bigint, epochNs, idleTimeoutMs })

function planned(path: string, maxTokens = 4): PlannedRequest {
  return {
    id: `req-${path}`,
    url: `${server.url}${path}`,
    body: JSON.stringify({ model: 'm', prompt: [1, 2, 3], stream: true, max_tokens: maxTokens }),
    headers: { authorization: 'Bearer k' },
    api: path.startsWith('/chat') ? 'chat' : 'completions',
    promptTokens: 3,
    maxTokens,
  }
}

beforeAll(async () => {
  server = await startFakeServer(async (req, res, body) => {
    const path = req.url ?? ''
    if (path === '/v1/completions') {
      seenHeaders = req.headers
      seenBody = body
      sseHead(res)
      await sleep(40)
      // First read holds two events; the third is split across two writes.
      res.write(`data: ${JSON.stringify(cmpl('a'))}\n\ndata: ${JSON.stringify(cmpl('b'))}\n\n`)
      await sleep(20)
      const third = `data: ${JSON.stringify(cmpl('ç', { choices: [{ index: 0, text: 'ç', finish_reason: 'length' }] }))}\n\n`
      const bytes = Buffer.from(third)
      const cut = bytes.indexOf(Buffer.from('ç')) + 1 // inside the 2-byte character
      res.write(bytes.subarray(0, cut))
      await sleep(20)
      res.write(bytes.subarray(cut))
      sse(res, usage(3))
      sse(res, '[DONE]')
      res.end()
    } else if (path === '/chat/reasoning') {
      sseHead(res)
      sse(res, chat({ role: 'assistant', content: '' })) // role-only: not a token
      await sleep(30)
      sse(res, chat({ reasoning_content: 'think' }))
      await sleep(10)
      sse(res, chat({ reasoning: 'more' }))
      sse(res, chat({ content: 'Hi' }, 'stop'))
      sse(res, usage(3))
      res.end() // no [DONE]
    } else if (path === '/404') {
      res.writeHead(404, { 'content-type': 'application/json' })
      res.end(JSON.stringify({ error: { message: 'The model `m` does not exist.', type: 'NotFoundError', code: 404 } }))
    } else if (path === '/500-text') {
      res.writeHead(500)
      res.end('Internal Server Error')
    } else if (path === '/stream-error') {
      sseHead(res)
      sse(res, cmpl('x'))
      sse(res, { error: { message: 'KV cache exhausted', type: 'InternalServerError' } })
      await sleep(200) // the client must not wait for the end
      res.end()
    } else if (path === '/malformed') {
      sseHead(res)
      sse(res, cmpl('x'))
      res.write('data: {"choices": [\n\n')
      await sleep(200)
      res.end()
    } else if (path === '/reset') {
      sseHead(res)
      sse(res, cmpl('x'))
      await sleep(20)
      req.socket.destroy()
    } else if (path === '/stall') {
      sseHead(res)
      sse(res, cmpl('x'))
      // never another byte
    } else if (path === '/not-streaming') {
      res.writeHead(200, { 'content-type': 'application/json' })
      res.end(JSON.stringify({ choices: [{ index: 0, text: 'abc', finish_reason: 'length' }], usage: { completion_tokens: 3 } }))
    } else if (path === '/empty') {
      sseHead(res)
      sse(res, chat({ role: 'assistant' }))
      sse(res, usage(0))
      sse(res, '[DONE]')
      res.end()
    } else {
      res.writeHead(500)
      res.end()
    }
  })
})

afterAll(async () => {
  await agent.close()
  await server.close()
})

describe('streamRequest', () => {
  it('measures a completions stream: TTFT, one arrival per content chunk, usage, finish, [DONE]', async () => {
    const t0 = process.hrtime.bigint()
    const r = await streamRequest(planned('/v1/completions'), deps())
    expect(r.error).toBeNull()
    expect(r.text).toBe('abç')
    expect(r.contentChunks).toBe(3)
    expect(r.chunkArrivalsMs).toHaveLength(3)
    // 'a' and 'b' arrived in the same read: same timestamp.
    expect(r.chunkArrivalsMs[1]).toBe(r.chunkArrivalsMs[0])
    expect(r.ttftMs).toBe(r.chunkArrivalsMs[0])
    expect(r.ttftMs).toBeGreaterThanOrEqual(39)
    expect(r.ttftMs).toBeLessThan(150)
    // The split character completes only with its second half, 40 ms of sleeps later.
    const gap = (r.chunkArrivalsMs[2] as number) - (r.chunkArrivalsMs[1] as number)
    expect(gap).toBeGreaterThanOrEqual(15)
    expect(r.e2elMs).toBe(r.chunkArrivalsMs[2])
    expect(r.streamEndMs).toBeGreaterThanOrEqual(r.e2elMs as number)
    expect(r.usageCompletionTokens).toBe(3)
    expect(r.usagePromptTokens).toBe(5)
    expect(r.finishReason).toBe('length')
    expect(r.sawDone).toBe(true)
    expect(r.startMs).toBeGreaterThanOrEqual(Number(t0 - epochNs) / 1e6)
    expect(r.maxTokens).toBe(4)
    expect(r.promptTokens).toBe(3)
  })

  it('sends content-type, x-request-id, the extra headers and the body unchanged', async () => {
    const req = planned('/v1/completions')
    await streamRequest(req, deps())
    expect(seenHeaders['content-type']).toBe('application/json')
    expect(seenHeaders['x-request-id']).toBe('req-/v1/completions')
    expect(seenHeaders.authorization).toBe('Bearer k')
    expect(seenBody).toBe(req.body)
  })

  it('counts reasoning text as tokens, not role-only chunks, and accepts a missing [DONE]', async () => {
    const r = await streamRequest(planned('/chat/reasoning'), deps())
    expect(r.error).toBeNull()
    expect(r.contentChunks).toBe(3)
    expect(r.text).toBe('thinkmoreHi')
    expect(r.ttftMs).toBeGreaterThanOrEqual(29) // the role chunk at ~0 ms is not the first token
    expect(r.sawDone).toBe(false)
    expect(r.finishReason).toBe('stop')
    expect(r.usageCompletionTokens).toBe(3)
  })

  it('turns a 404 into an http_status record with the server message', async () => {
    const r = await streamRequest(planned('/404'), deps())
    expect(r.error).toEqual({ kind: 'http_status', detail: 'HTTP 404: The model `m` does not exist.' })
    expect(r.ttftMs).toBeNull()
    expect(r.contentChunks).toBe(0)
  })

  it('keeps a non-JSON error body as the message', async () => {
    const r = await streamRequest(planned('/500-text'), deps())
    expect(r.error).toEqual({ kind: 'http_status', detail: 'HTTP 500: Internal Server Error' })
  })

  it('records an error object in the stream as stream_error without waiting for the end', async () => {
    const r = await streamRequest(planned('/stream-error'), deps())
    expect(r.error?.kind).toBe('stream_error')
    expect(r.error?.detail).toContain('KV cache exhausted')
    expect(r.contentChunks).toBe(1)
    expect(r.streamEndMs).toBeLessThan(150)
  })

  it('records malformed JSON as malformed', async () => {
    const r = await streamRequest(planned('/malformed'), deps())
    expect(r.error?.kind).toBe('malformed')
    expect(r.error?.detail).toContain('not JSON')
  })

  it('records a connection reset mid-stream as transport', async () => {
    const r = await streamRequest(planned('/reset'), deps())
    expect(r.error?.kind).toBe('transport')
    expect(r.contentChunks).toBe(1)
  })

  it('records a refused connection as transport', async () => {
    const closed = await startFakeServer(() => {})
    const url = closed.url
    await closed.close()
    const r = await streamRequest({ ...planned('/v1/completions'), url: `${url}/v1/completions` }, deps())
    expect(r.error?.kind).toBe('transport')
    expect(r.error?.detail).toMatch(/ECONNREFUSED/)
  })

  it('fails a stream silent for longer than the idle timeout as timeout', async () => {
    const t0 = Date.now()
    const r = await streamRequest(planned('/stall'), deps(300))
    expect(r.error?.kind).toBe('timeout')
    expect(Date.now() - t0).toBeGreaterThanOrEqual(250)
    expect(Date.now() - t0).toBeLessThan(3000)
  })

  it('fails a non-streaming JSON answer as malformed, naming the content type', async () => {
    const r = await streamRequest(planned('/not-streaming'), deps())
    expect(r.error).toEqual({ kind: 'malformed', detail: 'expected an SSE stream (text/event-stream), got application/json' })
  })

  it('fails a stream that ends without a content token as no_tokens', async () => {
    const r = await streamRequest(planned('/empty'), deps())
    expect(r.error?.kind).toBe('no_tokens')
    expect(r.sawDone).toBe(true)
    expect(r.usageCompletionTokens).toBe(0)
  })

  it('accepts up to 16 chunks more than max_tokens without losing arrivals', async () => {
    const r = await streamRequest(planned('/v1/completions', 0), deps())
    expect(r.error).toBeNull()
    expect(r.contentChunks).toBe(3)
    expect(r.chunkArrivalsMs).toHaveLength(3)
  })

  it('ends a request at its deadline even while bytes still arrive, and at the shape default when none is given', async () => {
    const r = await streamRequest(planned('/stall'), { ...deps(5000), deadlineMs: 200 })
    expect(r.error?.kind).toBe('deadline')
    expect(r.contentChunks).toBe(1)
    // Default for 3 prompt tokens / 4 output tokens: 120 + 0.003 + 1 s, far above this test's idle timeout.
    const t = await streamRequest(planned('/stall'), deps(300))
    expect(t.error?.kind).toBe('timeout')
  })
})

describe('httpDetail', () => {
  it.each([
    [400, '{"error":{"message":"max_tokens too large"}}', 'HTTP 400: max_tokens too large'],
    [422, '{"detail":"bad prompt"}', 'HTTP 422: bad prompt'],
    [429, '{"message":"slow down"}', 'HTTP 429: slow down'],
    [502, '', 'HTTP 502'],
    [500, '{"error":{"message":"CUDA out of memory.\\n  Tried to allocate 2 GiB"}}', 'HTTP 500: CUDA out of memory. Tried to allocate 2 GiB'],
    [
      502,
      '<html><head><title>502 Bad Gateway</title><style>body{x}</style></head>\n<body><h1>502 Bad Gateway</h1></body></html>',
      'HTTP 502: 502 Bad Gateway 502 Bad Gateway',
    ],
    [
      500,
      'Traceback (most recent call last):\n  File "x.py", line 1\n\tValueError: bad &amp; worse',
      'HTTP 500: Traceback (most recent call last): File "x.py", line 1 ValueError: bad & worse',
    ],
  ])('reads the message of a %i answer as one line', (status, body, expected) => {
    expect(httpDetail(status, body)).toBe(expected)
  })

  it('cuts a long non-JSON body to a 160-character excerpt', () => {
    const d = httpDetail(500, `<pre>${'word '.repeat(300)}</pre>`)
    expect(d).toMatch(/^HTTP 500: word word .*…$/)
    expect(d.length).toBe('HTTP 500: '.length + 160)
  })
})
