/**
 * Parsing of `servegate run`'s raw flag strings. Each parser returns a value or
 * pushes one specific message (`--concurrency "1,4,x": expected …`) onto an
 * error list, so every bad flag is reported at once.
 */
import type { Api, GoodputSlo, Target } from '../types.js'
import { MAX_HOST_RETRIES, MAX_REQUEST_TIMEOUT_S, TARGET_PERCENTILES } from './defaults.js'

/** The raw flags of `servegate run`, as commander hands them over (camelCase keys). */
export interface RunFlags {
  config?: string
  baseUrl?: string
  model?: string
  api?: string
  inputLen?: string
  outputLen?: string
  concurrency?: string
  promptsPerConcurrency?: string
  warmup?: string
  repeats?: string
  /** Attempts at most to measure again a run the host alone spoiled (0 to MAX_HOST_RETRIES). */
  hostRetries?: string
  target?: string
  seed?: string
  out?: string
  sweep?: string
  resume?: boolean
  workers?: string
  containerDigest?: string
  serveCommand?: string
  timeoutMs?: string
  /** Start the server with this command (`{port}`: a free loopback port). */
  serve?: string
  /** Seconds to wait for a started server to be ready. */
  readyTimeout?: string
  requestTimeout?: string
  /** Open loop: arrival rates, requests/s (`5,10,20`, `inf`). */
  requestRate?: string
  burstiness?: string
  maxConcurrency?: string
  numPrompts?: string
  /** `ttft:MS,tpot:MS,e2el:MS` (any subset). */
  goodput?: string
  /** GPUs serving the model (per-GPU figures); recorded as env.gpu.count. */
  gpus?: string
  /** A baseline file: place the sweep's points around its crossing of the target (placement `bracket`). */
  bracketBaseline?: string
  /** `NAME:VALUE` headers sent with every request (repeatable). */
  header?: string[]
  /** A JSON object whose fields join every generation request's body. */
  extraBody?: string
  /** A Hugging Face tokenizer directory, or a model id in this host's Hugging Face cache (client/local-tokenizer.ts). */
  tokenizer?: string
  /** `I/N`: run shard I of N of a sharded sweep (config/shard.ts); I may name the variable holding it. */
  shard?: string
  /** The sharded sweep's schedule origin, ISO 8601 with its zone. */
  startAt?: string
  /** Each run's slot in a sharded sweep, s. */
  slot?: string
  /** An NTP server (HOST[:PORT]) each shard measures its clock against. */
  timeServer?: string
}

/** Collects problems; `flag` names are written as the user typed them (`--input-len`). */
export type Problems = string[]

const INT = /^\d+$/

function quote(value: string): string {
  return JSON.stringify(value)
}

/** A positive integer flag (≥ 1); undefined when absent. */
export function positiveIntFlag(flag: string, raw: string | undefined, problems: Problems): number | undefined {
  if (raw === undefined) return undefined
  const s = String(raw).trim()
  const n = Number(s)
  if (!INT.test(s) || !Number.isSafeInteger(n) || n < 1) {
    problems.push(`${flag} ${quote(String(raw))}: expected a positive integer`)
    return undefined
  }
  return n
}

/** `--host-retries N`: 0 to MAX_HOST_RETRIES; undefined when absent. */
export function hostRetriesFlag(raw: string | undefined, problems: Problems): number | undefined {
  if (raw === undefined) return undefined
  const s = String(raw).trim()
  const n = Number(s)
  if (!INT.test(s) || n > MAX_HOST_RETRIES) {
    problems.push(`--host-retries ${quote(String(raw))}: expected a count of attempts from 0 to ${MAX_HOST_RETRIES}`)
    return undefined
  }
  return n
}

