/**
 * Types shared by every stage. Internal values are camelCase with units in the
 * name; the result file's shapes (ResultFile and below) are snake_case because
 * they are the public `servegate.result/v1` contract (docs/result-file.md).
 */

export type Api = 'completions' | 'chat'

/** One fixed input/output shape, in tokens. */
export interface Shape {
  inputLen: number
  outputLen: number
}

/** The interactivity target: `percentile` of `metric` must stay at or under `thresholdMs`. */
export interface Target {
  metric: 'tpot' | 'itl'
  percentile: number
  thresholdMs: number
}

// ---------------------------------------------------------------------------
// plan → load
// ---------------------------------------------------------------------------

/** One request ready to send: everything the client needs, nothing it must compute. */
export interface PlannedRequest {
  /** Sent as `x-request-id`; unique within a sweep. */
  id: string
  /** Absolute URL of the endpoint to POST to. */
  url: string
  /** JSON request body, already serialised. */
  body: string
  /** Extra headers (e.g. authorization); never logged. */
  headers: Record<string, string>
  api: Api
  /** Prompt length in tokens as planned. */
  promptTokens: number
  /** `max_tokens` asked for (with ignore_eos, the expected output length). */
  maxTokens: number
}

/** Why a request failed. */
export type ErrorKind =
  | 'http_status' // non-200 answer
  | 'transport' // connection refused/reset, socket error
  | 'stream_error' // an `error` object inside the SSE stream
  | 'malformed' // an SSE data line that is not valid JSON / not the expected shape
  | 'timeout' // no byte for longer than the idle timeout (--timeout-ms)
  | 'no_tokens' // stream ended without any content token
  | 'deadline' // the answer was not complete within the request's total deadline (--request-timeout), however busy the stream
  | 'overrun' // the stream kept going past what was asked: more content chunks than max_tokens + slack, far more text than tokens, or endless events/comments without content

/** What the client measured for one request. Times are client monotonic clock. */
export interface RequestRecord {
  id: string
  /** Send time, ms since the run's epoch (the load runner's start). */
  startMs: number
  /** Time to first non-empty content/reasoning chunk, ms since send; null if none arrived. */
  ttftMs: number | null
  /** Arrival of every content chunk, ms since send (first entry equals ttftMs). */
  chunkArrivalsMs: number[]
  /** Last content chunk, ms since send (E2EL, vLLM's definition); null if none. */
  e2elMs: number | null
  /** End of the stream (last byte), ms since send. */
  streamEndMs: number
  /** Number of SSE chunks that carried non-empty content or reasoning text. */
  contentChunks: number
  /** Server's usage.completion_tokens (null when the server sent no usage). */
  usageCompletionTokens: number | null
  /** Server's usage.prompt_tokens (null when the server sent no usage). */
  usagePromptTokens: number | null
  /** Server's usage.prompt_tokens_details.cached_tokens (absent when the server does not report it). */
  usageCachedTokens?: number
  /** Planned prompt and output lengths (copied for analysis). */
  promptTokens: number
  maxTokens: number
  /** Generated text (content + reasoning), kept for re-tokenisation checks. */
  text: string
  /** Whether the final `[DONE]` sentinel was seen. */
  sawDone: boolean
  /** Number of `finish_reason` values seen and the last one. */
  finishReason: string | null
  error: { kind: ErrorKind; detail: string } | null
  /**
   * Open loop only: when the arrival schedule said to send this request, ms since
   * the run's epoch (startMs − scheduledMs is how late it went out, queueing included).
   */
  scheduledMs?: number
  /**
   * Open loop with a max concurrency only: how long the request waited for a free
   * slot after its scheduled time, ms (0 when a slot was free) — the server's queueing, not the client's lateness.
   */
  queueMs?: number
}

// ---------------------------------------------------------------------------
// load → metrics: one run's raw material
// ---------------------------------------------------------------------------

/** Figures the load runner keeps about the client itself (saturation evidence). */
export interface ClientStats {
  workers: number
  /** Highest event-loop utilisation (0..1) seen by any worker during the run. */
  eventLoopUtilization: number
  /** p99 event-loop delay across workers, ms. */
  eventLoopDelayP99Ms: number
  /** Lag between a slot becoming free and the next request actually being sent, ms. */
  sendLagP50Ms: number
  sendLagP99Ms: number
  /** Time-weighted mean number of requests in flight over the measured window. */
  meanInFlight: number
  /** Token (chunk) events per second the client processed. */
  eventsPerSecond: number
}

