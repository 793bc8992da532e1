/**
 * One `vllm bench serve --save-result` JSON file, read key by key into a
 * typed record (pure: the caller reads the file). vLLM writes latencies in ms
 * under `{mean,median,std}_{ttft,tpot,itl,e2el}_ms` and `p{P}_{metric}_ms`,
 * P as it writes it (`p99_itl_ms`, `p99.9_itl_ms`); per-request arrays (only
 * with `--save-detailed`; `latencies` always) are in seconds. A key of the
 * wrong type is a UsageError naming the file, the key and what was expected.
 */
import { UsageError } from '../errors.js'

export const VLLM_METRICS = ['ttft', 'tpot', 'itl', 'e2el'] as const
export type VllmMetric = (typeof VLLM_METRICS)[number]

/** One latency metric as vLLM summarised it, ms; null where the file has no such key. */
export interface VllmLatency {
  mean: number | null
  median: number | null
  std: number | null
  /** Percentile as vLLM writes it (`95`, `99.9`) → value, ms. */
  percentiles: Map<string, number>
}

/** Per-request arrays (seconds; `errors` is "" for a request that succeeded). */
export interface VllmRequests {
  ttfts: number[]
  itls: number[][]
  latencies: number[]
  inputLens: number[]
  outputLens: number[]
  errors: string[]
}

export interface VllmFile {
  source: string
  /** `YYYYMMDD-HHMMSS` as vLLM writes it, the benchmark host's local time when it saved the file. */
  date: string | null
  backend: string | null
  modelId: string | null
  tokenizerId: string | null
  numPrompts: number | null
  maxConcurrency: number
  /** Requests per second; null for `inf` (closed loop at max_concurrency). */
  requestRate: number | null
  burstiness: number | null
  completed: number
  failed: number | null
  totalInputTokens: number | null
  totalOutputTokens: number | null
  durationS: number
  requestThroughput: number | null
  outputThroughput: number | null
  totalTokenThroughput: number | null
  latency: Record<VllmMetric, VllmLatency>
  /** Null unless the file has ttfts, itls, latencies, input_lens and output_lens for every request. */
  requests: VllmRequests | null
  /** Metadata keys (`--metadata KEY=VALUE`) that may name the shape: isl/osl, random_input_len/random_output_len. */
  meta: Record<string, string | number>
}

type Obj = Record<string, unknown>

const show = (v: unknown): string => {
  const s = JSON.stringify(v)
  return s === undefined ? String(v) : s.length > 40 ? `${s.slice(0, 37)}…` : s
}

/** Parse the JSON of one vLLM result file; every type problem is one UsageError naming `source` and the key. */
export function parseVllmFile(json: unknown, source: string): VllmFile {
  if (typeof json !== 'object' || json === null || Array.isArray(json)) {
    throw new UsageError(`${source} is not a vllm bench serve result: expected a JSON object, got ${Array.isArray(json) ? 'an array' : show(json)}`)
  }
  const o = json as Obj
  if (typeof o['schema'] === 'string') {
    throw new UsageError(`${source} is not a vllm bench serve result: it has "schema": ${show(o['schema'])} (a servegate file?)`)
  }
  const bad = (key: string, expected: string): never => {
    throw new UsageError(`${source}: "${key}" is ${show(o[key])}, expected ${expected}`, 'Is this a file written by `vllm bench serve --save-result`?')
  }
  const has = (key: string): boolean => o[key] !== undefined && o[key] !== null
  const num = (key: string, rule: 'any' | 'nonneg' | 'positive' = 'nonneg'): number | null => {
    if (!has(key)) return null
    const v = o[key]
    const ok = typeof v === 'number' && Number.isFinite(v) && (rule === 'any' || (rule === 'nonneg' ? v >= 0 : v > 0))
    return ok ? (v as number) : bad(key, rule === 'positive' ? 'a number above 0' : 'a finite number ≥ 0')
  }
  const int = (key: string, rule: 'nonneg' | 'positive' = 'nonneg'): number | null => {
    if (!has(key)) return null
    const v = o[key]
    const ok = typeof v === 'number' && Number.isInteger(v) && (rule === 'nonneg' ? v >= 0 : v > 0)
    return ok ? (v as number) : bad(key, rule === 'positive' ? 'a positive integer' : 'a non-negative integer')
  }
  const text = (key: string): string | null => (!has(key) ? null : typeof o[key] === 'string' ? (o[key] as string) : bad(key, 'a string'))
  const required = <T>(key: string, v: T | null, what: string): T => {
    if (v === null) throw new UsageError(`${source} has no "${key}": expected ${what}`, 'Is this a file written by `vllm bench serve --save-result`?')
    return v
  }

  const maxConcurrency = int('max_concurrency', 'positive')
  if (maxConcurrency === null) {
    throw new UsageError(
      `${source}: "max_concurrency" is ${show(o['max_concurrency'])}: servegate measures closed-loop concurrency points, so each file must come from a run with --max-concurrency N`,
      'Rerun vllm bench serve with --max-concurrency N (and --request-rate inf).',
    )
  }
  let requestRate: number | null = null
  const rate = o['request_rate']
  if (rate !== undefined && rate !== null && rate !== 'inf' && rate !== Infinity) {
    requestRate = typeof rate === 'number' && Number.isFinite(rate) && rate > 0 ? rate : bad('request_rate', 'a number above 0 or "inf"')
  }

  const latency = Object.fromEntries(VLLM_METRICS.map((m) => [m, latencyOf(o, m, num)])) as Record<VllmMetric, VllmLatency>
  const meta: Record<string, string | number> = {}
  for (const k of ['isl', 'osl', 'random_input_len', 'random_output_len', 'input_len', 'output_len']) {
    const v = o[k]
    if (typeof v === 'number' || typeof v === 'string') meta[k] = v
  }
  return {
    source,
    date: text('date'),
    backend: text('backend') ?? text('endpoint_type'),
    modelId: text('model_id'),
    tokenizerId: text('tokenizer_id'),
    numPrompts: int('num_prompts'),
    maxConcurrency,
    requestRate,
    burstiness: num('burstiness', 'positive'),
    completed: required('completed', int('completed'), 'the number of requests that completed'),
    failed: int('failed'),
    totalInputTokens: int('total_input_tokens'),
    totalOutputTokens: int('total_output_tokens'),
    durationS: required('duration', num('duration', 'positive'), 'the benchmark duration in seconds'),
    requestThroughput: num('request_throughput'),
    outputThroughput: num('output_throughput'),
    totalTokenThroughput: num('total_token_throughput'),
    latency,
    requests: requestsOf(o, source, bad),
    meta,
  }
}

