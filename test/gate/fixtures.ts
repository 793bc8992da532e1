/** Small builders of synthetic result files for the gate and store tests. */
import { atTargetForResult } from '../../src/analysis/at-target.js'
import { assessValidity } from '../../src/analysis/validity.js'
import { defaultRequestTimeoutS } from '../../src/config/defaults.js'
import { fingerprintOf } from '../../src/gate/fingerprint.js'
import { summarizeRun } from '../../src/metrics/summarize.js'
import type { EnvRecord, LatencyStats, PointResult, RawRun, RequestRecord, ResultFile, ResultTarget, RunResult, ValidityCode } from '../../src/types.js'
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
    tokens: {
      expected: completed * s.outputLen,
      server_usage: completed * perReq,
      client_chunks: completed * perReq,
      retokenized: null,
      tokens_per_chunk: 1,
      prompt_expected: completed * 4096,
      prompt_server_usage: completed * 4096,
    },
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

// ---------------------------------------------------------------------------
// Results built the way a sweep builds them: request records → summarizeRun →
// assessValidity → atTargetForResult → fingerprintOf. Defects are injected as
// the raw causes a real run would record (failed requests, short outputs, a
// late event loop, a foreign GPU process), never as hand-set validity.
// ---------------------------------------------------------------------------

/** How one run's requests behave. */
export interface PipeRunSpec {
  /** Gap between content chunks, ms (p95 ITL of the run, and its TPOT when chunks carry one token). */
  itlMs: number
  ttftMs: number
  /** Requests that fail with HTTP 500 (the first ones of the run). */
  failed: number
  /** Output tokens each completed request returns (default: output_len; fewer = an early stop). */
  outTokens?: number
  /** Tokens per content chunk (speculative decoding); the per-token gap stays itlMs / tokensPerChunk. */
  tokensPerChunk: number
  /** The load generator's event loop ran late (client_saturated). */
  saturated: boolean
  /** Another process used the GPU (gpu_shared). */
  gpuShared: boolean
}

export interface PipeSpec {
  shape?: { input_len: number; output_len: number }
  concurrency: number[]
  repeats: number
  /** Per-chunk gap, ms, by concurrency and repeat. */
  itl: (concurrency: number, repeat: number) => number
  run?: (concurrency: number, repeat: number) => Partial<PipeRunSpec>
  /** Runs that were never measured (an interrupted sweep). */
  skip?: (concurrency: number, repeat: number) => boolean
  target?: ResultTarget
  env?: (e: EnvRecord) => void
  /** Overrides of the recorded config (api, model, prompts_per_concurrency, warmup, repeats, gate). */
  config?: Record<string, unknown>
}

function pipeRun(c: number, repeat: number, outputLen: number, ppc: number, s: PipeRunSpec, api: 'completions' | 'chat'): RunResult {
  const n = c * ppc
  const out = s.outTokens ?? outputLen
  const chunks = Math.max(1, Math.ceil(out / s.tokensPerChunk))
  const records: RequestRecord[] = []
  const slotFree = Array.from({ length: c }, () => 0)
  for (let i = 0; i < n; i++) {
    const slot = i % c
    const startMs = slotFree[slot]!
    const base = { id: `r${repeat}-${c}-${i}`, startMs, promptTokens: 64, maxTokens: outputLen, text: '', usagePromptTokens: 64 }
    if (i < s.failed) {
      records.push({
        ...base,
        ttftMs: null,
        chunkArrivalsMs: [],
        e2elMs: null,
        streamEndMs: 1,
        contentChunks: 0,
        usageCompletionTokens: null,
        usagePromptTokens: null,
        sawDone: false,
        finishReason: null,
        error: { kind: 'http_status', detail: 'HTTP 500' },
      })
      slotFree[slot] = startMs + 1
      continue
    }
    const arrivals = Array.from({ length: chunks }, (_, k) => s.ttftMs + k * s.itlMs)
    const e2el = arrivals.at(-1)!
    records.push({
      ...base,
      ttftMs: s.ttftMs,
      chunkArrivalsMs: arrivals,
      e2elMs: e2el,
      streamEndMs: e2el + 0.5,
      contentChunks: chunks,
      usageCompletionTokens: out,
      sawDone: true,
      finishReason: 'length',
      error: null,
    })
    slotFree[slot] = startMs + e2el + 0.5
  }
  const raw: RawRun = {
    concurrency: c,
    records,
    warmupRequests: Math.max(4, c),
    startMs: 0,
    endMs: Math.max(...records.map((r) => r.startMs + r.streamEndMs)),
    client: {
      workers: 1,
      eventLoopUtilization: 0.1,
      eventLoopDelayP99Ms: s.saturated ? 25 : 1,
      sendLagP50Ms: 0.1,
      sendLagP99Ms: 0.5,
      meanInFlight: c,
      eventsPerSecond: 1000,
    },
    startedAt: '2025-01-01T00:00:00.000Z',
    finishedAt: '2025-01-01T00:01:00.000Z',
  }
  const run = summarizeRun(raw, { repeat, seed: 1000 + repeat, numPrompts: n })
  if (s.gpuShared) {
    run.gpu = [
      {
        index: 0,
        name: 'NVIDIA B200',
        utilization_pct: 90,
        sm_clock_mhz: 1900,
        max_sm_clock_mhz: 1965,
        power_w: 700,
        temperature_c: 60,
        throttle_reasons: [],
        foreign_processes: 1,
      },
    ]
  }
  run.validity = assessValidity(run, { concurrency: c, ignoreEos: true, expectPrefixCacheMisses: true, api })
  return run
}