/** Everything one measured run produced, before any summarising. */
export interface RawRun {
  concurrency: number
  records: RequestRecord[]
  warmupRequests: number
  /** Measured window: first send to last completion, ms since epoch. */
  startMs: number
  endMs: number
  client: ClientStats
  startedAt: string
  finishedAt: string
  /** Present when the run was open-loop: the arrival process it was asked to follow. */
  openLoop?: OpenLoopSettings
}

/** The schema line of a shard's records file (`<result>.records.jsonl.gz`, store/shard-records.ts). */
export const SHARD_RECORDS_SCHEMA = 'servegate.shard-records/v1'

/** A request's record as a shard keeps it for the merge: the generated text is left out (the checks that read it ran in the shard). */
export type ShardRequestRecord = Omit<RequestRecord, 'text'>

/**
 * One measured run of one shard, as its records file keeps it: one JSON line each, for
 * `servegate merge`, which re-summarises the union of every shard's records (sweep/merge-shards.ts).
 */
export interface ShardRunRecords {
  schema: typeof SHARD_RECORDS_SCHEMA
  input_len: number
  output_len: number
  /** The point's total concurrency C (the shard ran its share). */
  concurrency: number
  repeat: number
  /** The run's place in the schedule (0-based over the whole plan): its slot starts at start_at + slot_index × slot_s. */
  slot_index: number
  /** The plan's seed for the point (the merged run records it); the shard's prompts came from its own, derived from it. */
  point_seed: number
  /** This shard's part: its index, share of C, and the seed its prompts came from. */
  shard: { index: number; concurrency: number; seed: number }
  /** The run's epoch (its records' startMs 0) on this host's wall clock, ms since 1970. */
  epoch_unix_ms: number
  /** How late the run began against its slot, ms (≥ 0). */
  late_ms: number
  /** When every load thread of the shard had finished its warmup (its scrape before the measured window followed), this host's wall clock. */
  warmup_done_unix_ms: number
  raw: Omit<RawRun, 'records'> & { records: ShardRequestRecord[] }
  /** The server's /metrics text at the barrier and after the run (null: not scraped); the merge reads the run's server-side figures from them. */
  metrics_before: string | null
  metrics_after: string | null
  /** The run's output re-counted by a tokenizer (its share); null: not counted. */
  retokenized: number | null
  gpu: GpuSample[] | null
  /** The shard's own validity issues, judged on its share without server-side figures. */
  issues: ValidityIssue[]
}

/** An open-loop point's arrival process (vLLM's --request-rate, --burstiness, --max-concurrency). */
export interface OpenLoopSettings {
  /** Requests per second; Infinity: every request at once. */
  rate: number
  /** Gamma shape of the inter-arrival times (1: Poisson); CV = 1/√burstiness. */
  burstiness: number
  /** Most requests in flight at once; null: no cap. */
  maxConcurrency: number | null
}

// ---------------------------------------------------------------------------
// The result file (servegate.result/v1). snake_case: this is the public contract.
// ---------------------------------------------------------------------------

export const RESULT_SCHEMA = 'servegate.result/v1'

export interface LatencyStats {
  mean: number | null
  p50: number | null
  p95: number | null
  p99: number | null
}

export type ValidityCode =
  | 'client_saturated'
  | 'token_count_mismatch'
  | 'output_len_mismatch'
  | 'input_len_mismatch'
  /** Chat prompts servegate could not size (no /tokenize for chat messages) came out longer than input_len: the harness's gap. */
  | 'prompt_uncalibrated'
  | 'prefix_cache_contaminated'
  | 'ramp_dominated'
  | 'requests_failed'
  | 'too_few_requests'
  | 'gpu_throttled'
  | 'gpu_shared'
  /** The run was imported from another tool's file: the checks it names could not be made (docs/validity.md). */
  | 'checks_not_run'
  /** A merged run whose shards started, warmed up or ended further apart than the alignment bound (docs/validity.md): the harness's gap. */
  | 'shards_unaligned'

export interface ValidityIssue {
  code: ValidityCode
  detail: string
}

export interface Validity {
  valid: boolean
  issues: ValidityIssue[]
}

/** Throughput and latencies over the window in which all C slots were busy. */
export interface SteadyState {
  start_s: number
  end_s: number
  /** Share of the run's duration outside the all-slots-busy window (0..1). */
  ramp_fraction: number
  completed: number
  output_throughput: number
  ttft_ms: LatencyStats
  tpot_ms: LatencyStats
  itl_ms: LatencyStats
}

