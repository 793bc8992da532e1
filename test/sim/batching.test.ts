import { afterEach, describe, expect, it } from 'vitest'
import { startSim, type SimHandle } from '../../src/sim/index.js'
import { profileFromFile } from '../../src/sim/profiles.js'
import { completionBody, gapsMs, makeAgent, percentile, post, type StreamResult } from './sim-client.js'

let sim: SimHandle | null = null
const agent = makeAgent(128)
afterEach(async () => {
  await sim?.close()
  sim = null
})

/** Client-side TPOT (ms) of each of `c` concurrent requests. */
async function tpots(s: SimHandle, c: number, inputLen: number, outputLen: number): Promise<number[]> {
  const rs = await Promise.all(Array.from({ length: c }, () => post(`${s.url}/v1/completions`, completionBody(inputLen, outputLen), { agent })))
  return rs.map((r: StreamResult) => {
    expect(r.error).toBeNull()
    const n = r.tokenChunkNs.length
    return Number((r.tokenChunkNs[n - 1] as bigint) - (r.tokenChunkNs[0] as bigint)) / 1e6 / (n - 1)
  })
}

describe('batching mode (default profile)', () => {
  // retry: a stall of the whole host for seconds spoils every batch of an attempt alike.
  it('slowdown 1.10 raises ITL by 10% ± 2% at fixed concurrency', { retry: 2, timeout: 60_000 }, async () => {
    // A stall of the test machine only ever lengthens a step, so each side takes the
    // fastest of five batches: the figure closest to the model's step time. The two
    // servers run side by side and are measured in turns, so a busy neighbour that comes
    // and goes falls on both sides alike instead of on whichever side ran while it was busy.
    sim = await startSim({ profile: 'default', seed: 3 })
    const slowSim = await startSim({ profile: 'default', seed: 3, slowdown: 1.1 })
    try {
      await tpots(sim, 8, 16, 8) // warm-up
      await tpots(slowSim, 8, 16, 8)
      let base = Infinity
      let slow = Infinity
      for (let i = 0; i < 5; i++) {
        base = Math.min(base, percentile(await tpots(sim, 8, 16, 120), 50))
        slow = Math.min(slow, percentile(await tpots(slowSim, 8, 16, 120), 50))
      }
      if (process.env.SIM_DEBUG) console.log({ base, slow, ratio: slow / base })
      // Model: 9.9 + 0.1 × 8 = 10.7 ms per step. On a quiet host the ratio reads 1.098–1.100.
      // A busy neighbour delays the engine loop, which shares this thread, by a roughly fixed
      // time per step: that lengthens both sides alike (base up to ~11.3 ms) and pulls the
      // ratio down towards 1 (1.078–1.089 beside one busy loop). The bounds allow that and
      // still tell a 10 % knob from none (1.0) and from a doubled one (1.2).
      expect(base).toBeGreaterThan(10.7 * 0.95)
      expect(base).toBeLessThan(10.7 * 1.08)
      expect(slow / base).toBeGreaterThan(1.06)
      expect(slow / base).toBeLessThan(1.12)
    } finally {
      await slowSim.close()
    }
  })

  it('spikes p99 ITL above p50 when long prompts arrive during decode', async () => {
    sim = await startSim({ profile: 'default', timeScale: 0.5 })
    const s = sim
    const decoders = Array.from({ length: 4 }, () => post(`${s.url}/v1/completions`, completionBody(16, 150), { agent }))
    await new Promise((r) => setTimeout(r, 200))
    const prefillsAt = process.hrtime.bigint()
    const prefills = Array.from({ length: 3 }, () => post(`${s.url}/v1/completions`, completionBody(8000, 2), { agent }))
    const done = await Promise.all(decoders)
    await Promise.all(prefills)
    const itl = done.flatMap((r) => gapsMs(r.tokenChunkNs)).map((g) => g / 0.5)
    // The plain decode steps before the long prompts arrived, as this host ran them: a busy host
    // lengthens every step by about the same delay, so the spike is read against these, not a clock.
    const decodeOnly = done.flatMap((r) => gapsMs(r.tokenChunkNs.filter((t) => t < prefillsAt))).map((g) => g / 0.5)
    expect(decodeOnly.length).toBeGreaterThan(20)
    const step = percentile(decodeOnly, 50)
    const p50 = percentile(itl, 50)
    // Steps carrying a 2048-token prefill chunk cost ≈ 9.9 + 51 ms; plain decode steps ≈ 10.7 ms.
    // Most gaps stay plain decode steps, and the p99 is a prefill step's, several of them long.
    expect(p50).toBeLessThan(step * 1.3)
    expect(percentile(itl, 99)).toBeGreaterThan(3 * p50)
  }, 20_000)

  it('queues requests beyond maxRunning and reports them in /metrics', async () => {
    sim = await startSim({ profile: profileFromFile({ base: 'default', max_running: 2 }, 'inline profile'), timeScale: 0.5 })
    const s = sim
    const streams = Array.from({ length: 5 }, () => post(`${s.url}/v1/completions`, completionBody(16, 60), { agent }))
    await new Promise((r) => setTimeout(r, 100))
    const text = await (await fetch(`${s.url}/metrics`)).text()
    expect(text).toMatch(/^vllm:num_requests_running\{[^}]*\} 2$/m)
    expect(text).toMatch(/^vllm:num_requests_waiting\{[^}]*\} 3$/m)
    const rs = await Promise.all(streams)
    const ttft = rs.map((r) => Number((r.tokenChunkNs[0] as bigint) - r.sentNs) / 1e6).sort((a, b) => a - b)
    // The last admitted waits for two generations of 60 tokens (~2 × 60 × 10 ms × 0.5).
    expect(ttft[4]).toBeGreaterThan(500)
    expect(ttft[0]).toBeLessThan(100)
  }, 20_000)
})

describe('batching mode serves every request form', () => {
  it('streams chat with reasoning, answers non-streaming requests, and records traces', async () => {
    sim = await startSim({ profile: 'small', timeScale: 0.5, reasoningTokens: 2 })
    const chat = await post(
      `${sim.url}/v1/chat/completions`,
      { messages: [{ role: 'user', content: 'a b c' }], max_tokens: 6, ignore_eos: true, stream: true, stream_options: { include_usage: true } },
      { agent, requestId: 'bc' },
    )
    expect(chat.tokenChunkNs).toHaveLength(6)
    expect(chat.usage).toMatchObject({ prompt_tokens: 3 + 5, completion_tokens: 6 }) // 3 words + the template's 5
    expect(sim.trace('bc')?.tokensPerChunk).toEqual([1, 1, 1, 1, 1, 1])
    const plain = await post(`${sim.url}/v1/completions`, { prompt: [1, 2, 3], max_tokens: 4, ignore_eos: true }, { agent })
    expect(JSON.parse(plain.body)).toMatchObject({ choices: [{ text: ' tok0 tok1 tok2 tok3', finish_reason: 'length' }] })
  })

  it('ends open streams quickly on close', async () => {
    const s = (sim = await startSim({ profile: 'default' }))
    const pending = Array.from({ length: 4 }, () => post(`${s.url}/v1/completions`, completionBody(16, 5000), { agent }))
    await new Promise((r) => setTimeout(r, 100))
    const t0 = Date.now()
    await s.close()
    const rs = await Promise.all(pending)
    expect(Date.now() - t0).toBeLessThan(500)
    for (const r of rs) expect(r.sawDone).toBe(false)
  })
})