/** A positive number of seconds (`90`, `0.5`), at most MAX_REQUEST_TIMEOUT_S; undefined when absent. */
export function secondsFlag(flag: string, raw: string | undefined, problems: Problems): number | undefined {
  if (raw === undefined) return undefined
  const s = String(raw).trim()
  const n = Number(s)
  if (!/^\d+(\.\d+)?$/.test(s) || !(n > 0) || n > MAX_REQUEST_TIMEOUT_S) {
    problems.push(`${flag} ${quote(String(raw))}: expected a number of seconds above 0 (at most ${MAX_REQUEST_TIMEOUT_S}), e.g. 600`)
    return undefined
  }
  return n
}

/** A seed: an integer in [0, 2^32). */
export function seedFlag(flag: string, raw: string | undefined, problems: Problems): number | undefined {
  if (raw === undefined) return undefined
  const s = String(raw).trim()
  const n = Number(s)
  if (!INT.test(s) || n > 0xffffffff) {
    problems.push(`${flag} ${quote(String(raw))}: expected an integer from 0 to 4294967295`)
    return undefined
  }
  return n
}

/** `1,4,16` → [1, 4, 16], sorted ascending; duplicates are an error. */
export function concurrencyFlag(raw: string | undefined, problems: Problems): number[] | undefined {
  if (raw === undefined) return undefined
  const parts = String(raw)
    .split(',')
    .map((p) => p.trim())
  const values = parts.map(Number)
  if (parts.some((p) => !INT.test(p)) || values.some((v) => !Number.isSafeInteger(v) || v < 1)) {
    problems.push(`--concurrency ${quote(String(raw))}: expected positive integers separated by commas, e.g. 1,4,16`)
    return undefined
  }
  if (new Set(values).size !== values.length) {
    problems.push(`--concurrency ${quote(String(raw))}: expected each concurrency once (duplicates found)`)
    return undefined
  }
  return [...values].sort((a, b) => a - b)
}

/** `--warmup N` or `--warmup auto`. */
export function warmupFlag(raw: string | undefined, problems: Problems): number | 'auto' | undefined {
  if (raw === undefined) return undefined
  const s = String(raw).trim()
  if (s === 'auto') return 'auto'
  if (!INT.test(s) || !Number.isSafeInteger(Number(s))) {
    problems.push(`--warmup ${quote(String(raw))}: expected a non-negative integer (requests per point) or "auto"`)
    return undefined
  }
  return Number(s)
}

/** `--workers N` or `--workers auto`. */
export function workersFlag(raw: string | undefined, problems: Problems): number | 'auto' | undefined {
  if (raw === undefined) return undefined
  if (String(raw).trim() === 'auto') return 'auto'
  const n = positiveIntFlag('--workers', raw, [])
  if (n === undefined) problems.push(`--workers ${quote(String(raw))}: expected a positive integer or "auto"`)
  return n
}

/** `--api completions|chat`. */
export function apiFlag(raw: string | undefined, problems: Problems): Api | undefined {
  if (raw === undefined) return undefined
  const s = String(raw).trim()
  if (s === 'completions' || s === 'chat') return s
  problems.push(`--api ${quote(String(raw))}: expected "completions" or "chat"`)
  return undefined
}

const TARGET = /^(tpot|itl):p?(\d+(?:\.\d+)?):(\d+(?:\.\d+)?)(?:ms)?$/i

/** `tpot:p95:50` (metric : percentile : threshold in ms); `tpot:95:50` and `itl:p99:30ms` are accepted too. */
export function parseTarget(raw: string): Target | string {
  const m = TARGET.exec(raw.trim())
  const expected = 'expected METRIC:pPERCENTILE:MS with METRIC tpot or itl, e.g. tpot:p95:50'
  if (!m) return expected
  const percentile = Number(m[2])
  const thresholdMs = Number(m[3])
  if (!(TARGET_PERCENTILES as readonly number[]).includes(percentile))
    return 'expected percentile p50, p95 or p99 (the ones every run records), e.g. tpot:p95:50'
  if (!(thresholdMs > 0)) return 'expected a threshold above 0 ms, e.g. tpot:p95:50'
  return { metric: m[1]!.toLowerCase() as Target['metric'], percentile, thresholdMs }
}