/** A result as `servegate run` writes it (default 64 in / 16 out, 12 prompts per concurrency, target p95 TPOT ≤ 50 ms). */
export function pipelineResult(spec: PipeSpec): ResultFile {
  const shape = spec.shape ?? { input_len: 64, output_len: 16 }
  const target = spec.target ?? TARGET
  const config: Record<string, unknown> = {
    config_file: null,
    sweep: 'gate',
    server: { base_url: 'http://127.0.0.1:8000', model: null, api: 'completions', api_key_env: null },
    target: { ...target },
    shapes: [{ ...shape }],
    concurrency: [...spec.concurrency],
    prompts_per_concurrency: 12,
    warmup: 'auto',
    repeats: spec.repeats,
    seed: 1,
    workers: 'auto',
    // As configForResult records a deadline derived from the one shape.
    request_timeout_s: defaultRequestTimeoutS(shape.input_len, shape.output_len),
    model: 'org/model',
    gate: { tolerance_pct: {}, max_failed_requests: null },
    // As run-sweep records it for completions (exact token-id prompts).
    prompt_calibration: 'token_ids',
    ...spec.config,
  }
  const api = (config['server'] as { api: 'completions' | 'chat' }).api
  const ppc = config['prompts_per_concurrency'] as number
  const points: PointResult[] = spec.concurrency
    .map((c) => ({
      ...shape,
      concurrency: c,
      runs: Array.from({ length: spec.repeats }, (_, r) => r)
        .filter((r) => !(spec.skip?.(c, r) ?? false))
        .map((r) =>
          pipeRun(
            c,
            r,
            shape.output_len,
            ppc,
            { itlMs: spec.itl(c, r), ttftMs: 20, failed: 0, tokensPerChunk: 1, saturated: false, gpuShared: false, ...spec.run?.(c, r) },
            api,
          ),
        ),
    }))
    .filter((p) => p.runs.length > 0)
  const result: ResultFile = {
    schema: 'servegate.result/v1',
    harness: { name: 'servegate', version: '0.1.0' },
    env: makeEnv(spec.env),
    config,
    target,
    points,
    at_target: atTargetForResult(points, target),
  }
  result.fingerprint = fingerprintOf(result)
  return result
}

/**
 * Day `day` of a history through the pipeline: C = 1, 4, 16 at 10, 20, 80 ms per chunk
 * (the 50 ms target is crossed between C = 4 and 16), each × `factor` (worse = > 1).
 */
export function pipeDay(day: number, factor = 1, over: Partial<PipeSpec> = {}): ResultFile {
  const base: Record<number, number> = { 1: 10, 4: 20, 16: 80 }
  return pipelineResult({
    concurrency: [1, 4, 16],
    repeats: 3,
    itl: (c, r) => wiggle(base[c] ?? 10 + c, day, r) * factor,
    env: (e) => {
      e.finished_at = `2025-01-${String(day + 1).padStart(2, '0')}T01:00:00.000Z`
    },
    ...over,
  })
}
