import type { AtTargetShape, EnvRecord, LatencyStats, PointResult, ResultFile, RunResult, ServerSide, SteadyState, ValidityIssue } from '../../src/types.js'
import { quietClient } from '../fixtures/client.js'

const lat = (p50: number, p99: number): LatencyStats => ({ mean: p50, p50, p95: (p50 + p99) / 2, p99 })

/** A steady-state window leaving `ramp` (0..1) of a 10 s run outside it. */
export function steady(ramp: number): SteadyState {
  const empty: LatencyStats = { mean: null, p50: null, p95: null, p99: null }
  return { start_s: ramp * 5, end_s: 10 - ramp * 5, ramp_fraction: ramp, completed: 12, output_throughput: 0, ttft_ms: empty, tpot_ms: empty, itl_ms: empty }
}

/** Server-side figures as an engine's /metrics gives them; itl/tpot null when the engine has no such histogram. */
export function serverSide(f: {
  ttft: [number, number]
  itl: [number, number] | null
  tpot: [number, number] | null
  e2el: [number, number]
  generated: number | null
}): ServerSide {
  return {
    source: 'prometheus',
    ttft_ms: lat(...f.ttft),
    itl_ms: f.itl && lat(...f.itl),
    tpot_ms: f.tpot && lat(...f.tpot),
    e2el_ms: lat(...f.e2el),
    prompt_tokens: null,
    generation_tokens: f.generated,
    prefix_cache_queries: null,
    prefix_cache_hits: null,
  }
}

/** A run with the figures a report reads; everything else zero. */
export function run(
  repeat: number,
  f: { ttft: [number, number]; itl: [number, number]; tput: number; perUser: number | null; issues?: ValidityIssue[] },
): RunResult {
  const empty: LatencyStats = { mean: null, p50: null, p95: null, p99: null }
  return {
    repeat,
    seed: 1000 + repeat,
    warmup_requests: 4,
    num_prompts: 12,
    completed: 12,
    failed: 0,
    duration_s: 10,
    output_throughput: f.tput,
    total_token_throughput: f.tput * 3,
    request_throughput: 1,
    tok_s_per_user: f.perUser,
    ttft_ms: lat(...f.ttft),
    tpot_ms: lat(...f.itl),
    itl_ms: lat(...f.itl),
    e2el_ms: empty,
    validity: { valid: (f.issues ?? []).length === 0, issues: f.issues ?? [] },
    started_at: '2025-01-01T00:00:00.000Z',
    finished_at: '2025-01-01T00:00:10.000Z',
    itl_per_token_ms: lat(...f.itl),
    tokens: {
      expected: 768,
      server_usage: 768,
      client_chunks: 768,
      retokenized: null,
      tokens_per_chunk: 1,
      prompt_expected: 12 * 4096,
      prompt_server_usage: 12 * 4096,
    },
    errors: {},
    steady_state: null,
    server_side: null,
    client: quietClient(),
    gpu: null,
  }
}

export const ENV: EnvRecord = {
  engine: { name: 'vllm', version: '0.11.0' },
  model: { id: 'zai-org/GLM-5.3-Flash', revision: 'abc123', root: 'zai-org/GLM-5.3-Flash' },
  gpu: {
    names: ['NVIDIA B200', 'NVIDIA B200', 'NVIDIA B200', 'NVIDIA B200'],
    count: 4,
    driver_version: '570.86',
    cuda_version: '12.8',
    clocks: 'GPU0 SM 1965/1965 MHz',
  },
  container_digest: 'sha256:feed',
  serve_command: 'vllm serve zai-org/GLM-5.3-Flash --tensor-parallel-size 4',
  harness: { version: '0.1.0', git_commit: 'deadbeef', node_version: 'v20.19.0' },
  host: { hostname: 'runner', platform: 'linux x64', cpus: 64 },
  base_url: 'http://127.0.0.1:8000',
  started_at: '2025-01-01T00:00:00.000Z',
  finished_at: '2025-01-01T01:00:00.000Z',
  definitions: {},
}

/** A result for one shape, 4096 in / 512 out, planned at the given concurrencies with 3 repeats. */
export function result(points: PointResult[], atTarget: AtTargetShape[], concurrency = [1, 16, 64]): ResultFile {
  return {
    schema: 'servegate.result/v1',
    harness: { name: 'servegate', version: '0.1.0' },
    env: ENV,
    config: { sweep: 'full', shapes: [{ input_len: 4096, output_len: 512 }], concurrency, warmup: 'auto', repeats: 3 },
    target: { metric: 'tpot', percentile: 95, threshold_ms: 50 },
    points,
    at_target: atTarget,
  }
}

export const point = (concurrency: number, runs: RunResult[]): PointResult => ({ input_len: 4096, output_len: 512, concurrency, runs })
