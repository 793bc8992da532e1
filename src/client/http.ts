/**
 * servegate's one way to ask a server for something that is not a stream:
 * a request with a deadline, a body reader that gives up past a cap, and
 * JSON parsing with errors that name the URL. The endpoint helpers
 * (endpoints.ts, tokenize.ts), the environment record and the readiness
 * probes all go through it.
 */
import { request, type Dispatcher } from 'undici'
import { describeError, UsageError } from '../errors.js'
import { authHeaders } from '../util/auth.js'
import { MAX_EXCERPT_CHARS, oneLine } from './one-line.js'
import { sizeLabel } from './sse-parser.js'

/** Most bytes read from a JSON endpoint by default (/version and the like: a few hundred bytes). */
export const MAX_JSON_BODY_BYTES = 1 << 20
/** Most bytes read from an info endpoint for the environment record (/version, /v1/models): a few KiB in practice. */
const MAX_INFO_BODY_BYTES = 1 << 20

/** Bytes of an error answer read for its message (the rest is not read), streaming or not. */
export const MAX_ERROR_BODY_BYTES = 4096

/** An answer larger than servegate reads from that endpoint (a UsageError naming the URL and the cap). */
class BodyTooLargeError extends UsageError {
  constructor(
    readonly url: string,
    readonly maxBytes: number,
  ) {
    super(
      `${url}: the answer is over ${sizeLabel(maxBytes)}, more than servegate reads from this endpoint; it stopped reading`,
      'Is --base-url the server root of an OpenAI-compatible server (e.g. http://127.0.0.1:8000)?',
    )
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
export function discard(res: Dispatcher.ResponseData): void {
  res.body.on('error', () => {})
  res.body.destroy()
}

export interface SendOptions {
  method?: 'GET' | 'POST'
  headers?: Record<string, string>
  /** Request body, already serialised. */
  body?: string
  /** Give up when the server is silent this long, waiting for the headers or for the next bytes of the body, ms. */
  timeoutMs: number
  /** Give up when the whole exchange, body included, takes longer than this, ms (default: no overall deadline). */
  deadlineMs?: number
  dispatcher?: Dispatcher
}

/**
 * One request, its answer's body left to the caller (read it with readBodyCapped,
 * or discard it). Transport errors are thrown as undici raised them, so a caller
 * can tell a refused connection from a timeout.
 */
export function send(url: string, opts: SendOptions): Promise<Dispatcher.ResponseData> {
  return request(url, {
    method: opts.method ?? 'GET',
    headers: opts.headers ?? {},
    body: opts.body,
    headersTimeout: opts.timeoutMs,
    bodyTimeout: opts.timeoutMs,
    ...(opts.deadlineMs !== undefined ? { signal: AbortSignal.timeout(opts.deadlineMs) } : {}),
    ...(opts.dispatcher ? { dispatcher: opts.dispatcher } : {}),
  })
}

export interface FetchOptions {
  method?: 'GET' | 'POST'
  /** JSON-serialisable body (sent with content-type application/json). */
  body?: unknown
  headers?: Record<string, string>
  /** Give up when the server is silent this long, waiting for the headers or for the next bytes of the body, ms (default 10000). */
  timeoutMs?: number
  /** Give up when the whole exchange, body included, takes longer than this, ms (default: no overall deadline). */
  deadlineMs?: number
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
  return (await fetchJsonWithStatus(url, opts)).value
}

/** fetchJson, and the 2xx status the answer came with. */
async function fetchJsonWithStatus(url: string, opts: FetchOptions): Promise<{ value: unknown; status: number }> {
  const method = opts.method ?? (opts.body === undefined ? 'GET' : 'POST')
  const timeoutMs = opts.timeoutMs ?? 10_000
  const headers: Record<string, string> = { accept: 'application/json', ...opts.headers }
  if (opts.body !== undefined) headers['content-type'] = 'application/json'
  let res: Dispatcher.ResponseData
  try {
    res = await send(url, {
      method,
      headers,
      body: opts.body === undefined ? undefined : JSON.stringify(opts.body),
      timeoutMs,
      ...(opts.deadlineMs !== undefined ? { deadlineMs: opts.deadlineMs } : {}),
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
    return { value: JSON.parse(text) as unknown, status: res.statusCode }
  } catch {
    throw new UsageError(`${method} ${url}: expected JSON, got ${JSON.stringify(text.slice(0, 80))}`)
  }
}

/** GETs `url` and gives its JSON body, or null on any error, non-200 answer, invalid JSON or an answer over the size cap. */
export type FetchJsonFn = (url: string) => Promise<unknown | null>

/**
 * A FetchJsonFn for the server's info endpoints (the environment record): fetchJson with
 * the API key (if any), a deadline on the whole exchange (default 5 s) and a size cap
 * (default MAX_INFO_BODY_BYTES); every failure is null, never a throw.
 */
export function createFetchJson(options: { apiKey?: string | null; timeoutMs?: number; maxBytes?: number } = {}): FetchJsonFn {
  const timeoutMs = options.timeoutMs ?? 5000
  const maxBytes = options.maxBytes ?? MAX_INFO_BODY_BYTES
  return async (url) => {
    try {
      const { value, status } = await fetchJsonWithStatus(url, { headers: authHeaders(options.apiKey), timeoutMs, deadlineMs: timeoutMs, maxBytes })
      return status === 200 ? value : null
    } catch {
      return null
    }
  }
}
