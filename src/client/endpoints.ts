/**
 * Small non-streaming calls to an OpenAI-compatible server that other stages
 * need (model list, version, Prometheus metrics, tokenizer).
 */
import { request, type Dispatcher } from 'undici'
import { describeError, UsageError } from '../errors.js'
import { authHeaders } from '../util/auth.js'
import { normalizeBaseUrl } from './base-url.js'
import { MAX_EXCERPT_CHARS, oneLine } from './one-line.js'
import { sizeLabel } from './sse-parser.js'

/** Most bytes read from a JSON endpoint by default (/version and the like: a few hundred bytes). */
export const MAX_JSON_BODY_BYTES = 1 << 20
/** Most bytes read from /v1/models: an engine lists one model, but a gateway may list hundreds with descriptions (~1 MB). */
export const MAX_MODELS_BODY_BYTES = 8 << 20
/** Most bytes read from /metrics: vLLM's is ~100 KiB, with per-LoRA or per-engine labels a few MiB. */
export const MAX_METRICS_BODY_BYTES = 8 << 20
/** Most bytes read from /tokenize: it lists every token id (~7 bytes each), so a 128k-token text is ~0.9 MB. */
export const MAX_TOKENIZE_BODY_BYTES = 8 << 20

/** An answer larger than servegate reads from that endpoint (a UsageError naming the URL and the cap). */
export class BodyTooLargeError extends UsageError {
  constructor(
    readonly url: string,
    readonly maxBytes: number,
  ) {
    super(`${url}: the answer is over ${sizeLabel(maxBytes)}, more than servegate reads from this endpoint; it stopped reading`, 'Is --base-url the server root of an OpenAI-compatible server (e.g. http://127.0.0.1:8000)?')
  }
}

/**
 * The body of `res` as text, read as it streams and given up (the connection
 * closed) as soon as it passes `maxBytes`, or at once when content-length
 * says it will: a misconfigured or hostile server cannot fill the memory.
 * With `truncate` (an error answer, only read for its message) it returns the
 * first `maxBytes` instead of throwing.
 */
export async function readBodyCapped(res: Dispatcher.ResponseData, maxBytes: number, url: string, truncate = false): Promise<string> {
  const declared = Number(res.headers['content-length'])
  if (!truncate && Number.isFinite(declared) && declared > maxBytes) {
    discard(res)
    throw new BodyTooLargeError(url, maxBytes)
  }
  const chunks: Buffer[] = []
  let length = 0
  for await (const chunk of res.body as AsyncIterable<Buffer>) {
    if (length + chunk.length > maxBytes) {
      discard(res)
      if (!truncate) throw new BodyTooLargeError(url, maxBytes)
      chunks.push(chunk.subarray(0, maxBytes - length))
      length = maxBytes
      break
    }
    length += chunk.length
    chunks.push(chunk)
  }
  return Buffer.concat(chunks, length).toString('utf8')
}

/** Stop reading an answer and close its connection (the abort is expected: no error event escapes). */
function discard(res: Dispatcher.ResponseData): void {
  res.body.on('error', () => {})
  res.body.destroy()
}

/** Bytes of an error answer read for its message. */
const MAX_ERROR_BODY_BYTES = 4096

export interface FetchOptions {
  method?: 'GET' | 'POST'
  /** JSON-serialisable body (sent with content-type application/json). */
  body?: unknown
  headers?: Record<string, string>
  /** Give up after this long, ms (default 10000). */
  timeoutMs?: number
  /** Refuse an answer larger than this, bytes (default MAX_JSON_BODY_BYTES). */
  maxBytes?: number
  dispatcher?: Dispatcher
}

/**
 * GET or POST `url` and parse the JSON answer. Throws UsageError naming the URL
 * when the server is unreachable, answers non-2xx, answers something not JSON,
 * or answers more than `maxBytes` (BodyTooLargeError).
 */
export async function fetchJson(url: string, opts: FetchOptions = {}): Promise<unknown> {
  const method = opts.method ?? (opts.body === undefined ? 'GET' : 'POST')
  const timeoutMs = opts.timeoutMs ?? 10_000
  const headers: Record<string, string> = { accept: 'application/json', ...opts.headers }
  if (opts.body !== undefined) headers['content-type'] = 'application/json'
  let res: Dispatcher.ResponseData
  try {
    res = await request(url, {
      method,
      headers,
      body: opts.body === undefined ? undefined : JSON.stringify(opts.body),
      headersTimeout: timeoutMs,
      bodyTimeout: timeoutMs,
      ...(opts.dispatcher ? { dispatcher: opts.dispatcher } : {}),
    })
  } catch (err) {
    throw new UsageError(`${method} ${url}: ${describeError(err)}`, 'Is the server running and is --base-url right?')
  }
  const ok = res.statusCode >= 200 && res.statusCode < 300
  const text = await readBodyCapped(res, ok ? (opts.maxBytes ?? MAX_JSON_BODY_BYTES) : MAX_ERROR_BODY_BYTES, `${method} ${url}`, !ok).catch((err: unknown) => {
    if (err instanceof UsageError) throw err
    throw new UsageError(`${method} ${url}: ${describeError(err)}`)
  })
  if (!ok) {
    const excerpt = oneLine(text, MAX_EXCERPT_CHARS)
    throw new HttpStatusError(`${method} ${url}: HTTP ${res.statusCode}${excerpt ? `: ${excerpt}` : ''}`, res.statusCode)
  }
  try {
    return JSON.parse(text) as unknown
  } catch {
    throw new UsageError(`${method} ${url}: expected JSON, got ${JSON.stringify(text.slice(0, 80))}`)
  }
}

