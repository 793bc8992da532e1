/** Small hand-made results, baselines and verdicts for the action's unit tests. */
import type { Baseline, GateRow, Verdict } from '../../src/gate/types.js'
import type { EnvRecord, LatencyStats, ResultFile, RunResult } from '../../src/types.js'

const lat = (p95: number): LatencyStats => ({ mean: p95 * 0.8, p50: p95 * 0.7, p95, p99: p95 * 1.2 })

export function env(over: Partial<EnvRecord> = {}): EnvRecord {
  return {
    engine: { name: 'vllm', version: '0.11.0' },
    model: { id: 'zai-org/GLM-5.3-Flash', revision: 'abc123', root: 'zai-org/GLM-5.3-Flash' },
    gpu: { names: ['NVIDIA B200'], count: 4, driver_version: '580.1', cuda_version: '13.0', clocks: 'unknown' },
    container_digest: 'sha256:feed',
    serve_command: 'vllm serve …',
    harness: { version: '0.1.0', git_commit: 'unknown', node_version: 'v20' },
    host: { hostname: 'h', platform: 'linux', cpus: 8 },
    base_url: 'http://127.0.0.1:8000',
    started_at: '2025-01-01T00:00:00Z',
    finished_at: '2025-01-01T00:10:00Z',
    definitions: {},
    ...over,
  }
}

function run(repeat: number, tput: number, tpotP95: number): RunResult {
  return {
    repeat,
    seed: repeat,
    warmup_requests: 2,
    num_prompts: 12,
    completed: 12,
    failed: 0,
    duration_s: 10,
    output_throughput: tput,
    total_token_throughput: tput * 2,
    request_throughput: 1.2,
    tok_s_per_user: 40,
    ttft_ms: lat(100),
    tpot_ms: lat(tpotP95),
    itl_ms: lat(tpotP95),
    e2el_ms: lat(5000),
    validity: { valid: true, issues: [] },
    started_at: '2025-01-01T00:00:00Z',
    finished_at: '2025-01-01T00:00:10Z',
    itl_per_token_ms: lat(tpotP95),
    tokens: {
      expected: 1536,
      server_usage: 1536,
      client_chunks: 1536,
      retokenized: null,
      tokens_per_chunk: 1,
      prompt_expected: 12 * 128,
      prompt_server_usage: 12 * 128,
    },
    errors: {},
    steady_state: null,
    server_side: null,
    client: {
      workers: 1,
      event_loop_utilization: 0.1,
      event_loop_delay_p99_ms: 1,
      send_lag_p50_ms: 0,
      send_lag_p99_ms: 1,
      mean_in_flight: 1,
      events_per_second: 100,
    },
    gpu: null,
  }
}

/** A result with concurrency 1 and 16 (3 repeats each) of one 128×32 shape. */
export function result(): ResultFile {
  return {
    schema: 'servegate.result/v1',
    harness: { name: 'servegate', version: '0.1.0' },
    env: env(),
    config: {},
    target: { metric: 'tpot', percentile: 95, threshold_ms: 50 },
    points: [
      { input_len: 128, output_len: 32, concurrency: 16, runs: [run(0, 900, 45), run(1, 910, 46), run(2, 905, 44)] },
      { input_len: 128, output_len: 32, concurrency: 1, runs: [run(0, 100, 10), run(1, 101, 11), run(2, 99, 12)] },
    ],
    at_target: [
      {
        input_len: 128,
        output_len: 32,
        runs: [0, 1, 2].map((repeat) => ({ repeat, throughput: 950 + repeat * 10, concurrency: 17, bound: 'interpolated' as const })),
      },
    ],
  }
}

export function baseline(): Baseline {
  return {
    schema: 'servegate.baseline/v1',
    name: 'gate',
    target: { metric: 'tpot', percentile: 95, threshold_ms: 50 },
    profile: { shapes: [{ input_len: 128, output_len: 32 }], concurrency: [1, 16] },
    refreshes: [
      {
        at: '2024-12-31T00:00:00Z',
        env: env(),
        runs: {
          'output_tput@128x32@c1': [98, 100, 102],
          'tpot_p95@128x32@c1': [9, 10, 11],
          'output_tput@128x32@c16': [1000, 1010, 990],
          'tpot_p95@128x32@c16': [40, 41, 39],
          'tput_at_target@128x32': [1000, 1000, 1040],
        },
        invalid: [],
      },
    ],
  }
}

export function row(status: GateRow['status'], label = 'p95 ITL 128×32 c=16'): GateRow {
  return {
    key: 'itl_p95@128x32@c16',
    kind: 'itl_p95',
    label,
    unit: 'ms',
    higher_is_better: false,
    gated: true,
    baseline: 40,
    candidate: status === 'regression' ? 50 : 40.5,
    delta_pct: status === 'regression' ? 25 : 1.25,
    bar_pct: 6,
    sigma_pct: 1.5,
    n_baseline: 3,
    n_candidate: 3,
    history: 1,
    mdc_pct: 5,
    status,
    notes: [],
  }
}

export function verdict(kind: Verdict['verdict'], over: Partial<Verdict> = {}): Verdict {
  const regressed = kind === 'regression'
  return {
    verdict: kind,
    rows: [row(regressed ? 'regression' : kind === 'undecided' ? 'undecided' : 'pass')],
    envChanges: [{ field: 'engine version', baseline: '0.11.0', candidate: '0.11.1', blame: 'repository' }],
    reasons: regressed ? ['p95 ITL 128×32 c=16: +25.0 % exceeds the bar of 6.0 %'] : kind === 'pass' ? [] : [`${kind}: noisy`],
    regressions: regressed ? ['p95 ITL 128×32 c=16'] : [],
    confirm: null,
    blind: [],
    ...over,
  }
}
