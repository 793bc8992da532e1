import { afterEach, describe, expect, it } from 'vitest'
import { tokenNotes } from '../../src/analysis/validity.js'
import type { SimHandle } from '../../src/sim/index.js'
import { codes, detail, measure, point, sim } from './harness.js'

// Tokens counted two ways (usage, content chunks, re-tokenised text, /metrics)
// against simulators that lie, stop early, or pack several tokens per chunk.
describe('token counts on real runs', () => {
  let handle: SimHandle | undefined
  afterEach(async () => {
    await handle?.close()
    handle = undefined
  })
  const p = point({ concurrency: 4, outputLen: 32, numPrompts: 48 })

  it('flags usage that lies (usage × 0.5) as token_count_mismatch with both numbers', async () => {
    handle = await sim({ ttftMs: 10, itlMs: 2, usageSkew: 0.5 })
    const run = await measure(handle, p)
    // 48 requests × 32 tokens really sent; usage claims half.
    expect(run.tokens.server_usage).toBe(768)
    expect(run.tokens.client_chunks).toBe(1536)
    expect(codes(run)).toContain('token_count_mismatch')
    expect(detail(run, 'token_count_mismatch')).toMatch(/usage reports 768 output tokens but the client received 1536 content chunks/)
  }, 30_000)

  it('flags usage inflated beyond max_tokens (usage × 1.5)', async () => {
    handle = await sim({ ttftMs: 10, itlMs: 2, usageSkew: 1.5 })
    const run = await measure(handle, p)
    expect(detail(run, 'token_count_mismatch')).toMatch(/usage reports 2304 output tokens, more than the 1536 that max_tokens allows/)
  }, 30_000)

  it('flags a server that stops at 20 of 32 tokens despite ignore_eos as output_len_mismatch', async () => {
    handle = await sim({ ttftMs: 10, itlMs: 2, stopEarlyAt: 20 })
    const run = await measure(handle, p)
    expect(run.tokens.client_chunks).toBe(48 * 20)
    expect(codes(run)).toContain('output_len_mismatch')
    expect(codes(run)).not.toContain('token_count_mismatch')
    expect(detail(run, 'output_len_mismatch')).toMatch(/produced 960 output tokens, 62\.5% of the 1536 asked for/)
  }, 30_000)

  it('reports 4-token chunks without calling them a mismatch, with ITL per chunk and per token', async () => {
    handle = await sim({ ttftMs: 10, itlMs: 8, tokensPerChunk: 4 })
    const run = await measure(handle, p)
    expect(codes(run)).not.toContain('token_count_mismatch')
    expect(codes(run)).not.toContain('output_len_mismatch')
    expect(run.tokens.server_usage).toBe(1536)
    expect(run.tokens.client_chunks).toBe(384)
    expect(run.tokens.tokens_per_chunk).toBeCloseTo(4, 6)
    // One chunk every 8 ms carrying 4 tokens: 2 ms per token.
    expect(run.itl_ms.p50).toBeGreaterThan(7.5)
    expect(run.itl_ms.p50).toBeLessThan(8.5)
    expect(run.itl_per_token_ms.p50! / run.itl_ms.p50!).toBeCloseTo(0.25, 3)
    expect(tokenNotes(run).join(' ')).toMatch(/Chunks carried 4\.00 tokens on average \(1536 tokens in 384 chunks\)/)
  }, 30_000)
})
