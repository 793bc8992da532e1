/**
 * The config file's shape (YAML or JSON, snake_case keys; every key and its
 * type: docs/config.md). Every object is strict: an unknown key is an error, because a
 * misspelt `prompts_per_concurency` silently ignored would change the benchmark.
 */
import { z } from 'zod'
import { MAX_HOST_RETRIES, MAX_REQUEST_TIMEOUT_S, METRIC_KIND_KEYS, TARGET_PERCENTILES, type MetricKindKey } from './defaults.js'
import { refusedEnvPrefix } from './child-env.js'

const positiveInt = (what: string) =>
  z
    .number({ error: `expected ${what} (a positive integer)` })
    .int({ error: `expected ${what} (a positive integer)` })
    .positive({ error: `expected ${what} (a positive integer)` })

const nonNegativeInt = (what: string) =>
  z
    .number({ error: `expected ${what} (a non-negative integer)` })
    .int({ error: `expected ${what} (a non-negative integer)` })
    .nonnegative({ error: `expected ${what} (a non-negative integer)` })

/** One fixed shape: prompt and output length in tokens. */
const shapeSchema = z.strictObject({
  input_len: positiveInt('a prompt length in tokens'),
  output_len: positiveInt('an output length in tokens'),
})

const HOST_RETRIES_RULE = `expected a count of attempts from 0 to ${MAX_HOST_RETRIES}`

const RATE_RULE = 'expected a list of request rates above 0 (requests/s) or "inf", e.g. [5, 10, 20]'

/**
 * A named sweep: the grid of shapes × concurrencies (closed loop) or shapes ×
 * request rates (open loop: `request_rates`, with `burstiness`, `max_concurrency`
 * and `num_prompts`), each point repeated.
 */
const sweepSchema = z
  .strictObject({
    shapes: z.array(shapeSchema, { error: 'expected a list of {input_len, output_len}' }).min(1, { error: 'expected at least one shape' }),
    concurrency: z
      .array(positiveInt('a concurrency'), { error: 'expected a list of positive integers, e.g. [1, 4, 16]' })
      .min(1, { error: 'expected at least one concurrency' })
      .refine((cs) => new Set(cs).size === cs.length, { error: 'expected each concurrency once (duplicates found)' })
      .optional(),
    request_rates: z
      .array(z.union([z.number().positive(), z.literal('inf')], { error: RATE_RULE }), { error: RATE_RULE })
      .min(1, { error: 'expected at least one request rate' })
      .refine((rs) => new Set(rs).size === rs.length, { error: 'expected each request rate once (duplicates found)' })
      .optional(),
    burstiness: z
      .number({ error: 'expected a number above 0 (1: Poisson arrivals)' })
      .positive({ error: 'expected a number above 0 (1: Poisson arrivals)' })
      .optional(),
    max_concurrency: positiveInt('a cap on requests in flight').optional(),
    num_prompts: positiveInt('a request count per point').optional(),
    prompts_per_concurrency: positiveInt('prompts per concurrency').optional(),
    warmup: z.union([nonNegativeInt('a warmup request count'), z.literal('auto')], { error: 'expected a non-negative integer or "auto"' }).optional(),
    repeats: positiveInt('a repeat count').optional(),
    /**
     * How many times a run the host alone spoiled (client_saturated, gpu_shared, gpu_throttled)
     * is measured again at once, with fresh prompts; each discarded attempt is recorded in the run.
     * Default 0: such a run stays invalid.
     */
    host_retries: z
      .number({ error: HOST_RETRIES_RULE })
      .int({ error: HOST_RETRIES_RULE })
      .min(0, { error: HOST_RETRIES_RULE })
      .max(MAX_HOST_RETRIES, { error: HOST_RETRIES_RULE })
      .optional(),
    /**
     * Where a PR sweep places its points: `fixed` (default) runs every concurrency of the list;
     * `bracket` runs only the two concurrencies of the list around the baseline's crossing of the
     * target, per shape, plus `itl_concurrency` (src/gate/bracket.ts). Closed loop only.
     */
    placement: z
      .enum(['fixed', 'bracket'], {
        error: 'expected "fixed" (every concurrency of the list) or "bracket" (the two around the baseline\'s crossing of the target)',
      })
      .optional(),
    /** With `placement: bracket`: concurrencies whose p95 ITL the gate keeps; default: the lowest of the list. */
    itl_concurrency: z
      .array(positiveInt('a concurrency'), { error: 'expected a list of concurrencies of this sweep, e.g. [1, 64]' })
      .refine((cs) => new Set(cs).size === cs.length, { error: 'expected each concurrency once (duplicates found)' })
      .optional(),
  })
  .superRefine((s, ctx) => {
    const outside = (s.itl_concurrency ?? []).filter((c) => !(s.concurrency ?? []).includes(c))
    if (outside.length > 0) {
      ctx.addIssue({
        code: 'custom',
        path: ['itl_concurrency'],
        message: `expected concurrencies of this sweep's list (${(s.concurrency ?? []).join(', ')}); not in it: ${outside.join(', ')}`,
      })
    }
    if (s.placement === 'bracket' && s.request_rates !== undefined) {
      ctx.addIssue({ code: 'custom', path: ['placement'], message: 'expected "fixed" with request_rates: bracketing places concurrencies (closed loop) only' })
    }
    if (s.concurrency === undefined && s.request_rates === undefined) {
      ctx.addIssue({ code: 'custom', path: ['concurrency'], message: 'expected a list of concurrencies (closed loop), or request_rates (open loop)' })
    }
    if (s.concurrency !== undefined && s.request_rates !== undefined) {
      ctx.addIssue({ code: 'custom', path: ['request_rates'], message: 'expected either concurrency (closed loop) or request_rates (open loop), not both' })
    }
  })

