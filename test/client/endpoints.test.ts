import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { getVersion, listModels, scrapeMetrics } from '../../src/client/endpoints.js'
import { tokenizeCount } from '../../src/client/tokenize.js'
import { fetchJson } from '../../src/client/http.js'
import { UsageError } from '../../src/errors.js'
import { startFakeServer, type FakeServer } from './fake-server.js'

let server: FakeServer
let bare: FakeServer
let tokenizeBody: unknown

beforeAll(async () => {
  // Served under a proxy-like prefix /llm, as `--base-url http://host/llm` would be.
  server = await startFakeServer((req, res, body) => {
    const json = (status: number, v: unknown): void => {
      res.writeHead(status, { 'content-type': 'application/json' })
      res.end(JSON.stringify(v))
    }
    if (req.url === '/llm/v1/models') json(200, { object: 'list', data: [{ id: 'a/b' }, { id: 'c' }] })
    else if (req.url === '/llm/version') json(200, { version: '0.11.0' })
    else if (req.url === '/llm/metrics') {
      res.writeHead(200, { 'content-type': 'text/plain' })
      res.end('vllm:num_requests_running 0\n')
    } else if (req.url === '/llm/tokenize' && req.method === 'POST') {
      tokenizeBody = JSON.parse(body)
      json(200, { count: 7, max_model_len: 8192, tokens: [1, 2, 3, 4, 5, 6, 7] })
    } else if (req.url === '/llm/not-json') {
      res.writeHead(200)
      res.end('<html>')
    } else json(404, { detail: 'Not Found' })
  })
  bare = await startFakeServer((_req, res) => {
    res.writeHead(404)
    res.end()
  })
})

afterAll(async () => {
  await server.close()
  await bare.close()
})

describe('endpoint helpers', () => {
  it('lists model ids from {root}/v1/models, whatever form the base URL takes', async () => {
    expect(await listModels(`${server.url}/llm/v1/`)).toEqual(['a/b', 'c'])
  })

  it('reads the engine version, and null where /version is absent', async () => {
    expect(await getVersion(`${server.url}/llm`)).toBe('0.11.0')
    expect(await getVersion(bare.url)).toBeNull()
  })

  it('scrapes /metrics, and null on 404 or an unreachable server', async () => {
    expect(await scrapeMetrics(`${server.url}/llm`)).toBe('vllm:num_requests_running 0\n')
    expect(await scrapeMetrics(bare.url)).toBeNull()
    expect(await scrapeMetrics('http://127.0.0.1:1')).toBeNull()
  })

  it('counts tokens with the server tokenizer in vLLM style', async () => {
    expect(await tokenizeCount(`${server.url}/llm`, 'a/b', 'hello')).toBe(7)
    expect(tokenizeBody).toMatchObject({ model: 'a/b', prompt: 'hello' })
    expect(await tokenizeCount(bare.url, 'a/b', 'hello')).toBeNull()
  })

  it('fails a 404 with one line naming the URL and status', async () => {
    await expect(listModels(bare.url)).rejects.toThrow(`GET ${bare.url}/v1/models: HTTP 404`)
  })

  it('fails an unreachable server with a UsageError naming the URL', async () => {
    const err = await listModels('http://127.0.0.1:1').catch((e: unknown) => e)
    expect(err).toBeInstanceOf(UsageError)
    expect((err as Error).message).toMatch(/^GET http:\/\/127\.0\.0\.1:1\/v1\/models: .*ECONNREFUSED/)
  })

  it('fails an answer that is not JSON', async () => {
    await expect(fetchJson(`${server.url}/llm/not-json`)).rejects.toThrow('expected JSON, got "<html>"')
  })
})