/** Server-side figures from the engine's Prometheus /metrics, never mixed with client ones. */
export interface ServerSide {
  source: 'prometheus'
  ttft_ms: LatencyStats
  itl_ms: LatencyStats | null
  tpot_ms: LatencyStats | null
  e2el_ms: LatencyStats
  prompt_tokens: number | null
  generation_tokens: number | null
  prefix_cache_queries: number | null
  prefix_cache_hits: number | null
}

export interface TokenCounts {
  /** Output tokens expected (requests × max_tokens with ignore_eos); null when not known (an imported file does not say). */
  expected: number | null
  /** Sum of usage.completion_tokens (null if the server never reported usage). */
  server_usage: number | null
  /** Sum of content chunks counted by the client; null when not known (an imported file without per-request ITLs). */
  client_chunks: number | null
  /** Tokens of the generated text re-tokenised with the server's /tokenize (null if unavailable). */
  retokenized: number | null
  /** Mean tokens per content chunk (>1 means multi-token chunks, e.g. speculative decoding). */
  tokens_per_chunk: number | null
  /**
   * Prompt tokens expected: completed requests × input_len. Null only in results
   * written before servegate recorded it.
   */
  prompt_expected: number | null
  /**
   * Sum of the server's usage.prompt_tokens over completed requests (what it says it
   * prefilled, chat template included); null if the server never reported it.
   */
  prompt_server_usage: number | null
  /**
   * Sum of the server's usage.prompt_tokens_details.cached_tokens (prompt tokens served from its
   * prefix cache) over completed requests; null or absent if the server never reported it.
   */
  prompt_cached_usage?: number | null
}

export interface GpuSample {
  index: number
  name: string
  utilization_pct: number | null
  sm_clock_mhz: number | null
  max_sm_clock_mhz: number | null
  power_w: number | null
  temperature_c: number | null
  throttle_reasons: string[]
  foreign_processes: number | null
}

export interface RunResult {
  repeat: number
  /** null when not known (a run imported from another tool's file). */
  seed: number | null
  /** null when not known (a run imported from another tool's file). */
  warmup_requests: number | null
  num_prompts: number
  completed: number
  failed: number
  duration_s: number
  output_throughput: number
  total_token_throughput: number
  request_throughput: number
  tok_s_per_user: number | null
  ttft_ms: LatencyStats
  tpot_ms: LatencyStats
  itl_ms: LatencyStats
  e2el_ms: LatencyStats
  validity: Validity
  // ---- beyond the minimum contract ----
  started_at: string
  finished_at: string
  /** ITL divided per token when chunks carry several tokens (equals itl_ms otherwise). */
  itl_per_token_ms: LatencyStats
  tokens: TokenCounts
  errors: Record<string, number>
  steady_state: SteadyState | null
  server_side: ServerSide | null
  /** The load generator's self-measurements; null when not known (a run imported from another tool's file). */
  client: {
    workers: number
    event_loop_utilization: number
    event_loop_delay_p99_ms: number
    send_lag_p50_ms: number
    send_lag_p99_ms: number
    mean_in_flight: number
    events_per_second: number
  } | null
  gpu: GpuSample[] | null
  /** Open-loop runs: the arrival process as measured from the actual send times (metrics/arrivals.ts). */
  arrivals?: Arrivals
  /** Open-loop runs: TTFT and E2EL measured from each request's scheduled send time instead of its actual one. */
  from_schedule?: FromSchedule
  /** With --goodput: the completed requests that met every SLO given (metrics/goodput.ts). */
  goodput?: Goodput
  /**
   * Attempts at this run that the host spoiled and servegate measured again with fresh prompts
   * (sweep `host_retries`), oldest first; absent when the first attempt was kept.
   */
  discarded_attempts?: DiscardedAttempt[]
  /** A run merged from the shards of a sharded sweep (`servegate merge`): how C was split and how well the shards aligned. */
  shards?: RunShards
}

/**
 * How a merged run's shards shared its load and lined up (analysis/shard-alignment.ts). Times are
 * on the common clock: each shard's own, corrected by its measured offset to the time server.
 */
export interface RunShards {
  /** Shards of the sweep (N). */
  count: number
  /** Each shard's part of the run; a shard whose share of C was 0 sent nothing and is absent. */
  parts: RunShardPart[]
  alignment: ShardAlignment
}

