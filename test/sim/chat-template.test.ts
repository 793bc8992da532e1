import { afterEach, describe, expect, it } from 'vitest'
import { parseSimFlags } from '../../src/cli/sim.js'
import { startSim, type SimHandle, type SimOptions } from '../../src/sim/index.js'
import { applyChatTemplate } from '../../src/sim/chat-template.js'
import { parseSimRequest } from '../../src/sim/request.js'
import { countTextTokens } from '../../src/sim/tokenizer.js'
import { post } from './sim-client.js'

let sim: SimHandle | null = null
afterEach(async () => {
  await sim?.close()
  sim = null
})
const start = async (o: Partial<SimOptions> = {}): Promise<SimHandle> => {
  sim = await startSim({ ttftMs: 2, itlMs: 1, ...o })
  return sim
}
const words = (n: number, tag = 'w'): string => Array.from({ length: n }, (_, i) => `${tag}${i}`).join(' ')
const chatBody = (messages: unknown[], maxTokens = 3) => ({
  messages,
  max_tokens: maxTokens,
  ignore_eos: true,
  stream: true,
  stream_options: { include_usage: true },
})
const tokenize = async (s: SimHandle, body: unknown): Promise<{ status: number; count?: number }> => {
  const r = await fetch(`${s.url}/tokenize`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) })
  return { status: r.status, ...((await r.json()) as { count?: number }) }
}
const metric = async (s: SimHandle, name: string): Promise<number> => {
  const text = await (await fetch(`${s.url}/metrics`)).text()
  const m = new RegExp(`^${name}\\{[^}]*\\} (\\S+)$`, 'm').exec(text)
  return m ? Number(m[1]) : Number.NaN
}

describe("the simulator's chat template", () => {
  it('costs 3 tokens per message and 2 for the generation prompt', () => {
    expect(countTextTokens(applyChatTemplate([{ role: 'user', content: words(10) }]))).toBe(15)
    expect(
      countTextTokens(
        applyChatTemplate([
          { role: 'system', content: words(4) },
          { role: 'user', content: words(10) },
        ]),
      ),
    ).toBe(22)
    expect(countTextTokens(applyChatTemplate([{ role: 'user', content: words(10) }], false))).toBe(13)
    expect(parseSimRequest('chat', { messages: [{ role: 'user', content: [{ type: 'text', text: words(6) }] }] }, 'm', 1000).promptTokens).toBe(11)
  })

  it('reports the templated count in usage, /tokenize, the trace and /metrics alike', async () => {
    const s = await start()
    const messages = [{ role: 'user', content: words(40) }]
    const r = await post(`${s.url}/v1/chat/completions`, chatBody(messages), { requestId: 'tpl-1' })
    expect(r.usage).toMatchObject({ prompt_tokens: 45, completion_tokens: 3 })
    expect(await tokenize(s, { model: 'servegate/sim-model', messages })).toMatchObject({ status: 200, count: 45 })
    expect(await tokenize(s, { messages, add_generation_prompt: false })).toMatchObject({ count: 43 })
    // The engine's prefill and KV accounting read the same prompt length as the trace.
    expect(s.trace('tpl-1')?.promptTokens).toBe(45)
    expect(await metric(s, 'vllm:prompt_tokens_total')).toBe(45)
    // Completions prompts are not templated.
    const c = await post(`${s.url}/v1/completions`, { prompt: words(40), max_tokens: 2, stream: true, stream_options: { include_usage: true } })
    expect(c.usage).toMatchObject({ prompt_tokens: 40 })
  })

  it('rejects a non-boolean add_generation_prompt on /tokenize', async () => {
    const s = await start()
    expect((await tokenize(s, { messages: [{ role: 'user', content: 'a' }], add_generation_prompt: 'yes' })).status).toBe(400)
  })

  it('keeps its 2-token shared preamble out of the prefix cache, while a repeated prompt hits', async () => {
    const s = await start({ prefixCache: true })
    for (let i = 0; i < 4; i++) await post(`${s.url}/v1/chat/completions`, chatBody([{ role: 'user', content: words(64, `p${i}x`) }]))
    expect(await metric(s, 'vllm:prefix_cache_hits_total')).toBe(0)
    await post(`${s.url}/v1/chat/completions`, chatBody([{ role: 'user', content: words(64, 'p0x') }]))
    expect(await metric(s, 'vllm:prefix_cache_hits_total')).toBeGreaterThanOrEqual(64)
  })
})

describe('--truncate-prompt', () => {
  it('is a flag of servegate sim taking a positive integer', () => {
    expect(parseSimFlags({ truncatePrompt: '30' })).toMatchObject({ truncatePrompt: 30 })
    expect(() => parseSimFlags({ truncatePrompt: '0' })).toThrow('--truncate-prompt "0": expected an integer ≥ 1')
  })

  it('keeps only the last N prompt tokens: usage, /metrics and the trace say N, /tokenize the full count', async () => {
    const s = await start({ truncatePrompt: 30 })
    const messages = [{ role: 'user', content: words(40) }]
    const r = await post(`${s.url}/v1/chat/completions`, chatBody(messages), { requestId: 'cut-1' })
    expect(r.usage).toMatchObject({ prompt_tokens: 30, completion_tokens: 3 })
    expect(s.trace('cut-1')?.promptTokens).toBe(30)
    expect(await metric(s, 'vllm:prompt_tokens_total')).toBe(30)
    expect(await tokenize(s, { messages })).toMatchObject({ count: 45 })
    const ids = await post(`${s.url}/v1/completions`, {
      prompt: Array.from({ length: 50 }, (_, i) => 1000 + i),
      max_tokens: 2,
      stream: true,
      stream_options: { include_usage: true },
    })
    expect(ids.usage).toMatchObject({ prompt_tokens: 30 })
  })

  it('leaves prompts of at most N tokens whole', async () => {
    const s = await start({ truncatePrompt: 30 })
    const r = await post(`${s.url}/v1/chat/completions`, chatBody([{ role: 'user', content: words(25) }]))
    expect(r.usage).toMatchObject({ prompt_tokens: 30 })
    const c = await post(`${s.url}/v1/completions`, { prompt: words(12), max_tokens: 2, stream: true, stream_options: { include_usage: true } })
    expect(c.usage).toMatchObject({ prompt_tokens: 12 })
  })
})
