/**
 * zod schema of the `servegate.result/v1` file. src/types.ts is the source of
 * truth: the compile-time check at the bottom fails if the two ever differ.
 * Only `config` (the resolved config as given) and `env.definitions` are open
 * records; every other object lists its keys (unknown ones are dropped on read),
 * except latency figures, which hold exactly the statistics every run records
 * (mean, p50, p95, p99): a `p90` there is a file servegate did not write, and a
 * gate reading it would compare something nobody measured.
 *
 * Beyond shapes, a file must make sense as one sweep: each point (shape ×
 * concurrency) once, each repeat once per point, the client's latencies
 * finite and not negative (TTFT and E2EL > 0), and a target percentile that runs record.
 */
import { z } from 'zod'
import { TARGET_PERCENTILES } from '../config/defaults.js'
import { RESULT_SCHEMA, type ResultFile } from '../types.js'

const count = z.number().int().nonnegative()
const num = z.number()
const latency = z.strictObject({ mean: num.nullable(), p50: num.nullable(), p95: num.nullable(), p99: num.nullable() })

// The client's own latencies come from a monotonic clock. JSON has no NaN, but 0, -1 and
// 1e999 (Infinity once parsed) all parse: none is a measurement. TTFT and E2EL are above 0 (a
// request takes time); ITL and TPOT may be 0 when chunks arrive in one read (the gate leaves such
// a figure undecided), never negative. Null stays: no request, no figure.
const msOf = (min: 'positive' | 'nonnegative') => {
  const rule = `expected a latency in ms: a finite number ${min === 'positive' ? '> 0' : '≥ 0'}, or null`
  const n = min === 'positive' ? z.number({ error: rule }).positive({ error: rule }) : z.number({ error: rule }).nonnegative({ error: rule })
  return z.strictObject({ mean: n.nullable(), p50: n.nullable(), p95: n.nullable(), p99: n.nullable() })
}
const elapsedMs = msOf('positive')
const gapMs = msOf('nonnegative')

const validityCode = z.enum([
  'client_saturated',
  'token_count_mismatch',
  'output_len_mismatch',
  'input_len_mismatch',
  'prompt_uncalibrated',
  'prefix_cache_contaminated',
  'ramp_dominated',
  'requests_failed',
  'too_few_requests',
  'gpu_throttled',
  'gpu_shared',
  'checks_not_run',
  'shards_unaligned',
])

const steadyState = z.object({
  start_s: num,
  end_s: num,
  ramp_fraction: num,
  completed: count,
  output_throughput: num,
  ttft_ms: latency,
  tpot_ms: latency,
  itl_ms: latency,
})

const serverSide = z.object({
  source: z.literal('prometheus'),
  ttft_ms: latency,
  itl_ms: latency.nullable(),
  tpot_ms: latency.nullable(),
  e2el_ms: latency,
  prompt_tokens: num.nullable(),
  generation_tokens: num.nullable(),
  prefix_cache_queries: num.nullable(),
  prefix_cache_hits: num.nullable(),
})

const gpuSample = z.object({
  index: count,
  name: z.string(),
  utilization_pct: num.nullable(),
  sm_clock_mhz: num.nullable(),
  max_sm_clock_mhz: num.nullable(),
  power_w: num.nullable(),
  temperature_c: num.nullable(),
  throttle_reasons: z.array(z.string()),
  foreign_processes: num.nullable(),
})

const positiveIntNum = z.number().int().positive()
const hostClock = z.object({ server: z.string().nullable(), offset_ms: z.number().nullable(), uncertainty_ms: z.number().nonnegative().nullable() })