/** One shard's part of a merged run. */
export interface RunShardPart {
  index: number
  /** Its share of C (C split as evenly as possible, the lower indices taking the remainder). */
  concurrency: number
  /** Its prompts' seed, derived from the point's seed and the shard's index. */
  seed: number
  /** The load host (hostname) it ran on. */
  host: string
  completed: number
  failed: number
  /** The codes of the issues its own run had, judged on its own share (client_saturated makes the merged run invalid). */
  issues: ValidityCode[]
  /** How late it began the run against its slot, ms (≥ 0; a previous run that overran its slot makes it late). */
  late_ms: number
}

/** How far apart the shards of one run started, began measuring and ended, against the bound they must keep. */
export interface ShardAlignment {
  /** Spread of the shards' warmup starts (the slot's start), ms. */
  start_spread_ms: number
  /** Spread of their first measured sends (the end of the slot's warmup window), ms. */
  measure_spread_ms: number
  /** Spread of their last measured completions, ms. */
  end_spread_ms: number
  /** The bound measure_spread_ms must keep: ALIGN_MS plus the clocks' uncertainty. */
  bound_ms: number
  /** The bound start_spread_ms must keep: bound_ms plus a tenth of the slot's warmup window (a warmup that began a little late still ends before the measure instant). */
  start_bound_ms: number
  /** The bound end_spread_ms must keep: bound_ms plus the run's p99 E2EL (closed loop ends within about one request). */
  end_bound_ms: number
  /** What the clocks add: the two largest offset uncertainties of the shards' hosts (0 on one host); null when a host's offset was not measured. */
  clock_uncertainty_ms: number | null
}

/** One attempt at a run that only the host spoiled (client_saturated, gpu_shared, gpu_throttled), discarded and measured again. */
export interface DiscardedAttempt {
  /** The seed of the attempt's prompts (the kept run drew others). */
  seed: number
  started_at: string
  finished_at: string
  /** Why it was discarded: its validity issues, every one of them a host code. */
  issues: ValidityIssue[]
}

/** An open-loop run's arrivals, measured from the send times of its measured requests. */
export interface Arrivals {
  /** Measured requests per second: (sends − 1) / (last send − first send); null with fewer than 2 sends or all in one instant. */
  rate: number | null
  /** The gamma shape asked for (1: Poisson); the measured counterpart is `cv` (expected 1/√burstiness). */
  burstiness: number
  /** Mean gap between consecutive sends, ms; null with fewer than 2 sends. */
  mean_interarrival_ms: number | null
  /** Coefficient of variation (sample standard deviation / mean) of those gaps; null when undefined. */
  cv: number | null
  /** The rate asked for, requests per second, or "inf" (every request at once). */
  requested_rate: number | 'inf'
  /** The cap on requests in flight; null: none. */
  max_concurrency: number | null
  /** How late the client sent each request after it was due (scheduled time, or the moment a capped slot freed), ms. */
  send_lateness_ms: LatencyStats
  /** Time each request waited for a free slot under max_concurrency, ms (all 0 without a cap). */
  queue_ms: LatencyStats
  /** The schedule's own rate over the same requests, requests per second (null as for `rate`): what `rate` is judged against. */
  scheduled_rate: number | null
}

/** Latencies of an open-loop run measured from the scheduled send time (so client lateness and slot queueing count). */
export interface FromSchedule {
  ttft_ms: LatencyStats
  e2el_ms: LatencyStats
}

/** Service-level objectives of --goodput, ms per request; absent keys are not checked. */
export interface GoodputSlo {
  ttft_ms?: number
  tpot_ms?: number
  e2el_ms?: number
}

/** Goodput of one run: completed requests meeting every SLO. */
export interface Goodput {
  /** Good requests / completed requests, 0..1; null when nothing completed. */
  share: number | null
  /** Good requests per second over the run's duration. */
  request_throughput: number
  /** Output tokens of good requests per second over the run's duration. */
  output_throughput: number
  /** The SLOs applied. */
  slo: GoodputSlo
}

export interface PointResult {
  input_len: number
  output_len: number
  /** Closed loop: requests in flight. Open loop: the cap on requests in flight (max concurrency, else the point's request count). */
  concurrency: number
  /** Open-loop points only: the requested arrival rate (requests per second, or "inf"); a sweep over rates labels its points by it. */
  request_rate?: number | 'inf'
  runs: RunResult[]
}

