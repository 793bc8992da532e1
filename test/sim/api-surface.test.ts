import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { UsageError } from '../../src/errors.js'
import { startSim, type SimHandle } from '../../src/sim/index.js'
import { completionBody, post } from './sim-client.js'

const json = (url: string, body: unknown, raw = false): Promise<Response> =>
  fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: raw ? (body as string) : JSON.stringify(body) })

describe('the simulator speaks the vLLM OpenAI surface', () => {
  let sim: SimHandle
  beforeAll(async () => {
    sim = await startSim({ ttftMs: 5, itlMs: 1, model: 'acme/m-7b' })
  })
  afterAll(async () => {
    await sim.close()
  })

  it('lists its model with root, max_model_len and revision', async () => {
    const j = (await (await fetch(`${sim.url}/v1/models`)).json()) as { object: string; data: Array<Record<string, unknown>> }
    expect(j.object).toBe('list')
    expect(j.data[0]).toMatchObject({ id: 'acme/m-7b', object: 'model', root: 'acme/m-7b', max_model_len: 32768 })
    expect(typeof j.data[0]?.revision).toBe('string')
  })

  it('reports its engine name on /version and is healthy', async () => {
    expect(await (await fetch(`${sim.url}/version`)).json()).toMatchObject({ engine: 'servegate-sim' })
    expect((await fetch(`${sim.url}/health`)).status).toBe(200)
  })

  it('exposes Prometheus histograms and counters under vLLM names with a model_name label', async () => {
    await post(`${sim.url}/v1/completions`, completionBody(10, 4))
    const text = await (await fetch(`${sim.url}/metrics`)).text()
    for (const name of [
      'vllm:time_to_first_token_seconds_bucket',
      'vllm:inter_token_latency_seconds_bucket',
      'vllm:time_per_output_token_seconds_bucket',
      'vllm:e2e_request_latency_seconds_bucket',
      'vllm:num_requests_running',
      'vllm:num_requests_waiting',
      'vllm:kv_cache_usage_perc',
      'vllm:prefix_cache_queries_total',
      'vllm:prefix_cache_hits_total',
    ])
      expect(text).toContain(`${name}{model_name="acme/m-7b"`)
    expect(text).toMatch(/^vllm:prompt_tokens_total\{model_name="acme\/m-7b"\} 10$/m)
    expect(text).toMatch(/^vllm:generation_tokens_total\{model_name="acme\/m-7b"\} 4$/m)
    expect(text).toMatch(/^vllm:time_to_first_token_seconds_count\{model_name="acme\/m-7b"\} 1$/m)
    expect(text).toMatch(/^vllm:inter_token_latency_seconds_count\{model_name="acme\/m-7b"\} 3$/m)
    expect(text).toMatch(/^vllm:time_to_first_token_seconds_bucket\{model_name="acme\/m-7b",le="\+Inf"\} 1$/m)
  })

  it('counts a token-id prompt by its length and the first of a list of prompts', async () => {
    const a = await post(`${sim.url}/v1/completions`, {
      prompt: [[5, 6, 7, 8], [1]],
      max_tokens: 2,
      ignore_eos: true,
      stream: true,
      stream_options: { include_usage: true },
    })
    expect(a.usage?.prompt_tokens).toBe(4)
    const b = await post(`${sim.url}/v1/completions`, {
      prompt: ['one two three', 'x'],
      max_tokens: 2,
      ignore_eos: true,
      stream: true,
      stream_options: { include_usage: true },
    })
    expect(b.usage?.prompt_tokens).toBe(3)
  })

  it("answers a malformed body with 400 and vLLM's error object", async () => {
    const r = await json(`${sim.url}/v1/completions`, '{"prompt": ', true)
    expect(r.status).toBe(400)
    expect(await r.json()).toMatchObject({ object: 'error', type: 'BadRequestError', code: 400, param: null })
  })

  it.each([
    [{ prompt: 'a', max_tokens: 0 }, 'max_tokens'],
    [{ prompt: 'a', max_tokens: 'ten' }, 'max_tokens'],
    [{ prompt: 'a', max_tokens: 32768 }, 'max_tokens'],
    [{ prompt: '   ', max_tokens: 2 }, 'prompt'],
    [{ prompt: { x: 1 }, max_tokens: 2 }, 'prompt'],
    [{ prompt: 'a', stream_options: { include_usage: true } }, 'stream_options'],
    [{ prompt: 'a', stream: 'yes' }, 'stream'],
  ])('rejects the bad parameters %j with 400 naming %s', async (body, param) => {
    const r = await json(`${sim.url}/v1/completions`, body)
    expect(r.status).toBe(400)
    expect(await r.json()).toMatchObject({ object: 'error', code: 400, param })
  })

  it('rejects chat without messages with 400', async () => {
    const r = await json(`${sim.url}/v1/chat/completions`, { max_tokens: 2 })
    expect(r.status).toBe(400)
  })

  it('answers an unknown model with 404 NotFoundError', async () => {
    const r = await json(`${sim.url}/v1/chat/completions`, { model: 'other', messages: [{ role: 'user', content: 'hi' }] })
    expect(r.status).toBe(404)
    expect(await r.json()).toMatchObject({ object: 'error', type: 'NotFoundError', code: 404, message: 'The model `other` does not exist.' })
  })

  it('answers an unknown route with 404 and a wrong method with 405, both as error objects', async () => {
    const r = await fetch(`${sim.url}/v1/nothing`)
    expect(r.status).toBe(404)
    expect(await r.json()).toMatchObject({ object: 'error', code: 404 })
    expect((await fetch(`${sim.url}/v1/completions`)).status).toBe(405)
  })

  it('tokenizes chat messages and rejects a request with neither prompt nor messages', async () => {
    const r = await json(`${sim.url}/tokenize`, {
      model: 'acme/m-7b',
      messages: [
        { role: 'user', content: 'a b' },
        { role: 'assistant', content: [{ type: 'text', text: 'c' }] },
      ],
    })
    // Under the ChatML template: 3 content tokens + 3 per message × 2 + 2 for the generation prompt.
    expect(await r.json()).toMatchObject({ count: 11, max_model_len: 32768 })
    expect((await json(`${sim.url}/tokenize`, { model: 'acme/m-7b' })).status).toBe(400)
  })

  it('echoes x-request-id and uses it in the response id', async () => {
    const r = await post(`${sim.url}/v1/completions`, completionBody(3, 2), { requestId: 'rid-42' })
    expect(r.headers['x-request-id']).toBe('rid-42')
    expect(r.body).toContain('"id":"cmpl-rid-42"')
  })

  it('ends open streams quickly when closed', async () => {
    const s = await startSim({ ttftMs: 10, itlMs: 50 })
    const pending = post(`${s.url}/v1/completions`, completionBody(3, 1000))
    await new Promise((r) => setTimeout(r, 100))
    const t0 = Date.now()
    await s.close()
    const r = await pending
    expect(Date.now() - t0).toBeLessThan(500)
    expect(r.sawDone).toBe(false)
  })
})

describe('startSim option checks', () => {
  it('rejects an unknown profile with a UsageError listing the known ones', async () => {
    await expect(startSim({ profile: 'h100-dream' })).rejects.toThrow(UsageError)
    await expect(startSim({ profile: 'h100-dream' })).rejects.toThrow(/known profiles: default, small, large/)
  })

  it('rejects ttftMs without itlMs and deterministic timing mixed with a profile', async () => {
    await expect(startSim({ ttftMs: 10 })).rejects.toThrow(/go together/)
    await expect(startSim({ ttftMs: 10, itlMs: 5, profile: 'default' })).rejects.toThrow(/either/)
  })

  it('names each invalid field', async () => {
    await expect(startSim({ timeScale: 0, tokensPerChunk: 1.5 })).rejects.toThrow(/timeScale[\s\S]*tokensPerChunk/)
  })
})