const runResult = z.object({
  repeat: count,
  // Null in runs imported from another tool's file, which does not record them.
  seed: num.nullable(),
  warmup_requests: count.nullable(),
  num_prompts: count,
  completed: count,
  failed: count,
  duration_s: num,
  output_throughput: num,
  total_token_throughput: num,
  request_throughput: num,
  tok_s_per_user: num.nullable(),
  ttft_ms: elapsedMs,
  tpot_ms: gapMs,
  itl_ms: gapMs,
  e2el_ms: elapsedMs,
  validity: z.object({ valid: z.boolean(), issues: z.array(z.object({ code: validityCode, detail: z.string() })) }),
  started_at: z.string(),
  finished_at: z.string(),
  itl_per_token_ms: gapMs,
  tokens: z.object({
    expected: num.nullable(),
    server_usage: num.nullable(),
    client_chunks: num.nullable(),
    retokenized: num.nullable(),
    tokens_per_chunk: num.nullable(),
    // Recorded since prompt lengths are checked; a result written before reads as "not recorded".
    prompt_expected: num.nullable().default(null),
    prompt_server_usage: num.nullable().default(null),
    // Recorded since usage's cached_tokens feeds the prefix-cache check; absent before.
    prompt_cached_usage: num.nullable().optional(),
  }),
  errors: z.record(z.string(), num),
  steady_state: steadyState.nullable(),
  server_side: serverSide.nullable(),
  client: z
    .object({
      workers: num,
      event_loop_utilization: num,
      event_loop_delay_p99_ms: num,
      send_lag_p50_ms: num,
      send_lag_p99_ms: num,
      mean_in_flight: num,
      events_per_second: num,
    })
    .nullable(),
  gpu: z.array(gpuSample).nullable(),
  // Open-loop runs (and --goodput) only; absent otherwise.
  arrivals: z
    .object({
      rate: num.positive().nullable(),
      burstiness: num.positive(),
      mean_interarrival_ms: num.nonnegative().nullable(),
      cv: num.nonnegative().nullable(),
      requested_rate: z.union([num.positive(), z.literal('inf')]),
      max_concurrency: positiveIntOrNull(),
      send_lateness_ms: gapMs,
      queue_ms: gapMs,
      scheduled_rate: num.positive().nullable(),
    })
    .optional(),
  from_schedule: z.object({ ttft_ms: elapsedMs, e2el_ms: elapsedMs }).optional(),
  goodput: z
    .object({
      share: num.min(0).max(1).nullable(),
      request_throughput: num.nonnegative(),
      output_throughput: num.nonnegative(),
      slo: z.object({ ttft_ms: num.positive().optional(), tpot_ms: num.positive().optional(), e2el_ms: num.positive().optional() }),
    })
    .optional(),
  // Attempts the host spoiled, measured again (sweep host_retries); absent: the first attempt was kept.
  discarded_attempts: z
    .array(
      z.object({
        seed: num,
        started_at: z.string(),
        finished_at: z.string(),
        issues: z.array(z.object({ code: validityCode, detail: z.string() })).min(1),
      }),
    )
    .optional(),
  // A run merged from a sharded sweep's shards (servegate merge); absent otherwise.
  shards: z
    .object({
      count: positiveIntNum,
      parts: z
        .array(
          z.object({
            index: count,
            concurrency: positiveIntNum,
            seed: num,
            host: z.string(),
            completed: count,
            failed: count,
            issues: z.array(validityCode),
            late_ms: num.nonnegative(),
          }),
        )
        .min(1),
      alignment: z.object({
        start_spread_ms: num.nonnegative(),
        measure_spread_ms: num.nonnegative(),
        end_spread_ms: num.nonnegative(),
        bound_ms: num.positive(),
        start_bound_ms: num.positive(),
        end_bound_ms: num.positive(),
        clock_uncertainty_ms: num.nonnegative().nullable(),
      }),
    })
    .optional(),
})

function positiveIntOrNull() {
  return z.number().int().positive().nullable()
}

/** Result targets: the interactivity target a sweep was measured against. */
const PERCENTILE_RULE = `expected ${TARGET_PERCENTILES.join(', ')} (the percentiles every run records)`
export const resultTargetSchema = z.object({
  metric: z.enum(['tpot', 'itl']),
  percentile: z.number({ error: PERCENTILE_RULE }).refine((p) => (TARGET_PERCENTILES as readonly number[]).includes(p), { error: PERCENTILE_RULE }),
  threshold_ms: num.positive(),
})

/** The environment record, shared by result and baseline files. */
export const envRecordSchema = z.object({
  engine: z.object({ name: z.string(), version: z.string() }),
  model: z.object({ id: z.string(), revision: z.string(), root: z.string() }),
  gpu: z.object({
    names: z.array(z.string()),
    count: z.union([count, z.literal('unknown')]),
    driver_version: z.string(),
    cuda_version: z.string(),
    clocks: z.string(),
  }),
  container_digest: z.string(),
  serve_command: z.string(),
  harness: z.object({ version: z.string(), git_commit: z.string(), node_version: z.string() }),
  host: z.object({ hostname: z.string(), platform: z.string(), cpus: z.union([num, z.literal('unknown')]) }),
  // A merged sharded sweep: every load host and the shards it ran.
  load_hosts: z
    .array(z.object({ hostname: z.string(), platform: z.string(), cpus: z.union([num, z.literal('unknown')]), shards: z.array(count).min(1) }))
    .optional(),
  // Absent in results and baselines written before the serving machine's identity was recorded.
  server_host: z
    .object({
      location: z.enum(['local', 'remote']),
      hostname: z.string(),
      machine_id_sha256: z.string(),
      platform: z.string(),
      cpu_model: z.string(),
      cpus: z.union([num, z.literal('unknown')]),
      gpu_uuids: z.array(z.string()),
    })
    .optional(),
  base_url: z.string(),
  started_at: z.string(),
  finished_at: z.string(),
  definitions: z.record(z.string(), z.string()),
})

const positiveInt = z.number().int().positive()

/** The measurement fingerprint (gate/fingerprint.ts), shared by result and baseline files. */
export const fingerprintSchema = z.object({
  api: z.string(),
  model: z.string(),
  shapes: z.array(z.string()),
  concurrency: z.array(positiveInt),
  prompts_per_concurrency: z.union([positiveInt, z.literal('unknown')]),
  warmup: z.union([count, z.literal('auto'), z.literal('unknown')]),
  target: z.string(),
  ignore_eos: z.boolean(),
  tokens_per_chunk: z.record(z.string(), num.nullable()),
  prompt_calibration: z.string().optional(),
  load: z.string().optional(),
  request_extras: z.string().optional(),
  tokenizer: z.string().optional(),
  request_timeout: z.string().optional(),
  workers: z.string().optional(),
  harness: z.string().optional(),
})