export type AtTargetBound = 'interpolated' | 'lower_bound' | 'unreachable' | 'exact'

export interface AtTargetRun {
  repeat: number
  /** Output tok/s at the target; null when the target is unreachable. */
  throughput: number | null
  /** Concurrency implied (interpolated) or of the last passing point. */
  concurrency: number | null
  bound: AtTargetBound
  /** On a rate curve (open loop): the request rate implied (interpolated) or of the last passing point; null when unreachable or beyond the highest finite rate. */
  request_rate?: number | null
}

export interface AtTargetShape {
  input_len: number
  output_len: number
  runs: AtTargetRun[]
}

export interface ResultTarget {
  metric: 'tpot' | 'itl'
  percentile: number
  threshold_ms: number
}

/**
 * The identity of the machine that served the model. A baseline history holds one such machine:
 * any field both sides know that differs is a host change (gate/host-change.ts).
 */
export interface ServerHost {
  /**
   * `local`: servegate's own host (a server it started, or a base URL on loopback or on this host's
   * name or addresses), so every field below is this host's; `remote`: another machine, whose
   * identity servegate cannot see (every field 'unknown').
   */
  location: 'local' | 'remote'
  hostname: string
  /** The first 16 hex digits of the SHA-256 of /etc/machine-id (never the id itself); 'unknown' without one. */
  machine_id_sha256: string
  /** `linux x64 6.8.0-45-generic`: the kernel release is the last word. */
  platform: string
  cpu_model: string
  cpus: number | 'unknown'
  /** Every GPU's UUID as nvidia-smi lists them (all of the host's, not only the server's); [] when unknown. */
  gpu_uuids: string[]
}

/** The environment a result was measured in. Anything not found is the string 'unknown'. */
export interface EnvRecord {
  engine: { name: string; version: string }
  model: { id: string; revision: string; root: string }
  gpu: { names: string[]; count: number | 'unknown'; driver_version: string; cuda_version: string; clocks: string }
  container_digest: string
  serve_command: string
  harness: { version: string; git_commit: string; node_version: string }
  /** The host servegate ran on, which generated the load (the client); not the serving machine's identity. */
  host: { hostname: string; platform: string; cpus: number | 'unknown' }
  /** A merged sharded sweep: every load host (env.host is shard 0's); absent: env.host alone. */
  load_hosts?: Array<{ hostname: string; platform: string; cpus: number | 'unknown'; shards: number[] }>
  /** The machine that served the model; absent in results written before it was recorded (gate/host-identity.ts derives it). */
  server_host?: ServerHost
  base_url: string
  started_at: string
  finished_at: string
  definitions: Record<string, string>
}

/**
 * What was measured and how (gate/fingerprint.ts): results whose fingerprints differ
 * are not comparable. Tokens per chunk (per point label, to 0.1) is what the server did.
 */
export interface Fingerprint {
  api: string
  model: string
  /** Shape labels `4096x512`, sorted. */
  shapes: string[]
  concurrency: number[]
  prompts_per_concurrency: number | 'unknown'
  warmup: number | 'auto' | 'unknown'
  /** `tpot p95 ≤ 50 ms` */
  target: string
  ignore_eos: boolean
  tokens_per_chunk: Record<string, number | null>
  /** How prompts got their length (config.prompt_calibration): token_ids, tokenize or none; absent in older files. */
  prompt_calibration?: string
  /**
   * How load was offered: `closed` (C requests in flight) or `open rate R burstiness B
   * max_concurrency C num_prompts N`; absent in older files, which were all closed loop.
   */
  load?: string
  /**
   * What every request carried beyond the methodology's body (--header, --extra-body): `none`, or
   * the header names and the extra body as canonical JSON. Absent in older files, which had none.
   */
  request_extras?: string
  /**
   * Whose tokenizer sized chat prompts: the client's own (`NAME sha256:HASH`), else `server`
   * (completions too: exact token ids). Absent in fingerprints stored before it.
   */
  tokenizer?: string
  /**
   * The request deadline, s (config.request_timeout_s): one number, or each shape's derived one.
   * A shorter deadline turns the slowest requests into failures the failure budget may absorb.
   * Absent in fingerprints written before it was recorded (gate/fingerprint.ts refuses those).
   */
  request_timeout?: string
  /** Load threads (config.workers, `auto` or a count): they decide how late the client sends. Absent in older fingerprints. */
  workers?: string
  /** servegate's own version line: major.minor while 0.x, else major (a release that may change what it measures). Absent in older fingerprints. */
  harness?: string
}

