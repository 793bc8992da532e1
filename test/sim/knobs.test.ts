import { afterEach, describe, expect, it } from 'vitest'
import { startSim, type SimHandle, type SimOptions } from '../../src/sim/index.js'
import { completionBody, gapsMs, percentile, post } from './sim-client.js'

let sim: SimHandle | null = null
afterEach(async () => {
  await sim?.close()
  sim = null
})
const start = async (o: Partial<SimOptions>): Promise<SimHandle> => {
  sim = await startSim({ ttftMs: 5, itlMs: 2, ...o })
  return sim
}
const metric = async (s: SimHandle, name: string): Promise<number> => {
  const text = await (await fetch(`${s.url}/metrics`)).text()
  const m = new RegExp(`^${name}\\{[^}]*\\} (\\S+)$`, 'm').exec(text)
  return m ? Number(m[1]) : Number.NaN
}

describe('fault injection', () => {
  it('http500 answers 500 with an error object', async () => {
    const s = await start({ faults: [{ kind: 'http500', rate: 1 }] })
    const r = await post(`${s.url}/v1/completions`, completionBody(4, 8))
    expect(r.status).toBe(500)
    expect(JSON.parse(r.body)).toMatchObject({ object: 'error', code: 500 })
  })

  it('http429 answers 429 with retry-after', async () => {
    const s = await start({ faults: [{ kind: 'http429', rate: 1 }] })
    const r = await post(`${s.url}/v1/completions`, completionBody(4, 8))
    expect(r.status).toBe(429)
    expect(r.headers['retry-after']).toBe('1')
  })

  it('disconnect drops the connection mid-stream after some tokens', async () => {
    const s = await start({ faults: [{ kind: 'disconnect', rate: 1 }] })
    const r = await post(`${s.url}/v1/completions`, completionBody(4, 10))
    expect(r.status).toBe(200)
    expect(r.error).toMatch(/transport/)
    expect(r.tokenChunkNs).toHaveLength(5)
    expect(r.sawDone).toBe(false)
  })

  it('stall holds the stream for stallMs once, mid-stream', async () => {
    const s = await start({ faults: [{ kind: 'stall', rate: 1 }], stallMs: 150 })
    const r = await post(`${s.url}/v1/completions`, completionBody(4, 10))
    expect(r.error).toBeNull()
    expect(r.usage?.completion_tokens).toBe(10)
    const gaps = gapsMs(r.tokenChunkNs)
    expect(Math.max(...gaps)).toBeGreaterThanOrEqual(145)
    expect(gaps.filter((g) => g > 100)).toHaveLength(1)
  })

  it('malformed writes a data line that is not JSON mid-stream', async () => {
    const s = await start({ faults: [{ kind: 'malformed', rate: 1 }] })
    const r = await post(`${s.url}/v1/completions`, completionBody(4, 10))
    expect(r.error).toMatch(/^malformed/)
    expect(r.tokenChunkNs.length).toBeGreaterThanOrEqual(5)
  })

  it('stream-error sends an error event inside the stream', async () => {
    const s = await start({ faults: [{ kind: 'stream-error', rate: 1 }] })
    const r = await post(`${s.url}/v1/completions`, completionBody(4, 10))
    expect(r.status).toBe(200)
    expect(r.error).toMatch(/^stream_error/)
    expect(r.tokenChunkNs).toHaveLength(5)
  })

  it('strikes roughly `rate` of requests, reproducibly for the same seed and ids', async () => {
    const s = await start({ faults: [{ kind: 'http500', rate: 0.3 }], seed: 7 })
    const statuses: number[] = []
    for (let i = 0; i < 60; i++) statuses.push((await post(`${s.url}/v1/completions`, completionBody(2, 1), { requestId: `f${i}` })).status)
    const failed = statuses.filter((x) => x === 500).length
    expect(failed).toBeGreaterThan(8)
    expect(failed).toBeLessThan(32)
    await s.close()
    const s2 = await start({ faults: [{ kind: 'http500', rate: 0.3 }], seed: 7 })
    const again: number[] = []
    for (let i = 0; i < 60; i++) again.push((await post(`${s2.url}/v1/completions`, completionBody(2, 1), { requestId: `f${i}` })).status)
    expect(again).toEqual(statuses)
  })
})