export const resultFileSchema = z
  .object({
    schema: z.literal(RESULT_SCHEMA),
    harness: z.object({ name: z.literal('servegate'), version: z.string() }),
    env: envRecordSchema,
    config: z.record(z.string(), z.unknown()),
    target: resultTargetSchema,
    points: z.array(
      z.object({
        input_len: positiveInt,
        output_len: positiveInt,
        concurrency: positiveInt,
        request_rate: z.union([num.positive(), z.literal('inf')]).optional(),
        runs: z.array(runResult),
      }),
    ),
    at_target: z.array(
      z.object({
        input_len: positiveInt,
        output_len: positiveInt,
        runs: z.array(
          z.object({
            repeat: count,
            throughput: num.nullable(),
            concurrency: num.nullable(),
            bound: z.enum(['interpolated', 'lower_bound', 'unreachable', 'exact']),
            request_rate: num.nullable().optional(),
          }),
        ),
      }),
    ),
    fingerprint: fingerprintSchema.optional(),
    interrupted: z
      .object({
        at: z.string(),
        reason: z.string(),
        cut_run: z.object({ input_len: positiveInt, output_len: positiveInt, concurrency: positiveInt, repeat: count }).nullable(),
        finished_runs: count,
        planned_runs: count,
        server: z.object({ exit_code: z.number().int().nullable(), signal: z.string().nullable(), log_tail: z.array(z.string()) }).optional(),
      })
      .optional(),
    source: z.object({ tool: z.string(), files: z.array(z.string()), imported_at: z.string() }).optional(),
    client_headroom: z
      .object({
        input_len: positiveInt,
        output_len: positiveInt,
        concurrency: positiveInt,
        request_rate: z.union([num.positive(), z.literal('inf')]).optional(),
        repeat: count,
        events_per_second: num.positive(),
        event_loop_utilization: num.positive(),
        capacity_events_per_second: num.positive(),
        headroom: num.positive(),
        load_hosts_needed: positiveInt.nullable(),
        load_hosts: positiveInt.optional(),
      })
      .nullable()
      .optional(),
    // One shard's result (run --shard I/N): not comparable until merged.
    shard: z
      .object({
        index: count,
        count: positiveInt,
        index_from: z.string().nullable(),
        start_at: z.string(),
        slot_s: num.positive(),
        host: z.string(),
        boot_id: z.string().nullable(),
        clock: hostClock,
        records: z.string().min(1),
      })
      .optional(),
    // A result merged from shards (servegate merge).
    shards: z
      .object({
        count: positiveInt,
        start_at: z.string(),
        slot_s: num.positive(),
        shards: z.array(z.object({ index: count, host: z.string(), boot_id: z.string().nullable(), clock: hostClock, file: z.string() })).min(1),
      })
      .optional(),
  })
  .superRefine((file, ctx) => {
    // One sweep measures each point once and each repeat of it once: a second copy would be
    // counted twice by every median, n and noise estimate downstream.
    const firstPoint = new Map<string, number>()
    file.points.forEach((p, i) => {
      // An open-loop point is one rate; closed-loop points are one concurrency.
      const key = `${p.input_len}x${p.output_len} ${p.request_rate === undefined ? `at C=${p.concurrency}` : `at rate ${p.request_rate}`}`
      const seen = firstPoint.get(key)
      if (seen === undefined) firstPoint.set(key, i)
      else
        ctx.addIssue({
          code: 'custom',
          path: ['points', i],
          message: `duplicate point ${key} (also points.${seen}); each shape × concurrency (or request rate) appears once`,
        })
      duplicateRepeats(p.runs, ['points', i, 'runs'], ctx)
    })
    const firstShape = new Map<string, number>()
    file.at_target.forEach((s, i) => {
      const key = `${s.input_len}x${s.output_len}`
      const seen = firstShape.get(key)
      if (seen === undefined) firstShape.set(key, i)
      else ctx.addIssue({ code: 'custom', path: ['at_target', i], message: `duplicate shape ${key} (also at_target.${seen}); each shape appears once` })
      duplicateRepeats(s.runs, ['at_target', i, 'runs'], ctx)
    })
  })

function duplicateRepeats(runs: ReadonlyArray<{ repeat: number }>, path: Array<string | number>, ctx: z.RefinementCtx): void {
  const first = new Map<number, number>()
  runs.forEach((r, k) => {
    const seen = first.get(r.repeat)
    if (seen === undefined) first.set(r.repeat, k)
    else
      ctx.addIssue({
        code: 'custom',
        path: [...path, k, 'repeat'],
        message: `duplicate repeat ${r.repeat} (also ${path.at(-1)}.${seen}); each repeat appears once`,
      })
  })
}

// Compile-time guarantee that the schema and types.ts describe the same shape.
type Equals<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false
const schemaMatchesTypes: Equals<z.infer<typeof resultFileSchema>, ResultFile> = true
void schemaMatchesTypes