function latencyOf(o: Obj, m: VllmMetric, num: (key: string, rule?: 'any' | 'nonneg' | 'positive') => number | null): VllmLatency {
  const percentiles = new Map<string, number>()
  const pattern = new RegExp(`^p(\\d+(?:\\.\\d+)?)_${m}_ms$`)
  for (const key of Object.keys(o)) {
    const match = pattern.exec(key)
    const v = match ? num(key) : null
    if (match && v !== null) percentiles.set(match[1]!, v)
  }
  return { mean: num(`mean_${m}_ms`), median: num(`median_${m}_ms`), std: num(`std_${m}_ms`), percentiles }
}

function requestsOf(o: Obj, source: string, bad: (key: string, expected: string) => never): VllmRequests | null {
  const keys = ['ttfts', 'itls', 'latencies', 'input_lens', 'output_lens'] as const
  // `latencies` is written without --save-detailed too; the rest only with it.
  if (keys.some((k) => o[k] === undefined || o[k] === null)) return null
  const list = (key: string, ok: (v: unknown) => boolean, what: string): unknown[] => {
    const v = o[key]
    if (!Array.isArray(v)) return bad(key, `a list of ${what}`)
    const i = v.findIndex((x) => !ok(x))
    if (i >= 0) throw new UsageError(`${source}: "${key}[${i}]" is ${JSON.stringify(v[i])}, expected ${what}`)
    return v
  }
  const seconds = (x: unknown): boolean => typeof x === 'number' && Number.isFinite(x) && x >= 0
  const tokens = (x: unknown): boolean => typeof x === 'number' && Number.isInteger(x) && x >= 0
  const ttfts = list('ttfts', seconds, 'seconds ≥ 0') as number[]
  const itls = list('itls', (x) => Array.isArray(x) && x.every(seconds), 'lists of seconds ≥ 0') as number[][]
  const latencies = list('latencies', seconds, 'seconds ≥ 0') as number[]
  const inputLens = list('input_lens', tokens, 'token counts') as number[]
  const outputLens = list('output_lens', tokens, 'token counts') as number[]
  const errors =
    o['errors'] === undefined || o['errors'] === null
      ? ttfts.map(() => '')
      : (list('errors', (x) => typeof x === 'string' || x === null, 'error strings') as Array<string | null>).map((e) => e ?? '')
  const n = ttfts.length
  for (const [key, arr] of [
    ['itls', itls],
    ['latencies', latencies],
    ['input_lens', inputLens],
    ['output_lens', outputLens],
    ['errors', errors],
  ] as const) {
    if (arr.length !== n) throw new UsageError(`${source}: "${key}" has ${arr.length} entries but "ttfts" has ${n}: expected one per request`)
  }
  return { ttfts, itls, latencies, inputLens, outputLens, errors }
}
