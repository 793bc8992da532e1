import { describe, expect, it } from 'vitest'
import { assessValidity, describeIssue, DEFAULT_VALIDITY_THRESHOLDS, tokenNotes, type ValidityContext } from '../../src/analysis/validity.js'
import { CODE_BLAME } from '../../src/gate/invariants.js'
import { summarizeRun } from '../../src/metrics/summarize.js'
import { plainValidity } from '../../src/report/format.js'
import type { RequestRecord, RunResult } from '../../src/types.js'
import { raw, rec } from '../metrics/raw-fixture.js'

const CTX: ValidityContext = { concurrency: 4, ignoreEos: true, expectPrefixCacheMisses: true, api: 'chat' }
const OUT = Array.from({ length: 16 }, (_, k) => 20 + k * 10)

/** 48 completed requests of input_len 1000 whose usage.prompt_tokens the server reported as `prompt(i)` (null: none). */
function runWith(prompt: (i: number) => number | null, over: Partial<RequestRecord> = {}): RunResult {
  const records = Array.from({ length: 48 }, (_, i) => rec(i * 10, OUT, { id: `r${i}`, promptTokens: 1000, usagePromptTokens: prompt(i), ...over }))
  return summarizeRun(raw(4, records, 0, 2000), { repeat: 1, seed: 1, numPrompts: 48 })
}
const issue = (run: RunResult) => assessValidity(run, CTX).issues.find((i) => i.code === 'input_len_mismatch') ?? null

describe('input_len_mismatch', () => {
  it('passes a server that prefilled exactly input_len per request', () => {
    const run = runWith(() => 1000)
    expect(run.tokens).toMatchObject({ prompt_expected: 48_000, prompt_server_usage: 48_000 })
    expect(issue(run)).toBeNull()
  })

  it('flags a server that kept only the last 700 tokens, with the figures, as less prefill work', () => {
    const run = runWith(() => 700)
    expect(issue(run)?.detail).toBe(
      "The server's usage counts 700 prompt tokens per completed request (33600 in all), but each prompt was sent as 1000 tokens (30.0% fewer, tolerance 2.0%): the server ignored part of each prompt (it truncated them), so it did less prefill work than the shape says.",
    )
  })

  it('flags prompts that grew under an uncalibrated chat template beyond the tolerance, and says why', () => {
    const run = runWith(() => 1030)
    expect(issue(run)?.detail).toMatch(
      /1030 prompt tokens per completed request .* 3\.0% more, tolerance 2\.0%.*chat template|template and tokenizer add tokens/,
    )
  })

  it('tolerates a mean within 2%: a template of a few tokens on a long prompt, or prompts a token or two short', () => {
    expect(DEFAULT_VALIDITY_THRESHOLDS.inputLenTolerance).toBe(0.02)
    expect(issue(runWith(() => 1019))).toBeNull()
    expect(issue(runWith((i) => (i % 2 === 0 ? 999 : 1000)))).toBeNull()
    expect(issue(runWith(() => 979))).not.toBeNull()
  })

  it('judges the mean over requests, so a server truncating some prompts is caught once it matters', () => {
    expect(issue(runWith((i) => (i < 4 ? 500 : 1000)))).not.toBeNull() // 4 of 48 halved: 4.2% fewer
    expect(issue(runWith((i) => (i === 0 ? 500 : 1000)))).toBeNull() // 1 of 48: 1.0%
  })

  it('counts a request that sent no prompt usage among others that did as 0, so it shows', () => {
    expect(issue(runWith((i) => (i === 0 ? null : 1000)))).not.toBeNull()
  })

  it('has no evidence when the server never reports prompt usage, and notes it when it reports output usage', () => {
    const run = runWith(() => null)
    expect(run.tokens.prompt_server_usage).toBeNull()
    expect(issue(run)).toBeNull()
    expect(tokenNotes(run)).toContain("The server's usage carried no prompt_tokens, so the prompt length it processed is unchecked.")
    expect(tokenNotes(runWith(() => 1000))).toEqual([])
  })

  it('is listed after output_len_mismatch, explained, labelled, and blamed on the server like an early stop', () => {
    // Truncated prompts and outputs cut at 8 of 16 tokens.
    const both = runWith(() => 600, { chunkArrivalsMs: OUT.slice(0, 8), contentChunks: 8, usageCompletionTokens: 8, maxTokens: 16 })
    expect(
      assessValidity(both, CTX)
        .issues.map((i) => i.code)
        .filter((c) => c.endsWith('_len_mismatch')),
    ).toEqual(['output_len_mismatch', 'input_len_mismatch'])
    expect(describeIssue('input_len_mismatch')).toMatch(/different number of prompt tokens/)
    expect(plainValidity('input_len_mismatch')).toBe('the server processed another prompt length than was sent')
    expect(CODE_BLAME.input_len_mismatch).toBe(CODE_BLAME.output_len_mismatch)
    expect(CODE_BLAME.input_len_mismatch).toBe('broken')
  })
})
