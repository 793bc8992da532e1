import { describe, expect, it } from 'vitest'
import { summarizeRun } from '../../src/metrics/summarize.js'
import { raw, rec } from './raw-fixture.js'

// Hand-made run, C = 2, measured window 0..200 ms (0.2 s):
// R1 sent at 0: chunks at 100,120,140,160; usage 4 tokens, prompt 10.
// R2 sent at 0: chunks at 50,80,110; usage 6 (2 tokens a chunk), no prompt usage (planned 10).
// R3 sent at 113: chunks at 40,50; no usage at all (2 chunks → 2 tokens); max_tokens 4.
// R4 sent at 170: failed with HTTP 500.
function handRun() {
  return raw(
    2,
    [
      rec(0, [100, 120, 140, 160], { streamEndMs: 165 }),
      rec(0, [50, 80, 110], { usageCompletionTokens: 6, usagePromptTokens: null, maxTokens: 6, streamEndMs: 112 }),
      rec(113, [40, 50], { usageCompletionTokens: null, usagePromptTokens: null, maxTokens: 4, streamEndMs: 55 }),
      rec(170, [], { streamEndMs: 5, contentChunks: 0, error: { kind: 'http_status', detail: 'HTTP 500' } }),
    ],
    0,
    200,
  )
}

describe('summarizeRun', () => {
  const run = summarizeRun(handRun(), { repeat: 2, seed: 77, numPrompts: 4 })

  it('counts completed and failed requests and error kinds', () => {
    expect(run).toMatchObject({ repeat: 2, seed: 77, num_prompts: 4, warmup_requests: 4, completed: 3, failed: 1 })
    expect(run.errors).toEqual({ http_status: 1 })
  })

  it('computes throughputs over endMs − startMs from usage, else chunks', () => {
    expect(run.duration_s).toBeCloseTo(0.2, 12)
    // output 4 + 6 + 2 = 12 tokens; prompts 10 + 10 + 10
    expect(run.output_throughput).toBeCloseTo(60, 9)
    expect(run.total_token_throughput).toBeCloseTo(210, 9)
    expect(run.request_throughput).toBeCloseTo(15, 9)
  })

  it('takes TTFT per request and percentiles by linear interpolation', () => {
    // [40, 50, 100]: p95 h = 1.9 → 50 + 0.9·50
    expect(run.ttft_ms.mean).toBeCloseTo(190 / 3, 3)
    expect(run.ttft_ms.p50).toBeCloseTo(50, 6)
    expect(run.ttft_ms.p95).toBeCloseTo(95, 6)
    expect(run.ttft_ms.p99).toBeCloseTo(99, 6)
  })

  it('takes ITL per chunk, and per token by dividing each gap by tokens per chunk', () => {
    // per chunk [20,20,20,30,30,10]; per token [20,20,20,15,15,10]
    expect(run.itl_ms).toMatchObject({ p50: 20, p95: 30, p99: 30 })
    expect(run.itl_ms.mean).toBeCloseTo(130 / 6, 3)
    expect(run.itl_per_token_ms.p50).toBeCloseTo(17.5, 6)
    expect(run.itl_per_token_ms.p95).toBeCloseTo(20, 6)
    expect(run.itl_per_token_ms.mean).toBeCloseTo(100 / 6, 3)
  })

  it('takes TPOT as (E2EL − TTFT)/(tokens − 1) with usage tokens when present', () => {
    // R1 60/3 = 20, R2 60/5 = 12, R3 10/1 = 10
    expect(run.tpot_ms.mean).toBeCloseTo(14, 6)
    expect(run.tpot_ms.p50).toBeCloseTo(12, 6)
    expect(run.tpot_ms.p95).toBeCloseTo(19.2, 6)
    expect(run.tpot_ms.p99).toBeCloseTo(19.84, 6)
    // 1000/TPOT: 50, 83.33, 100 → median 83.33
    expect(run.tok_s_per_user).toBeCloseTo(1000 / 12, 9)
  })

  it('takes E2EL at the last content chunk', () => {
    expect(run.e2el_ms).toMatchObject({ p50: 110, p95: 155, p99: 159 })
  })

  it('reports token counts two ways, with tokens per chunk, and prompt tokens expected against prompt usage', () => {
    // Prompts: 3 completed × 10 planned; only R1 reported usage.prompt_tokens (10), the others count 0.
    expect(run.tokens).toEqual({
      expected: 14,
      server_usage: 10,
      client_chunks: 9,
      retokenized: null,
      tokens_per_chunk: 10 / 9,
      prompt_expected: 30,
      prompt_server_usage: 10,
    })
  })

  it('leaves prompt usage null when no completed request reported it', () => {
    const r = summarizeRun(
      raw(
        1,
        [
          rec(0, [10, 20], { usagePromptTokens: null }),
          rec(30, [], { usagePromptTokens: 12, contentChunks: 0, error: { kind: 'transport', detail: 'reset' } }),
        ],
        0,
        60,
      ),
      { repeat: 1, seed: 1, numPrompts: 2 },
    )
    expect(r.tokens).toMatchObject({ prompt_expected: 10, prompt_server_usage: null })
  })

  it('starts valid, maps client stats to snake_case and leaves server/GPU figures empty', () => {
    expect(run.validity).toEqual({ valid: true, issues: [] })
    expect(run.server_side).toBeNull()
    expect(run.gpu).toBeNull()
    expect(run.client).toEqual({
      workers: 1,
      event_loop_utilization: 0.3,
      event_loop_delay_p99_ms: 1.5,
      send_lag_p50_ms: 0.2,
      send_lag_p99_ms: 0.9,
      mean_in_flight: 2,
      events_per_second: 1234,
    })
    expect(run.started_at).toBe('2025-01-01T00:00:00.000Z')
  })

  it('fills steady state from the all-slots-busy window [0, 165] ms', () => {
    expect(run.steady_state).not.toBeNull()
    expect(run.steady_state?.start_s).toBe(0)
    expect(run.steady_state?.end_s).toBeCloseTo(0.165, 12)
    expect(run.steady_state?.ramp_fraction).toBeCloseTo(0.175, 12)
    expect(run.steady_state?.output_throughput).toBeCloseTo(12 / 0.165, 6)
    expect(run.steady_state?.completed).toBe(3)
  })

  it('leaves TPOT undefined for one-token outputs and gives zero throughput over an empty window', () => {
    const one = summarizeRun(raw(1, [rec(0, [30])], 0, 0), { repeat: 0, seed: 1, numPrompts: 1 })
    expect(one.tpot_ms.p50).toBeNull()
    expect(one.tok_s_per_user).toBeNull()
    expect(one.itl_ms.p50).toBeNull()
    expect(one.ttft_ms.p50).toBe(30)
    expect(one.output_throughput).toBe(0)
  })

  it('reports no server usage when no request carried it', () => {
    const r = summarizeRun(raw(1, [rec(0, [10, 20], { usageCompletionTokens: null })], 0, 100), { repeat: 0, seed: 1, numPrompts: 1 })
    expect(r.tokens.server_usage).toBeNull()
    expect(r.tokens.tokens_per_chunk).toBeNull()
    expect(r.output_throughput).toBeCloseTo(20, 9)
  })
})
