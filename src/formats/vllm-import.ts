/**
 * `vllm bench serve` result files → one `servegate.result/v1` (pure).
 *
 * - Files at one max_concurrency and one shape (input/output length) are
 *   repeats of one point, numbered 1… in the order of their `date`, then name.
 * - Figures come from the file's own keys (vLLM's numpy percentiles, its
 *   throughputs); per-request arrays, when present, fill what the keys lack
 *   through servegate's own summarizer (metrics/summarize.ts), and give the
 *   token counts, tok/s/user and ITL per token.
 * - What servegate would have measured and the file lacks is null or
 *   'unknown', never 0; each run carries `checks_not_run` naming the checks
 *   the file gives no evidence for, so it is never marked valid
 *   (docs/validity.md, "Imported runs"). The checks it can support
 *   (failed requests, too few requests) are made.
 * - The gate needs p95 ITL and TPOT: a file with neither the keys nor the
 *   arrays to compute them is refused with the flags that write them.
 */
import { atTargetForResult } from '../analysis/at-target.js'
import { checksNotRunIssue, figuresView } from '../analysis/unchecked.js'
import { requestsFailed, tooFewRequests, type RuleContext } from '../analysis/validity-rules.js'
import { DEFAULT_VALIDITY_THRESHOLDS } from '../analysis/validity-thresholds.js'
import { UsageError } from '../errors.js'
import { summarizeRun } from '../metrics/summarize.js'
import { DEFINITIONS } from '../env/definitions.js'
import {
  RESULT_SCHEMA,
  type EnvRecord,
  type LatencyStats,
  type PointResult,
  type RequestRecord,
  type ResultFile,
  type ResultTarget,
  type RunResult,
} from '../types.js'
import { VLLM_METRICS, type VllmFile, type VllmLatency } from './vllm-file.js'

const VLLM_TOOL = 'vllm bench serve'

/** The rerun hint for a file without the percentiles the gate compares. */
const VLLM_PERCENTILE_HINT =
  'rerun vllm bench serve with --percentile-metrics ttft,tpot,itl,e2el --metric-percentiles 50,95,99 (or add --save-detailed to keep the per-request arrays)'

export interface ImportOptions {
  /** Shape override when the files do not say (or say it differently). */
  inputLen?: number
  outputLen?: number
  /** GPUs that served the model (per-GPU figures); null or absent: unknown. */
  gpus?: number | null
  target: ResultTarget
  /** ISO time of the import. */
  importedAt: string
  harnessVersion: string
}

export interface ImportOutcome {
  result: ResultFile
  /** One line each: what was kept out or guessed at. */
  warnings: string[]
}

/** The checks no vLLM result file gives evidence for, with why. */
const NOT_CHECKABLE: Array<[string, string]> = [
  ['client_saturated', 'the file has no load-generator figures'],
  ['token_count_mismatch', 'the file holds one output-token count'],
  ['output_len_mismatch', 'the file does not record ignore_eos or max_tokens'],
  ['input_len_mismatch', 'the file has no server-reported prompt usage'],
  ['prefix_cache_contaminated', 'the file has no server cache counters'],
  ['ramp_dominated', 'the file has no all-slots-busy window'],
  ['gpu_throttled', 'the file has no GPU samples'],
  ['gpu_shared', 'the file has no GPU samples'],
]