describe('quirks of real engines', () => {
  it('tokensPerChunk packs several tokens per chunk, usage still counts tokens', async () => {
    const s = await start({ tokensPerChunk: 4 })
    const r = await post(`${s.url}/v1/completions`, completionBody(4, 10), { requestId: 'tpc' })
    expect(r.tokenChunkNs).toHaveLength(3)
    expect(r.usage?.completion_tokens).toBe(10)
    expect(r.text.trim().split(/\s+/)).toHaveLength(10)
    expect(s.trace('tpc')?.tokensPerChunk).toEqual([4, 4, 2])
  })

  it('reasoning deltas come before content in chat', async () => {
    const s = await start({ reasoningTokens: 3 })
    const r = await post(`${s.url}/v1/chat/completions`, { messages: [{ role: 'user', content: 'q' }], max_tokens: 5, ignore_eos: true, stream: true })
    const kinds = r.events
      .map((e) => e.data)
      .filter((d): d is string => d !== null && d !== '[DONE]')
      .map((d) => (JSON.parse(d) as { choices: Array<{ delta: Record<string, string> }> }).choices[0]?.delta)
      .map((d) => (d?.reasoning_content ? 'r' : d?.content ? 'c' : '-'))
    expect(kinds.join('')).toBe('-rrrcc')
  })

  it('keep-alive comments appear as ":" lines', async () => {
    const s = await start({ keepAliveComments: true })
    const r = await post(`${s.url}/v1/completions`, completionBody(4, 20))
    expect(r.body.startsWith(': keep-alive\n\n')).toBe(true)
    expect(r.events.filter((e) => e.data === null).length).toBeGreaterThanOrEqual(3)
    expect(r.tokenChunkNs).toHaveLength(20)
  })

  it('crlf ends every line with CRLF', async () => {
    const s = await start({ crlf: true })
    const r = await post(`${s.url}/v1/completions`, completionBody(4, 3))
    expect(r.body).toMatch(/\r\n\r\n/)
    expect(r.body.replace(/\r\n/g, '')).not.toContain('\n')
    expect(r.tokenChunkNs).toHaveLength(3)
    expect(r.sawDone).toBe(true)
  })

  it('omitDone never sends [DONE]', async () => {
    const s = await start({ omitDone: true })
    const r = await post(`${s.url}/v1/completions`, completionBody(4, 3))
    expect(r.sawDone).toBe(false)
    expect(r.usage?.completion_tokens).toBe(3)
  })
})

describe('lies', () => {
  it('usageSkew reports round(true × F) completion tokens', async () => {
    const s = await start({ usageSkew: 1.25 })
    const r = await post(`${s.url}/v1/completions`, completionBody(4, 10))
    expect(r.tokenChunkNs).toHaveLength(10)
    expect(r.usage?.completion_tokens).toBe(13)
    const ns = await post(`${s.url}/v1/completions`, { prompt: 'x', max_tokens: 10, ignore_eos: true })
    expect((JSON.parse(ns.body) as { usage: { completion_tokens: number } }).usage.completion_tokens).toBe(13)
  })

  it('stopEarlyAt stops at N tokens although ignore_eos was set', async () => {
    const s = await start({ stopEarlyAt: 7 })
    const r = await post(`${s.url}/v1/completions`, completionBody(4, 20))
    expect(r.tokenChunkNs).toHaveLength(7)
    expect(r.usage?.completion_tokens).toBe(7)
    expect(r.finishReason).toBe('stop')
  })
})

describe('vocabulary', () => {
  it("answers a token-id prompt with an id ≥ vocab with HTTP 400 and vLLM's error, naming the largest id", async () => {
    const s = await start({ vocab: 100 })
    const r = await post(`${s.url}/v1/completions`, { ...completionBody(4, 8), prompt: [5, 250, 99, 120] })
    expect(r.status).toBe(400)
    expect(JSON.parse(r.body)).toEqual({ object: 'error', message: 'Token id 250 is out of vocabulary', type: 'BadRequestError', param: null, code: 400 })
  })

  it('serves ids below vocab, text prompts and chat, whatever their words', async () => {
    const s = await start({ vocab: 100 })
    const ids = await post(`${s.url}/v1/completions`, { ...completionBody(4, 3), prompt: [0, 1, 98, 99] })
    expect(ids.status).toBe(200)
    expect(ids.usage?.completion_tokens).toBe(3)
    // Text is tokenized by the server itself, so its ids are the vocabulary's by construction.
    const text = await post(`${s.url}/v1/completions`, { ...completionBody(4, 3), prompt: 'hello tok5000 world' })
    expect(text.status).toBe(200)
    const chat = await post(`${s.url}/v1/chat/completions`, {
      messages: [{ role: 'user', content: 'hello world' }],
      max_tokens: 3,
      ignore_eos: true,
      stream: true,
    })
    expect(chat.status).toBe(200)
  })

  it('has no limit by default', async () => {
    const s = await start({})
    const r = await post(`${s.url}/v1/completions`, { ...completionBody(4, 3), prompt: [1, 2, 3, 10_000_000] })
    expect(r.status).toBe(200)
  })
})