/** `--target tpot:p95:50`. */
export function targetFlag(raw: string | undefined, problems: Problems): Target | undefined {
  if (raw === undefined) return undefined
  const t = parseTarget(String(raw))
  if (typeof t === 'string') {
    problems.push(`--target ${quote(String(raw))}: ${t}`)
    return undefined
  }
  return t
}

/** A non-empty string flag (model, out, serve command, …). */
export function textFlag(flag: string, raw: string | undefined, problems: Problems): string | undefined {
  if (raw === undefined) return undefined
  const s = String(raw).trim()
  if (s === '') {
    problems.push(`${flag} "": expected a non-empty value`)
    return undefined
  }
  return s
}

/** `5,10,20` or `inf` (requests/s; inf: every request at once) → ascending rates, Infinity last; duplicates are an error. */
export function requestRateFlag(raw: string | undefined, problems: Problems): number[] | undefined {
  if (raw === undefined) return undefined
  const parts = String(raw)
    .split(',')
    .map((p) => p.trim())
  const values = parts.map((p) => (p.toLowerCase() === 'inf' ? Infinity : /^\d+(\.\d+)?$/.test(p) ? Number(p) : NaN))
  if (values.some((v) => !(v > 0))) {
    problems.push(`--request-rate ${quote(String(raw))}: expected request rates above 0 (requests/s) or inf, separated by commas, e.g. 5,10,20`)
    return undefined
  }
  if (new Set(values).size !== values.length) {
    problems.push(`--request-rate ${quote(String(raw))}: expected each rate once (duplicates found)`)
    return undefined
  }
  return [...values].sort((a, b) => a - b)
}

/** A positive number (`1`, `0.5`); undefined when absent. */
export function positiveNumberFlag(flag: string, raw: string | undefined, problems: Problems, example: string): number | undefined {
  if (raw === undefined) return undefined
  const s = String(raw).trim()
  const n = Number(s)
  if (!/^\d+(\.\d+)?$/.test(s) || !(n > 0) || !Number.isFinite(n)) {
    problems.push(`${flag} ${quote(String(raw))}: expected a number above 0, e.g. ${example}`)
    return undefined
  }
  return n
}

const GOODPUT_KEYS = { ttft: 'ttft_ms', tpot: 'tpot_ms', e2el: 'e2el_ms' } as const

/**
 * `ttft:2000,tpot:50,e2el:10000` (vLLM's --goodput spelling: KEY:MS pairs, any subset, separated
 * by commas or spaces) → the SLOs in ms; a string describing the problem otherwise.
 */
function parseGoodput(raw: string): GoodputSlo | string {
  const expected = 'expected KEY:MS pairs with KEY ttft, tpot or e2el and MS a number above 0, e.g. ttft:2000,tpot:50'
  const parts = raw.split(/[\s,]+/).filter((p) => p !== '')
  if (parts.length === 0) return expected
  const slo: GoodputSlo = {}
  for (const part of parts) {
    const m = /^([a-z0-9]+):(\d+(?:\.\d+)?)(?:ms)?$/i.exec(part)
    if (!m) return `${JSON.stringify(part)}: ${expected}`
    const key = m[1]!.toLowerCase()
    if (!(key in GOODPUT_KEYS)) return `${JSON.stringify(part)}: unknown SLO ${JSON.stringify(key)}; ${expected}`
    const field = GOODPUT_KEYS[key as keyof typeof GOODPUT_KEYS]
    const ms = Number(m[2])
    if (!(ms > 0)) return `${JSON.stringify(part)}: ${expected}`
    if (slo[field] !== undefined) return `${JSON.stringify(part)}: ${key} given twice`
    slo[field] = ms
  }
  return slo
}

/** `--goodput ttft:MS,tpot:MS,e2el:MS`. */
export function goodputFlag(raw: string | undefined, problems: Problems): GoodputSlo | undefined {
  if (raw === undefined) return undefined
  const g = parseGoodput(String(raw))
  if (typeof g === 'string') {
    problems.push(`--goodput ${quote(String(raw))}: ${g}`)
    return undefined
  }
  return g
}