/** Import parsed vLLM files (at least one) as one result; throws UsageError for files the gate could not use. */
export function importVllm(files: readonly VllmFile[], opts: ImportOptions): ImportOutcome {
  if (files.length === 0) throw new UsageError('servegate import vllm: no files given')
  const warnings: string[] = []
  for (const f of files) {
    if (f.requestRate !== null) {
      throw new UsageError(
        `${f.source}: "request_rate" is ${f.requestRate} req/s: servegate gates closed-loop concurrency points, so each file must come from a run with --request-rate inf and --max-concurrency N`,
      )
    }
    if (!hasGateP95(f)) {
      throw new UsageError(`${f.source} has no p95_tpot_ms / p95_itl_ms and no per-request ttfts/itls to compute them: ${VLLM_PERCENTILE_HINT}`)
    }
  }
  const groups = new Map<string, { inputLen: number; outputLen: number; concurrency: number; files: VllmFile[] }>()
  for (const f of files) {
    const shape = shapeOf(f, opts, warnings)
    const key = `${shape.inputLen}x${shape.outputLen}@${f.maxConcurrency}`
    const g = groups.get(key) ?? { ...shape, concurrency: f.maxConcurrency, files: [] }
    g.files.push(f)
    groups.set(key, g)
  }
  const dropped = new Set<string>()
  const points: PointResult[] = [...groups.values()]
    .sort((a, b) => a.inputLen - b.inputLen || a.outputLen - b.outputLen || a.concurrency - b.concurrency)
    .map((g) => ({
      input_len: g.inputLen,
      output_len: g.outputLen,
      concurrency: g.concurrency,
      runs: [...g.files].sort((a, b) => (a.date ?? '').localeCompare(b.date ?? '') || a.source.localeCompare(b.source)).map((f, i) => runOf(f, i + 1, dropped)),
    }))
  if (dropped.size > 0) warnings.push(`kept mean, median (p50), p95 and p99 of each latency; servegate records no ${[...dropped].sort().join(', ')} (left out)`)

  const models = unique(files.map((f) => f.modelId))
  const backends = unique(files.map((f) => f.backend))
  if (models.length > 1) warnings.push(`the files name several models (${models.join(', ')}): the result records the first`)
  const shapes = unique(points.map((p) => `${p.input_len}x${p.output_len}`))
  // Repeats planned are known only when every point has the same number of files.
  const repeats = unique(points.map((p) => String(p.runs.length)))
  const prompts = unique(files.map((f) => (f.numPrompts !== null && f.numPrompts % f.maxConcurrency === 0 ? String(f.numPrompts / f.maxConcurrency) : null)))
  const model = models[0] ?? 'unknown'
  const config: Record<string, unknown> = {
    imported_from: VLLM_TOOL,
    server: { base_url: null, model, api: apiOf(backends), ...(opts.gpus ? { gpus: opts.gpus } : {}) },
    model,
    target: { metric: opts.target.metric, percentile: opts.target.percentile, threshold_ms: opts.target.threshold_ms },
    shapes: shapes.map((s) => ({ input_len: Number(s.split('x')[0]), output_len: Number(s.split('x')[1]) })),
    concurrency: unique(points.map((p) => String(p.concurrency)))
      .map(Number)
      .sort((a, b) => a - b),
    // The same prompts per concurrency at every point is the methodology's prompts_per_concurrency; anything else is unknown.
    ...(prompts.length === 1 && files.every((f) => f.numPrompts !== null) ? { prompts_per_concurrency: Number(prompts[0]) } : {}),
    ...(repeats.length === 1 ? { repeats: Number(repeats[0]) } : {}),
    tokenizer: unique(files.map((f) => f.tokenizerId))[0] ?? null,
    backend: backends[0] ?? null,
  }
  const dates = files
    .map((f) => isoOfVllmDate(f.date))
    .filter((d): d is string => d !== null)
    .sort()
  const env: EnvRecord = {
    engine: { name: 'unknown', version: 'unknown' },
    model: { id: model, revision: 'unknown', root: 'unknown' },
    gpu: { names: [], count: opts.gpus ?? 'unknown', driver_version: 'unknown', cuda_version: 'unknown', clocks: 'unknown' },
    container_digest: 'unknown',
    serve_command: 'unknown',
    harness: { version: `${VLLM_TOOL} (imported by servegate ${opts.harnessVersion})`, git_commit: 'unknown', node_version: 'unknown' },
    host: { hostname: 'unknown', platform: 'unknown', cpus: 'unknown' },
    base_url: 'unknown',
    started_at: dates[0] ?? 'unknown',
    finished_at: dates.at(-1) ?? 'unknown',
    definitions: { ...DEFINITIONS, source: `${VLLM_TOOL} --save-result files; latencies are vLLM's numpy percentiles over its client-side timings` },
  }
  const target = opts.target
  const result: ResultFile = {
    schema: RESULT_SCHEMA,
    harness: { name: 'servegate', version: opts.harnessVersion },
    env,
    config,
    target,
    points,
    // Drawn through the unverified runs' figures, as reports and the gate read them.
    at_target: atTargetForResult(figuresView(points), target),
    source: { tool: VLLM_TOOL, files: files.map((f) => f.source), imported_at: opts.importedAt },
  }
  return { result, warnings }
}

function unique(xs: ReadonlyArray<string | null>): string[] {
  return [...new Set(xs.filter((x): x is string => x !== null && x !== ''))]
}