/** A non-2xx answer from fetchJson (a UsageError that keeps the status). */
export class HttpStatusError extends UsageError {
  constructor(
    message: string,
    readonly status: number,
  ) {
    super(message, 'Check --base-url (the server root, e.g. http://127.0.0.1:8000) and --model.')
  }
}

/**
 * The Prometheus text of `{root}/metrics`, or null when absent (404).
 * Throws UsageError naming the URL when unreachable or over MAX_METRICS_BODY_BYTES.
 */
export async function fetchMetricsText(baseUrl: string, apiKey: string | null = null, dispatcher?: Dispatcher): Promise<string | null> {
  const url = `${normalizeBaseUrl(baseUrl).root}/metrics`
  let res: Dispatcher.ResponseData
  try {
    res = await request(url, {
      // A server behind a gateway may guard every path, /metrics included.
      headers: authHeaders(apiKey),
      headersTimeout: 10_000,
      bodyTimeout: 10_000,
      ...(dispatcher ? { dispatcher } : {}),
    })
  } catch (err) {
    throw new UsageError(`GET ${url}: ${describeError(err)}`)
  }
  if (res.statusCode !== 200) {
    discard(res)
    return null
  }
  try {
    return await readBodyCapped(res, MAX_METRICS_BODY_BYTES, `GET ${url}`)
  } catch (err) {
    if (err instanceof UsageError) throw err
    throw new UsageError(`GET ${url}: ${describeError(err)}`)
  }
}

/**
 * The Prometheus text of `{root}/metrics`, or null when absent (404),
 * unreachable or too large: server-side figures are optional beside the client's.
 */
export async function scrapeMetrics(baseUrl: string, apiKey: string | null = null, dispatcher?: Dispatcher): Promise<string | null> {
  try {
    return await fetchMetricsText(baseUrl, apiKey, dispatcher)
  } catch {
    return null
  }
}

/** Token count of `text` by the server's own tokenizer (`POST {root}/tokenize`), or null if unavailable. */
export async function tokenizeCount(baseUrl: string, model: string, text: string, apiKey: string | null = null, dispatcher?: Dispatcher): Promise<number | null> {
  const url = `${normalizeBaseUrl(baseUrl).root}/tokenize`
  try {
    // add_special_tokens false: count the generated text only, not a BOS token.
    const j = (await fetchJson(url, {
      body: { model, prompt: text, add_special_tokens: false },
      headers: authHeaders(apiKey),
      maxBytes: MAX_TOKENIZE_BODY_BYTES,
      ...(dispatcher ? { dispatcher } : {}),
    })) as {
      count?: unknown
      tokens?: unknown
    }
    if (typeof j.count === 'number') return j.count
    if (Array.isArray(j.tokens)) return j.tokens.length
    return null
  } catch {
    return null
  }
}

/** Model ids served at `{root}/v1/models`; throws UsageError when the server cannot be asked. */
export async function listModels(baseUrl: string, dispatcher?: Dispatcher): Promise<string[]> {
  const url = `${normalizeBaseUrl(baseUrl).root}/v1/models`
  const j = (await fetchJson(url, { maxBytes: MAX_MODELS_BODY_BYTES, ...(dispatcher ? { dispatcher } : {}) })) as { data?: unknown }
  if (!Array.isArray(j.data)) throw new UsageError(`GET ${url}: expected {"data": [...]} listing models`)
  return j.data.flatMap((m: unknown) => (m !== null && typeof m === 'object' && typeof (m as { id?: unknown }).id === 'string' ? [(m as { id: string }).id] : []))
}

/** The engine version from `{root}/version` (`{"version": "..."}`), or null when absent. */
export async function getVersion(baseUrl: string, dispatcher?: Dispatcher): Promise<string | null> {
  try {
    const j = (await fetchJson(`${normalizeBaseUrl(baseUrl).root}/version`, dispatcher ? { dispatcher } : {})) as { version?: unknown }
    return typeof j.version === 'string' ? j.version : null
  } catch {
    return null
  }
}
