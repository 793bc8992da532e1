import { describe, expect, it } from 'vitest'
import { tokenizeCount, tokenizeMessages } from '../../src/client/tokenize.js'
import { startSim } from '../../src/sim/index.js'
import { codesOf as codes, runsOf as runs, SMALL_SWEEP, useSimSweep } from '../fixtures/sim-sweep.js'
import { answerJson, startFront, type HttpFront } from '../fixtures/http-front.js'

// llama.cpp's llama-server reads only `content` at POST /tokenize and answers {tokens: []}, status
// 200, to vLLM's {prompt} or {messages}; it templates chat at POST /apply-template. The simulator
// speaks that shape with `tokenize: 'llama-server'`. A count of 0 for a non-empty text is never
// taken: servegate asks in llama-server's shape, and where nothing counts, says the check did not run.
describe('a llama-server-shaped /tokenize', () => {
  const { sweep } = useSimSweep('tokenize-dialects', SMALL_SWEEP)

  it('counts a text and a chat prompt in its shape, as the completion tokenizes them', async () => {
    const sim = await startSim({ ttftMs: 2, itlMs: 1, tokenize: 'llama-server' })
    const vllm = await startSim({ ttftMs: 2, itlMs: 1 })
    const none = await startSim({ ttftMs: 2, itlMs: 1, tokenize: 'none' })
    try {
      const text = 'alpha beta gamma delta'
      const messages = [{ role: 'user', content: text }]
      const want = await tokenizeCount(vllm.url, 'servegate/sim-model', text)
      expect(want).toBeGreaterThan(0)
      expect(await tokenizeCount(sim.url, 'servegate/sim-model', text)).toBe(want)
      const chat = await tokenizeMessages(vllm.url, 'servegate/sim-model', messages, { apiKey: null })
      expect(chat.kind).toBe('count')
      expect(await tokenizeMessages(sim.url, 'servegate/sim-model', messages, { apiKey: null })).toEqual(chat)
      // A server with no /tokenize at all (trtllm-serve's routes): both shapes named in the reason.
      expect(await tokenizeCount(none.url, 'servegate/sim-model', text)).toBeNull()
      expect(await tokenizeMessages(none.url, 'servegate/sim-model', messages, { apiKey: null })).toEqual({
        kind: 'unsupported',
        reason: '/tokenize: HTTP 404; /apply-template: HTTP 404',
      })
    } finally {
      await Promise.all([sim.close(), vllm.close(), none.close()])
    }
  })

  it('sizes chat prompts exactly through /apply-template, and re-counts completions output: no token check fails', async () => {
    const chat = await sweep({ tokenize: 'llama-server' }, { api: 'chat' })
    expect(chat.result.config).toMatchObject({ prompt_calibration: 'tokenize', prompt_calibration_inexact: 0 })
    expect(chat.traces.length).toBeGreaterThan(0)
    expect(chat.traces.every((t) => t.promptTokens === 48)).toBe(true)
    const completions = await sweep({ tokenize: 'llama-server' }, { api: 'completions' })
    for (const run of [...runs(chat.result), ...runs(completions.result)]) {
      // (A busy host may saturate the client: that is the host's code, not these checks'.)
      expect(codes(run)).not.toContain('token_count_mismatch')
      expect(codes(run)).not.toContain('input_len_mismatch')
      expect(codes(run)).not.toContain('checks_not_run')
      expect(run.tokens.retokenized).toBe(run.tokens.server_usage)
    }
  }, 60_000)

  it('never takes 0 tokens for a count: a /tokenize that ignores every body leaves the checks unrun, no run blamed', async () => {
    const chat = await sweep({}, { api: 'chat' }, (s) => emptyTokenize(s.url))
    expect(chat.result.config).toMatchObject({ prompt_calibration: 'none' })
    expect(chat.lines.some((l) => /not calibrated: .* cannot count chat messages \(\/tokenize answered 0 tokens for a non-empty chat prompt/.test(l))).toBe(
      true,
    )
    const completions = await sweep({}, { api: 'completions' }, (s) => emptyTokenize(s.url))
    for (const run of runs(completions.result)) {
      expect(run.tokens.retokenized).toBeNull()
      expect(codes(run)).not.toContain('token_count_mismatch')
    }
  }, 60_000)
})

/** A front to `target` whose POST /tokenize answers {tokens: []} to any body, and which has no /apply-template. */
function emptyTokenize(target: string): Promise<HttpFront> {
  return startFront(target, (req, res) => {
    if (req.path.startsWith('/tokenize')) return answerJson(res, 200, { tokens: [] })
    return req.path.startsWith('/apply-template') && answerJson(res, 404, { error: 'Not Found' })
  })
}
