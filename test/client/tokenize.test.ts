import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { tokenizeMessages } from '../../src/client/tokenize.js'

// A stand-in /tokenize whose answer is chosen by the model name, on 127.0.0.1.
describe('tokenizeMessages', () => {
  let server: Server
  let root: string
  const bodies: unknown[] = []
  beforeAll(async () => {
    server = createServer((req, res) => {
      let text = ''
      req.on('data', (c: Buffer) => (text += c.toString()))
      req.on('end', () => {
        const body = JSON.parse(text) as { model: string }
        // No llama-server here: its /apply-template is missing, as on vLLM.
        if (req.url === '/apply-template') {
          res.writeHead(404, { 'content-type': 'application/json' })
          res.end('{"detail":"Not Found"}')
          return
        }
        bodies.push({ ...body, auth: req.headers.authorization ?? null })
        const [status, answer] = (
          {
            count: [200, { count: 42, max_model_len: 4096, tokens: [1, 2] }],
            tokens: [200, { tokens: [5, 6, 7] }],
            nothing: [200, { ok: true }],
            old: [400, { object: 'error', message: 'Either `prompt` or `messages`' }],
            missing: [404, { detail: 'Not Found' }],
            method: [405, { detail: 'Method Not Allowed' }],
            broken: [500, { detail: 'boom' }],
          } as Record<string, [number, unknown]>
        )[body.model] ?? [500, {}]
        res.writeHead(status, { 'content-type': 'application/json' })
        res.end(JSON.stringify(answer))
      })
    })
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
    root = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  })
  afterAll(() => new Promise<void>((r) => server.close(() => r())))

  const ask = (model: string, apiKey: string | null = null) => tokenizeMessages(root, model, [{ role: 'user', content: 'a b' }], { apiKey })

  it('sends the messages with the generation prompt and the key, and reads count or tokens', async () => {
    expect(await ask('count', 'sk-test')).toEqual({ kind: 'count', count: 42 })
    expect(bodies.at(-1)).toEqual({ model: 'count', messages: [{ role: 'user', content: 'a b' }], add_generation_prompt: true, auth: 'Bearer sk-test' })
    expect(await ask('tokens')).toEqual({ kind: 'count', count: 3 })
  })

  it('calls a missing endpoint, one that takes no messages, or an answer without a count unsupported', async () => {
    // Each then asked in llama-server's shape too, which this server lacks: both named.
    expect(await ask('missing')).toEqual({ kind: 'unsupported', reason: '/tokenize: HTTP 404; /apply-template: HTTP 404' })
    expect(await ask('method')).toEqual({ kind: 'unsupported', reason: '/tokenize: HTTP 405; /apply-template: HTTP 404' })
    expect(await ask('old')).toEqual({ kind: 'unsupported', reason: '/tokenize: HTTP 400; /apply-template: HTTP 404' })
    expect(await ask('nothing')).toMatchObject({ kind: 'unsupported' })
  })

  it('calls a server fault or an unreachable server an error, to try again later', async () => {
    expect(await ask('broken')).toMatchObject({ kind: 'error', reason: expect.stringMatching(/HTTP 500/) })
    expect(await tokenizeMessages('http://127.0.0.1:1', 'm', [{ role: 'user', content: 'a' }], { apiKey: null })).toMatchObject({ kind: 'error' })
  })
})