const toleranceSchema = z.number({ error: 'expected a percentage (a number ≥ 0)' }).nonnegative({ error: 'expected a percentage (a number ≥ 0)' })

const DESIGN_RULE = 'expected the change (%) rows of this kind are designed to catch, a number above 0, e.g. 10'
const designPct = z.number({ error: DESIGN_RULE }).positive({ error: DESIGN_RULE })

/** `gate.design_pct`: per metric kind, the change (%) its rows must catch with 90 % power (the sequential test's δ). */
const designPctSchema = z.strictObject(
  Object.fromEntries(METRIC_KIND_KEYS.map((k) => [k, designPct.optional()])) as Record<MetricKindKey, z.ZodOptional<typeof designPct>>,
  { error: 'expected a map of metric kinds to percentages, e.g. {itl_p95: 10, tput_at_target: 15}' },
)

const GPU_MINUTES_RULE = 'expected GPU-minutes a pull request may spend, a number above 0, e.g. 120'

/**
 * Gate tolerances, passed through to the gate stage. Each `tolerance_pct` is
 * the smallest relative change (in percent) that may count as a regression.
 */
const gateSchema = z.strictObject({
  tolerance_pct: z
    .strictObject({
      itl: toleranceSchema.optional(),
      tpot: toleranceSchema.optional(),
      ttft: toleranceSchema.optional(),
      throughput: toleranceSchema.optional(),
    })
    .optional(),
  max_failed_requests: nonNegativeInt('a request count').optional(),
  /**
   * Largest minimum detectable change (%) an undecided gated row may have before the undecided
   * verdict fails the check (default 15; 0 fails every undecided verdict).
   */
  max_mdc_pct: toleranceSchema.optional(),
  /**
   * The change (%) each metric kind's rows are designed to catch (default: p95 ITL 10, throughput
   * at target 15); none may exceed `max_mdc_pct` when that is set (config/resolve.ts).
   */
  design_pct: designPctSchema.optional(),
  /** GPU-minutes a pull request's gate may spend; the job that reaches it ends undecided. Absent: no cap. */
  max_gpu_minutes: z.number({ error: GPU_MINUTES_RULE }).positive({ error: GPU_MINUTES_RULE }).optional(),
  /** Gate goodput (requests/s meeting every `goodput:` SLO) beside p95 ITL and throughput at target; needs `goodput:`. */
  goodput: z.boolean({ error: 'expected true or false' }).optional(),
  /**
   * A serve command for the reference (base) engine: the Action's gate mode starts it beside the
   * candidate and decides A/B on this host instead of trusting a baseline measured elsewhere.
   */
  reference_command: z
    .string({ error: 'expected a shell command line that starts the reference engine, e.g. "vllm serve MODEL --port {port}"' })
    .min(1, { error: 'expected a shell command line that starts the reference engine, e.g. "vllm serve MODEL --port {port}"' })
    .optional(),
  /**
   * How the Action's gate uses `reference_command`: `ladder` (default) measures the reference beside
   * the candidate only when the stored baseline cannot decide (the ladder's last step); `always`
   * measures it for every pull request.
   */
  reference_mode: z
    .enum(['ladder', 'always'], { error: 'expected "ladder" (measure the reference only when the baseline cannot decide) or "always"' })
    .optional(),
  /**
   * The Action's judgement, set where a pull request cannot edit it (the base branch's config):
   * the verdicts that fail the step (as the `fail-on` input spells them), and whether an undecided
   * verdict runs the extra repeats (`confirm`). Either wins over the input (github/base-terms.ts).
   */
  fail_on: z
    .union([z.string(), z.array(z.string())], { error: 'expected verdicts, e.g. "regression,broken,incomplete,not_comparable" or a list of them' })
    .optional(),
  confirm: z.boolean({ error: 'expected true or false' }).optional(),
})