/** vLLM's backend → servegate's api; unknown backends stay unknown. */
function apiOf(backends: readonly string[]): string | null {
  const apis = unique(backends.map((b) => (/chat/.test(b) ? 'chat' : /^(openai|vllm|openai-comp\w*)$/.test(b) ? 'completions' : null)))
  return apis.length === 1 && backends.length === 1 ? apis[0]! : null
}

/** `20250102-030405` → `2025-01-02T03:04:05` (the benchmark host's local time; vLLM writes no zone). */
function isoOfVllmDate(date: string | null): string | null {
  const m = date === null ? null : /^(\d{4})(\d{2})(\d{2})-(\d{2})(\d{2})(\d{2})$/.exec(date)
  return m ? `${m[1]}-${m[2]}-${m[3]}T${m[4]}:${m[5]}:${m[6]}` : null
}

function hasGateP95(f: VllmFile): boolean {
  const keys = f.latency.tpot.percentiles.has('95') && f.latency.itl.percentiles.has('95')
  return keys || f.requests !== null
}

/** The point's shape: flags, else the file's metadata, else its per-request lengths, else its totals per request. */
function shapeOf(f: VllmFile, opts: ImportOptions, warnings: string[]): { inputLen: number; outputLen: number } {
  const from = (override: number | undefined, metaKeys: string[], lens: number[] | undefined, total: number | null, what: 'input' | 'output'): number => {
    if (override !== undefined) return override
    for (const k of metaKeys) {
      const v = Number(f.meta[k])
      if (Number.isInteger(v) && v > 0) return v
    }
    const done = f.requests === null ? [] : (lens ?? []).filter((_, i) => f.requests!.errors[i] === '')
    if (done.length > 0) {
      const lo = Math.min(...done)
      const hi = Math.max(...done)
      if (lo === hi && lo > 0) return lo
      warnings.push(`${f.source}: ${what} lengths vary (${lo}–${hi} tokens); the point is labelled with their mean (give --${what}-len N to label it)`)
    }
    if (total !== null && f.completed > 0 && total > 0) return Math.max(1, Math.round(total / f.completed))
    throw new UsageError(`${f.source}: cannot tell the ${what} length (no ${metaKeys[0]}, no per-request lengths, no completed requests): give --${what}-len N`)
  }
  return {
    inputLen: from(opts.inputLen, ['isl', 'random_input_len', 'input_len'], f.requests?.inputLens, f.totalInputTokens, 'input'),
    outputLen: from(opts.outputLen, ['osl', 'random_output_len', 'output_len'], f.requests?.outputLens, f.totalOutputTokens, 'output'),
  }
}

/** The summarizer's run over the file's per-request arrays (servegate's own percentiles and token counts). */
function summarized(f: VllmFile): RunResult | null {
  const q = f.requests
  if (q === null) return null
  const records: RequestRecord[] = q.ttfts.map((ttftS, i) => {
    const failed = q.errors[i] !== ''
    const arrivals: number[] = []
    let at = ttftS * 1000
    if (!failed) {
      arrivals.push(at)
      for (const gap of q.itls[i]!) arrivals.push((at += gap * 1000))
    }
    return {
      id: String(i),
      startMs: 0,
      ttftMs: failed ? null : ttftS * 1000,
      chunkArrivalsMs: arrivals,
      e2elMs: failed ? null : q.latencies[i]! * 1000,
      streamEndMs: q.latencies[i]! * 1000,
      contentChunks: arrivals.length,
      usageCompletionTokens: failed ? null : q.outputLens[i]!,
      // vLLM's input_lens are the prompts as planned, not the server's usage.
      usagePromptTokens: null,
      promptTokens: q.inputLens[i]!,
      maxTokens: q.outputLens[i]!,
      text: '',
      sawDone: !failed,
      finishReason: null,
      error: failed ? { kind: 'stream_error', detail: q.errors[i]! } : null,
    }
  })
  const client = { workers: 0, eventLoopUtilization: 0, eventLoopDelayP99Ms: 0, sendLagP50Ms: 0, sendLagP99Ms: 0, meanInFlight: 0, eventsPerSecond: 0 }
  return summarizeRun(
    { concurrency: f.maxConcurrency, records, warmupRequests: 0, startMs: 0, endMs: f.durationS * 1000, client, startedAt: 'unknown', finishedAt: 'unknown' },
    { repeat: 0, seed: 0, numPrompts: records.length },
  )
}

const EMPTY: LatencyStats = { mean: null, p50: null, p95: null, p99: null }

