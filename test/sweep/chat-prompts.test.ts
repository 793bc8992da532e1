import { describe, expect, it } from 'vitest'
import { codesOf as codes, runsOf as runs, useSimSweep } from '../fixtures/sim-sweep.js'
import { answerJson, startFront, type HttpFront } from '../fixtures/http-front.js'

// Chat and completions sweeps through runSweep against the simulator, whose ChatML template
// adds 5 tokens to every one-message prompt: what the server prefilled, request by request.
describe('prompt lengths through a sweep', () => {
  const { sweep } = useSimSweep('chat-prompts', { inputLen: '64', outputLen: '12', concurrency: '1,4', repeats: '1', promptsPerConcurrency: '10', warmup: '2' })

  it('calibrates every chat prompt so the server prefills exactly input_len tokens, template included', async () => {
    const { result, lines, traces } = await sweep({}, { api: 'chat' })
    expect(result.config).toMatchObject({ prompt_calibration: 'tokenize', prompt_calibration_inexact: 0 })
    expect(lines.some((l) => l.startsWith('Chat prompts are calibrated to exactly input_len tokens'))).toBe(true)
    // 2 warmup + 10 measured at C=1, 2 + 40 at C=4.
    expect(traces).toHaveLength(2 + 10 + 2 + 40)
    expect(traces.map((t) => t.promptTokens)).toEqual(traces.map(() => 64))
    for (const run of runs(result)) {
      expect(run.tokens.prompt_server_usage).toBe(run.completed * 64)
      expect(run.tokens.prompt_expected).toBe(run.completed * 64)
      expect(codes(run)).not.toContain('input_len_mismatch')
    }
  }, 60_000)

  it('flags every run of a server that keeps only the last 48 prompt tokens as input_len_mismatch', async () => {
    const { result } = await sweep({ truncatePrompt: 48 }, { api: 'chat' })
    for (const run of runs(result)) {
      expect(run.tokens.prompt_server_usage).toBe(run.completed * 48)
      expect(codes(run)).toContain('input_len_mismatch')
      expect(run.validity.issues.find((i) => i.code === 'input_len_mismatch')?.detail).toMatch(
        /48 prompt tokens per completed request .* 64 tokens \(25\.0% fewer/,
      )
    }
  }, 60_000)

  it('passes completions prompts, exact token ids, through the same check; and flags them when truncated', async () => {
    const { result } = await sweep({}, { api: 'completions' })
    expect(result.config).toMatchObject({ prompt_calibration: 'token_ids' })
    expect(result.config).not.toHaveProperty('prompt_calibration_inexact')
    for (const run of runs(result)) {
      expect(run.tokens.prompt_server_usage).toBe(run.completed * 64)
      expect(codes(run)).not.toContain('input_len_mismatch')
    }
    const cut = await sweep({ truncatePrompt: 60 }, { api: 'completions' })
    expect(runs(cut.result).every((r) => codes(r).includes('input_len_mismatch'))).toBe(true)
  }, 60_000)

  it("without /tokenize sends input_len words, says so, and the template shows as prompt_uncalibrated: servegate's gap, not the server's", async () => {
    const { result, lines, traces } = await sweep({}, { api: 'chat' }, (s) => withoutTokenize(s.url))
    expect(result.config).toMatchObject({ prompt_calibration: 'none' })
    expect(
      lines.some((l) =>
        /Chat prompts are input_len words, not calibrated: .* cannot count chat messages \(\/tokenize: HTTP 404; \/apply-template: HTTP 404\)/.test(l),
      ),
    ).toBe(true)
    expect(traces.every((t) => t.promptTokens === 64 + 5)).toBe(true)
    for (const run of runs(result)) {
      expect(run.tokens.prompt_server_usage).toBe(run.completed * 69)
      expect(codes(run)).not.toContain('input_len_mismatch')
      expect(run.validity.issues.find((i) => i.code === 'prompt_uncalibrated')?.detail).toMatch(
        /69 prompt tokens per completed request .*7\.8% more.*servegate could not size these chat prompts.*--api completions/,
      )
    }
    // The gate blames the harness, never the server: unmeasured, not broken.
    const { CODE_BLAME } = await import('../../src/gate/invariants.js')
    expect(CODE_BLAME['prompt_uncalibrated']).toBe('unmeasured')
  }, 60_000)

  it('still blames a server that truncated calibration-less chat prompts (fewer tokens): input_len_mismatch', async () => {
    const { result } = await sweep({ truncatePrompt: 48 }, { api: 'chat' }, (s) => withoutTokenize(s.url))
    expect(result.config).toMatchObject({ prompt_calibration: 'none' })
    for (const run of runs(result)) {
      expect(codes(run)).toContain('input_len_mismatch')
      expect(codes(run)).not.toContain('prompt_uncalibrated')
    }
  }, 60_000)
})

/** A front to `target` whose POST /tokenize answers 404, like a server without the endpoint. */
function withoutTokenize(target: string): Promise<HttpFront> {
  return startFront(target, (req, res) => req.path.startsWith('/tokenize') && answerJson(res, 404, { detail: 'Not Found' }))
}