const ENV_RULE = 'expected a list of environment variable NAMES to pass to the engine, e.g. [HF_TOKEN, VLLM_API_KEY]'

const serverSchema = z.strictObject({
  base_url: z.string({ error: 'expected a URL such as http://127.0.0.1:8000' }).min(1, { error: 'expected a URL such as http://127.0.0.1:8000' }).optional(),
  model: z.string({ error: 'expected a model id' }).min(1, { error: 'expected a model id' }).optional(),
  api: z.enum(['completions', 'chat'], { error: 'expected "completions" or "chat"' }).optional(),
  // The runner's own variables are refused: their value would be sent to the server as its key.
  api_key_env: z
    .string({ error: 'expected the NAME of an environment variable holding the key' })
    .regex(/^[A-Za-z_][A-Za-z0-9_]*$/, { error: 'expected the NAME of an environment variable holding the key (letters, digits, _)' })
    .refine((n) => refusedEnvPrefix(n) === null, {
      error: (iss) =>
        `expected a variable that holds the server's API key; ${String(iss.input)} is the runner's (${refusedEnvPrefix(String(iss.input))}* values are never sent to a server)`,
    })
    .optional(),
  // servegate starts the server: `{port}` is replaced by a free loopback port (see src/serve/).
  command: z
    .string({ error: 'expected a shell command line, e.g. "vllm serve MODEL --port {port}"' })
    .min(1, { error: 'expected a shell command line, e.g. "vllm serve MODEL --port {port}"' })
    .optional(),
  ready_timeout: z.number({ error: 'expected seconds (a positive number)' }).positive({ error: 'expected seconds (a positive number)' }).optional(),
  stop_timeout: z.number({ error: 'expected seconds (a number ≥ 0)' }).nonnegative({ error: 'expected seconds (a number ≥ 0)' }).optional(),
  stop_command: z
    .string({ error: 'expected a shell command line, e.g. "docker stop bench"' })
    .min(1, { error: 'expected a shell command line, e.g. "docker stop bench"' })
    .optional(),
  /**
   * `auto` (the default): the commands servegate starts run in a PID namespace of their own, where no
   * process holding a token is visible (serve/isolation.ts); `none`: without one. The Action takes it
   * from the base branch's config only.
   */
  isolation: z.enum(['auto', 'none'], { error: 'expected "auto" (a PID namespace of their own where the host allows it) or "none"' }).optional(),
  /** Headers sent with every request (a routing header, a tenant); values are secrets (config/request-extras.ts). */
  headers: z.record(z.string(), z.string({ error: 'expected a header value (a string)' }), { error: 'expected a map of header NAME: VALUE' }).optional(),
  /** A tokenizer of the client's own: a Hugging Face tokenizer directory, or a model id in the Hugging Face cache. */
  tokenizer: z.string({ error: 'expected a tokenizer directory or a Hugging Face model id, e.g. Qwen/Qwen3-8B' }).min(1).optional(),
  /** Fields added to every generation request's body; the methodology's own fields are refused. */
  extra_body: z.record(z.string(), z.unknown(), { error: 'expected a map of body fields, e.g. {chat_template_kwargs: {enable_thinking: false}}' }).optional(),
  /** Total deadline of one request, s (`--request-timeout`); absent: derived from each shape. */
  request_timeout: z
    .number({ error: 'expected a number of seconds above 0, e.g. 600' })
    .positive({ error: 'expected a number of seconds above 0, e.g. 600' })
    .max(MAX_REQUEST_TIMEOUT_S, { error: `expected at most ${MAX_REQUEST_TIMEOUT_S} seconds (7 days)` })
    .optional(),
  /** GPUs serving the model (`--gpus`): the per-GPU figures divide by it; recorded as env.gpu.count. */
  gpus: positiveInt('a GPU count').optional(),
  /**
   * Names of environment variables passed to the commands servegate starts, beside the
   * allow-list of config/child-env.ts: the only way an engine secret (HF_TOKEN) reaches the engine.
   * The runner's own variables are refused: a serve command must never see the job's tokens.
   */
  env: z
    .array(
      z
        .string({ error: ENV_RULE })
        .regex(/^[A-Za-z_][A-Za-z0-9_]*$/, { error: ENV_RULE })
        .refine((n) => refusedEnvPrefix(n) === null, {
          error: (iss) =>
            `expected a variable the engine needs; ${String(iss.input)} is the runner's (${refusedEnvPrefix(String(iss.input))}* names are never passed to a serve command)`,
        }),
      { error: ENV_RULE },
    )
    .optional(),
})