/** The file's key where it has one, else the summarizer's figure, else null. */
function stats(l: VllmLatency, computed: LatencyStats | null, completed: number, dropped: Set<string>, metric: string): LatencyStats {
  // vLLM writes 0 for every statistic of an empty list (np.mean(0)): no request, no figure.
  if (completed === 0) return EMPTY
  for (const p of l.percentiles.keys()) if (!['50', '95', '99'].includes(p)) dropped.add(`p${p}_${metric}_ms`)
  if (l.std !== null) dropped.add(`std_${metric}_ms`)
  const pick = (v: number | undefined | null, c: number | null | undefined): number | null => v ?? c ?? null
  return {
    mean: pick(l.mean, computed?.mean),
    p50: pick(l.percentiles.get('50') ?? l.median, computed?.p50),
    p95: pick(l.percentiles.get('95'), computed?.p95),
    p99: pick(l.percentiles.get('99'), computed?.p99),
  }
}

function runOf(f: VllmFile, repeat: number, dropped: Set<string>): RunResult {
  const s = summarized(f)
  const q = f.requests
  const failed = f.failed ?? (q !== null ? q.errors.filter((e) => e !== '').length : f.numPrompts !== null ? Math.max(0, f.numPrompts - f.completed) : 0)
  const outputTokens = f.totalOutputTokens ?? s?.tokens.server_usage ?? null
  const chunks = s?.tokens.client_chunks ?? null
  const lat = (m: (typeof VLLM_METRICS)[number]): LatencyStats => stats(f.latency[m], s ? s[`${m}_ms`] : null, f.completed, dropped, m)
  const failedKinds = q === null ? [] : q.errors.filter((e) => e !== '')
  const run: RunResult = {
    repeat,
    seed: null,
    warmup_requests: null,
    num_prompts: f.numPrompts ?? f.completed + failed,
    completed: f.completed,
    failed,
    duration_s: f.durationS,
    output_throughput: f.outputThroughput ?? s?.output_throughput ?? (outputTokens !== null ? outputTokens / f.durationS : 0),
    total_token_throughput: f.totalTokenThroughput ?? s?.total_token_throughput ?? 0,
    request_throughput: f.requestThroughput ?? f.completed / f.durationS,
    tok_s_per_user: s?.tok_s_per_user ?? null,
    ttft_ms: lat('ttft'),
    tpot_ms: lat('tpot'),
    itl_ms: lat('itl'),
    e2el_ms: lat('e2el'),
    validity: { valid: false, issues: [] },
    started_at: 'unknown',
    finished_at: isoOfVllmDate(f.date) ?? 'unknown',
    itl_per_token_ms: s?.itl_per_token_ms ?? EMPTY,
    tokens: {
      expected: null,
      server_usage: outputTokens,
      client_chunks: chunks,
      retokenized: null,
      tokens_per_chunk: outputTokens !== null && chunks !== null && chunks > 0 ? outputTokens / chunks : null,
      prompt_expected: f.totalInputTokens ?? (q === null ? null : q.inputLens.filter((_, i) => q.errors[i] === '').reduce((a, b) => a + b, 0)),
      prompt_server_usage: null,
    },
    errors: failed > 0 ? { [failedKinds.length > 0 ? 'reported by vllm bench serve' : 'unknown']: failed } : {},
    steady_state: null,
    server_side: null,
    client: null,
    gpu: null,
  }
  if (f.totalTokenThroughput === null && s === null) run.total_token_throughput = ((f.totalInputTokens ?? 0) + (outputTokens ?? 0)) / f.durationS
  run.validity = validityOf(run, f)
  return run
}

/** The checks a vLLM file supports are made; the others are named in one checks_not_run issue. */
function validityOf(run: RunResult, f: VllmFile): RunResult['validity'] {
  const ctx: RuleContext = { concurrency: f.maxConcurrency, ignoreEos: false, expectPrefixCacheMisses: false }
  const found = [requestsFailed(run, ctx, DEFAULT_VALIDITY_THRESHOLDS), tooFewRequests(run, ctx, DEFAULT_VALIDITY_THRESHOLDS)].filter((i) => i !== null)
  const notRun = [...NOT_CHECKABLE]
  if (run.tokens.client_chunks === null) notRun.push(['too_few_requests (inter-token gaps)', 'the file has no per-request ITLs'])
  const why = [...new Set(notRun.map(([, w]) => w))].join('; ')
  return {
    valid: false,
    issues: [
      ...found,
      checksNotRunIssue(
        VLLM_TOOL,
        notRun.map(([c]) => c),
        why,
      ),
    ],
  }
}
