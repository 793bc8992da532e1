/** Small builders of synthetic result files for the gate and store tests. */
import type { EnvRecord, LatencyStats, ResultFile, ResultTarget, RunResult, ValidityCode } from '../../src/types.js'
import { quietClient } from '../fixtures/client.js'

export function lat(p95: number | null, mean = p95): LatencyStats {
  return { mean, p50: p95 === null ? null : p95 * 0.8, p95, p99: p95 === null ? null : p95 * 1.2 }
}

export function makeEnv(mutate?: (e: EnvRecord) => void): EnvRecord {
  const e: EnvRecord = {
    engine: { name: 'vllm', version: '0.9.0' },
    model: { id: 'org/model', revision: 'abc123', root: 'org/model' },
    gpu: { names: ['NVIDIA B200', 'NVIDIA B200'], count: 2, driver_version: '570.1', cuda_version: '12.8', clocks: 'unknown' },
    container_digest: 'sha256:aaaa',
    serve_command: 'vllm serve org/model -tp 2',
    harness: { version: '0.1.0', git_commit: 'deadbeef', node_version: 'v20.11.0' },
    host: { hostname: 'gpu-1', platform: 'linux', cpus: 64 },
    base_url: 'http://127.0.0.1:8000',
    started_at: '2025-01-01T00:00:00.000Z',
    finished_at: '2025-01-01T01:00:00.000Z',
    definitions: { clock: 'client monotonic' },
  }
  mutate?.(e)
  return e
}

export interface RunSpec {
  repeat: number
  itlP95: number
  outputLen: number
  completed?: number
  failed?: number
  /** Output tokens per completed request (default: outputLen). */
  outTokens?: number
  invalid?: ValidityCode[]
}

export function makeRun(s: RunSpec): RunResult {
  const completed = s.completed ?? 48
  const failed = s.failed ?? 0
  const perReq = s.outTokens ?? s.outputLen
  const codes = s.invalid ?? []
  return {
    repeat: s.repeat,
    seed: 1000 + s.repeat,
    warmup_requests: 4,
    num_prompts: completed + failed,
    completed,
    failed,
    duration_s: 60,
    output_throughput: 2000,
    total_token_throughput: 18000,
    request_throughput: 0.8,
    tok_s_per_user: 1000 / s.itlP95,
    ttft_ms: lat(150),
    tpot_ms: lat(s.itlP95),
    itl_ms: lat(s.itlP95),
    e2el_ms: lat(150 + s.itlP95 * (s.outputLen - 1)),
    validity: { valid: codes.length === 0, issues: codes.map((code) => ({ code, detail: `${code} injected` })) },
    started_at: '2025-01-01T00:00:00.000Z',
    finished_at: '2025-01-01T00:01:00.000Z',
    itl_per_token_ms: lat(s.itlP95),
    tokens: { expected: completed * s.outputLen, server_usage: completed * perReq, client_chunks: completed * perReq, retokenized: null, tokens_per_chunk: 1 },
    errors: failed > 0 ? { http_status: failed } : {},
    steady_state: null,
    server_side: null,
    client: quietClient({ mean_in_flight: 4, events_per_second: 1000 }),
    gpu: null,
  }
}

export interface ResultSpec {
  shape?: { input_len: number; output_len: number }
  /** Concurrency → p95 ITL (ms) per repeat. */
  itl: Record<number, number[]>
  /** Throughput at target per repeat (tok/s); null = unreachable. Default 1000 per repeat. */
  tput?: Array<number | null>
  /** Tweak individual runs: (concurrency, repeat) → extra fields of the run spec. */
  run?: (concurrency: number, repeat: number) => Partial<RunSpec>
  env?: (e: EnvRecord) => void
  target?: ResultTarget
}

export const TARGET: ResultTarget = { metric: 'tpot', percentile: 95, threshold_ms: 50 }

/** A result with one shape, the given concurrencies and per-repeat p95 ITLs. */
export function makeResult(spec: ResultSpec): ResultFile {
  const shape = spec.shape ?? { input_len: 4096, output_len: 512 }
  const concs = Object.keys(spec.itl).map(Number)
  const repeats = Math.max(...concs.map((c) => spec.itl[c]!.length))
  const tput = spec.tput ?? Array.from({ length: repeats }, () => 1000)
  return {
    schema: 'servegate.result/v1',
    harness: { name: 'servegate', version: '0.1.0' },
    env: makeEnv(spec.env),
    config: { sweep: 'gate' },
    target: spec.target ?? TARGET,
    points: concs.map((c) => ({
      ...shape,
      concurrency: c,
      runs: spec.itl[c]!.map((itlP95, repeat) => makeRun({ repeat, itlP95, outputLen: shape.output_len, ...spec.run?.(c, repeat) })),
    })),
    at_target: [
      {
        ...shape,
        runs: tput.map((t, repeat) => ({ repeat, throughput: t, concurrency: t === null ? null : 12, bound: t === null ? 'unreachable' : 'interpolated' })),
      },
    ],
  }
}

/** Day-to-day pattern of small deterministic wiggles (±1 %) so histories have a realistic, non-zero spread. */
export function wiggle(base: number, day: number, run: number): number {
  const d = [0, 0.008, -0.006, 0.004, -0.009, 0.002, 0.007, -0.003, -0.001, 0.005][day % 10]!
  const r = [0, 0.012, -0.011][run % 3]!
  return base * (1 + d + r)
}

/** A history-shaped result for day `day`: ITL 10/20 ms at c=1/16 and 1000 tok/s at target, each scaled by `factor` (worse = >1). */
export function dayResult(day: number, factor = 1, runs = 3): ResultFile {
  const rep = Array.from({ length: runs }, (_, i) => i)
  return makeResult({
    itl: { 1: rep.map((r) => wiggle(10, day, r) * factor), 16: rep.map((r) => wiggle(20, day, r) * factor) },
    tput: rep.map((r) => wiggle(1000, day, r) / factor),
    env: (e) => {
      e.finished_at = `2025-01-${String(day + 1).padStart(2, '0')}T01:00:00.000Z`
    },
  })
}