export interface ResultFile {
  schema: typeof RESULT_SCHEMA
  harness: { name: 'servegate'; version: string }
  env: EnvRecord
  config: Record<string, unknown>
  target: ResultTarget
  points: PointResult[]
  at_target: AtTargetShape[]
  /** Absent in results written before it was recorded; gate/fingerprint.ts derives it then. */
  fingerprint?: Fingerprint
  /** Present while the sweep that wrote the file was stopped before its plan was done (cleared on resume). */
  interrupted?: Interruption
  /** Present when the figures were measured by another tool and imported (`servegate import`): not a servegate measurement. */
  source?: ResultSource
  /**
   * The load client's headroom at the sweep's heaviest point (analysis/headroom.ts); null when no
   * run recorded its client. Absent in results written before it was recorded: the report derives it.
   */
  client_headroom?: ClientHeadroom | null
  /** Present in the result of one shard of a sharded sweep (`run --shard I/N`): not comparable until merged. */
  shard?: ShardInfo
  /** Present in a result merged from shards (`servegate merge`): the sweep's load hosts and schedule. */
  shards?: ShardsSummary
}

/** A load host's clock against the time server (client/sntp.ts): offset = server − local. */
export interface HostClock {
  /** The time server asked (`--time-server`); null: not measured. */
  server: string | null
  offset_ms: number | null
  uncertainty_ms: number | null
}

/** What one shard's result records of its place in the sharded sweep. */
export interface ShardInfo {
  index: number
  count: number
  /** The environment variable the index was read from (`JOB_COMPLETION_INDEX`); null: given as a number. */
  index_from: string | null
  /** The schedule's origin (`--start-at`), ISO 8601. */
  start_at: string
  /** Each run's slot, s: run k starts at start_at + k × slot_s on the common clock. */
  slot_s: number
  /** The load host: its name and its kernel's boot id (shards with one boot id share one clock). */
  host: string
  boot_id: string | null
  clock: HostClock
  /** The per-request records beside the result, for `servegate merge` (file name, relative to the result). */
  records: string
}

/** A merged result's record of its shards. */
export interface ShardsSummary {
  count: number
  start_at: string
  slot_s: number
  /** Each shard's host and clock, by index. */
  shards: Array<{ index: number; host: string; boot_id: string | null; clock: HostClock; file: string }>
}

/** The client's headroom at the sweep's heaviest point (`client_headroom` in the result file; analysis/headroom.ts). */
export interface ClientHeadroom {
  input_len: number
  output_len: number
  concurrency: number
  /** Open-loop points: the point's request rate. */
  request_rate?: number | 'inf'
  repeat: number
  /** Token events a second the client handled in that run (all its load threads). */
  events_per_second: number
  /** Its busiest load thread's event-loop utilisation (0..1). */
  event_loop_utilization: number
  /** Token events a second this client would handle at the utilisation where client_saturated fires. */
  capacity_events_per_second: number
  /** capacity ÷ events: 2 means the client could have handled twice the traffic. */
  headroom: number
  /** When headroom < 1.5: the load hosts that would bring it back to 1.5; null otherwise. */
  load_hosts_needed: number | null
  /** Load hosts that shared the sweep (a merged sharded sweep); absent: one. */
  load_hosts?: number
}

/** Where an imported result's figures come from. */
export interface ResultSource {
  /** The tool that measured them, e.g. "vllm bench serve". */
  tool: string
  /** The files imported, as given on the command line. */
  files: string[]
  /** ISO time of the import. */
  imported_at: string
}

/** `interrupted.reason` of a sweep cut because the server servegate started exited; the gate calls it broken. */
export const SERVER_EXITED = 'server_exited'

/** How a sweep was stopped early: when, why, and which run was cut off (dropped, never summarised). */
export interface Interruption {
  /** ISO time of the stop. */
  at: string
  /** What stopped it, e.g. "SIGTERM", "SIGINT", "cancelled", or "server_exited" (the server servegate started died). */
  reason: string
  /** The run that was in progress and was dropped; null when the stop fell between runs. */
  cut_run: { input_len: number; output_len: number; concurrency: number; repeat: number } | null
  finished_runs: number
  planned_runs: number
  /** With reason "server_exited": how the server servegate started ended, and its log's last lines (redacted). */
  server?: { exit_code: number | null; signal: string | null; log_tail: string[] }
}
