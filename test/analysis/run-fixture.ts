import type { LatencyStats, RunResult } from '../../src/types.js'

export const stats = (p95: number | null, p50: number | null = p95, p99: number | null = p95): LatencyStats => ({ mean: p50, p50, p95, p99 })

/**
 * A clean run at C = 4: 48 of 48 requests completed, 64 tokens each by both
 * counts (3,072 = 48 × max_tokens 64), steady ramp 10%, idle client.
 */
export function cleanRun(over: Partial<RunResult> = {}): RunResult {
  return {
    repeat: 0,
    seed: 1,
    warmup_requests: 8,
    num_prompts: 48,
    completed: 48,
    failed: 0,
    duration_s: 10,
    output_throughput: 307.2,
    total_token_throughput: 921.6,
    request_throughput: 4.8,
    tok_s_per_user: 50,
    ttft_ms: stats(120, 100, 130),
    tpot_ms: stats(21, 20, 22),
    itl_ms: stats(21, 20, 25),
    e2el_ms: stats(1400, 1360, 1450),
    validity: { valid: true, issues: [] },
    started_at: '2025-01-01T00:00:00.000Z',
    finished_at: '2025-01-01T00:00:10.000Z',
    itl_per_token_ms: stats(21, 20, 25),
    tokens: {
      expected: 3072,
      server_usage: 3072,
      client_chunks: 3072,
      retokenized: null,
      tokens_per_chunk: 1,
      prompt_expected: 48 * 64,
      prompt_server_usage: 48 * 64,
    },
    errors: {},
    steady_state: {
      start_s: 0.1,
      end_s: 9.1,
      ramp_fraction: 0.1,
      completed: 40,
      output_throughput: 320,
      ttft_ms: stats(120),
      tpot_ms: stats(21),
      itl_ms: stats(21),
    },
    server_side: null,
    client: {
      workers: 1,
      event_loop_utilization: 0.2,
      event_loop_delay_p99_ms: 2,
      send_lag_p50_ms: 0.1,
      send_lag_p99_ms: 0.8,
      mean_in_flight: 3.98,
      events_per_second: 300,
    },
    gpu: null,
    ...over,
  }
}