describe('prefix cache', () => {
  it('counts queried and hit tokens in whole blocks for a repeated prefix (deterministic mode)', async () => {
    const s = await start({ prefixCache: true })
    const prompt = Array.from({ length: 40 }, (_, i) => i + 1)
    await post(`${s.url}/v1/completions`, { prompt, max_tokens: 1, ignore_eos: true })
    expect(await metric(s, 'vllm:prefix_cache_hits_total')).toBe(0)
    await post(`${s.url}/v1/completions`, { prompt: [...prompt.slice(0, 35), 99, 98, 97, 96, 95], max_tokens: 1, ignore_eos: true })
    expect(await metric(s, 'vllm:prefix_cache_queries_total')).toBe(80)
    expect(await metric(s, 'vllm:prefix_cache_hits_total')).toBe(32)
  })

  it('skips the prefill of cached blocks in batching mode, shortening TTFT', async () => {
    const s = (sim = await startSim({ profile: 'default', prefixCache: true, jitterCv: 0 }))
    const prompt = Array.from({ length: 8192 }, (_, i) => (i * 31) % 30000)
    const first = await post(`${s.url}/v1/completions`, { prompt, max_tokens: 2, ignore_eos: true }, { requestId: 'p1' })
    const second = await post(`${s.url}/v1/completions`, { prompt, max_tokens: 2, ignore_eos: true }, { requestId: 'p2' })
    expect(first.error).toBeNull()
    const ttft = (id: string): number => {
      const t = s.trace(id)
      return Number((t?.chunkSendNs[0] ?? 0n) - (t?.engineArrivalNs ?? 0n)) / 1e6
    }
    // 8192 tokens at 0.025 ms each in 4 chunked steps ≈ 245 ms; a hit leaves one block ≈ 10 ms.
    expect(ttft('p1')).toBeGreaterThan(200)
    expect(ttft('p2')).toBeLessThan(40)
    expect(await metric(s, 'vllm:prefix_cache_hits_total')).toBe(8176)
    expect(second.usage).toBeNull()
  })
})

describe('frontDelayMs', () => {
  it('adds its delay to the client TTFT but not to the server-side TTFT', async () => {
    const s = await start({ ttftMs: 30, itlMs: 5, frontDelayMs: 40 })
    await post(`${s.url}/v1/completions`, completionBody(4, 2))
    const r = await post(`${s.url}/v1/completions`, completionBody(4, 2), { requestId: 'fd' })
    const clientTtft = Number((r.tokenChunkNs[0] as bigint) - r.sentNs) / 1e6
    expect(clientTtft).toBeGreaterThanOrEqual(69.5)
    expect(clientTtft).toBeLessThan(80)
    const t = s.trace('fd')
    expect(Number((t?.engineArrivalNs ?? 0n) - (t?.arrivalNs ?? 0n)) / 1e6).toBeCloseTo(40, 0)
    const sum = await metric(s, 'vllm:time_to_first_token_seconds_sum')
    expect(sum / 2).toBeGreaterThan(0.0295)
    expect(sum / 2).toBeLessThan(0.034)
    expect(percentile(gapsMs(r.tokenChunkNs), 50)).toBeLessThan(10)
  })
})

describe('noise and jitter', () => {
  /** Mean server-side gap (ms) of one 30-token stream. */
  const meanGap = async (o: Partial<SimOptions>): Promise<number> => {
    const s = await start({ ttftMs: 5, itlMs: 10, ...o })
    await post(`${s.url}/v1/completions`, completionBody(4, 30), { requestId: 'n' })
    const g = gapsMs(s.trace('n')?.chunkSendNs ?? [])
    await s.close()
    return g.reduce((a, b) => a + b, 0) / g.length
  }

  it('noiseCv draws one run-to-run factor per start: different across seeds, identical for the same seed', async () => {
    const a = await meanGap({ noiseCv: 0.3, seed: 1 })
    const b = await meanGap({ noiseCv: 0.3, seed: 2 })
    const a2 = await meanGap({ noiseCv: 0.3, seed: 1 })
    expect(Math.abs(a - a2)).toBeLessThan(0.3)
    expect(Math.abs(a - b)).toBeGreaterThan(0.5)
  })

  it('jitterCv spreads the gaps of one stream around the mean', async () => {
    const s = await start({ ttftMs: 5, itlMs: 10, jitterCv: 0.3 })
    await post(`${s.url}/v1/completions`, completionBody(4, 60), { requestId: 'j' })
    const g = gapsMs(s.trace('j')?.chunkSendNs ?? [])
    const mean = g.reduce((a, b) => a + b, 0) / g.length
    const sd = Math.sqrt(g.reduce((a, b) => a + (b - mean) ** 2, 0) / g.length)
    expect(mean).toBeGreaterThan(8)
    expect(mean).toBeLessThan(12)
    expect(sd / mean).toBeGreaterThan(0.15)
  })
})