const sloMs = (what: string) =>
  z.number({ error: `expected ${what} in ms (a number above 0)` }).positive({ error: `expected ${what} in ms (a number above 0)` })

/** `goodput:` SLOs in ms (vLLM's --goodput keys): a good request meets every one given. */
const goodputSchema = z
  .strictObject(
    { ttft: sloMs('a TTFT bound').optional(), tpot: sloMs('a TPOT bound').optional(), e2el: sloMs('an E2EL bound').optional() },
    { error: 'expected a map of ttft, tpot, e2el to ms, e.g. {ttft: 2000, tpot: 50}' },
  )
  .refine((g) => Object.keys(g).length > 0, { error: 'expected at least one of ttft, tpot, e2el' })

const targetSchema = z.strictObject({
  metric: z.enum(['tpot', 'itl'], { error: 'expected "tpot" or "itl"' }).optional(),
  percentile: z
    .number({ error: 'expected 50, 95 or 99 (the percentiles every run records)' })
    .refine((p) => (TARGET_PERCENTILES as readonly number[]).includes(p), { error: 'expected 50, 95 or 99 (the percentiles every run records)' })
    .optional(),
  threshold_ms: z
    .number({ error: 'expected a latency in ms (a positive number)' })
    .positive({ error: 'expected a latency in ms (a positive number)' })
    .optional(),
})

/**
 * `shard:` — this process runs one shard of a sharded sweep (`--shard I/N`, `--start-at`, `--slot`,
 * `--time-server`; the flags win). The index may name the variable the launcher sets.
 */
const shardSchema = z.strictObject({
  index: z
    .union([nonNegativeInt('a shard index'), z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/)], {
      error: 'expected a shard index from 0, or the NAME of the variable holding it (JOB_COMPLETION_INDEX, SLURM_PROCID)',
    })
    .optional(),
  count: positiveInt('a number of shards'),
  start_at: z.string({ error: 'expected an ISO 8601 time with its zone, e.g. 2026-12-07T10:00:00Z' }).optional(),
  slot_s: z.number({ error: 'expected seconds (a positive number)' }).positive({ error: 'expected seconds (a positive number)' }).optional(),
  time_server: z.string({ error: 'expected an NTP server, HOST or HOST:PORT' }).min(1, { error: 'expected an NTP server, HOST or HOST:PORT' }).optional(),
})

const SWEEP_NAME = /^[A-Za-z0-9_.-]+$/
const SWEEP_NAME_RULE = 'expected a sweep name of letters, digits, "_", "-" or "."'

/** The whole config file. */
export const configFileSchema = z.strictObject({
  server: serverSchema.optional(),
  target: targetSchema.optional(),
  seed: nonNegativeInt('a seed').max(0xffffffff, { error: 'expected a seed below 2^32' }).optional(),
  sweeps: z
    .record(z.string().regex(SWEEP_NAME, { error: SWEEP_NAME_RULE }), sweepSchema, {
      // This option would also word a bad key's issue: keep the name rule for those.
      error: (iss) => (iss.code === 'invalid_key' ? SWEEP_NAME_RULE : 'expected a map of sweep names to sweeps'),
    })
    .refine((s) => Object.keys(s).length > 0, { error: 'expected at least one named sweep' })
    .optional(),
  gate: gateSchema.optional(),
  goodput: goodputSchema.optional(),
  shard: shardSchema.optional(),
})

export type ConfigFile = z.infer<typeof configFileSchema>
export type SweepConfig = z.infer<typeof sweepSchema>
