/**
 * One streaming request to an OpenAI-compatible server, measured.
 *
 * It uses undici's raw dispatch handler rather than `request()`: the handler's
 * callbacks run synchronously inside the socket's data event, so each chunk is
 * timestamped as it arrives, before any stream or promise machinery, and the
 * send time is taken as the request is written to its socket.
 *
 * Whatever the server does, a request ends, and holds bounded memory: a
 * total deadline (however busy the stream), an idle timeout (no byte), caps
 * on chunks, text, quiet events and comment lines (an overrun), on one SSE
 * line or event (malformed, found before its line end), and on an error body.
 * A request ended early aborts its socket.
 */
import type { Dispatcher } from 'undici'
import { defaultRequestTimeoutS } from '../config/defaults.js'
import { describeError } from '../errors.js'
import type { ErrorKind, PlannedRequest, RequestRecord } from '../types.js'
import { MAX_EXCERPT_CHARS, MAX_MESSAGE_CHARS, oneLine } from './one-line.js'
import { SseParser } from './sse-parser.js'
import { applyEnd, applyRead, newStreamState, textOf, type StreamState } from './stream-events.js'

export interface ClientDeps {
  dispatcher: Dispatcher
  /** Monotonic clock, ns (process.hrtime.bigint, shared by all threads of the process). */
  now: () => bigint
  /** The run's epoch on the same clock; RequestRecord.startMs counts from it. */
  epochNs: bigint
  /** Fail the request when no byte arrives for this long, ms. */
  idleTimeoutMs: number
  /**
   * Fail the request (`deadline`) when its answer is not complete this long
   * after it was dispatched, ms, however steadily bytes arrive. Absent: the
   * default for the request's shape (defaultRequestTimeoutS).
   */
  deadlineMs?: number
}

/** Keep at most this much of an error response body for the message; the rest is not read. */
export const MAX_ERROR_BODY_BYTES = 4096

const originCache = new Map<string, { origin: string; path: string }>()

function splitUrl(url: string): { origin: string; path: string } {
  let hit = originCache.get(url)
  if (hit === undefined) {
    const u = new URL(url)
    hit = { origin: u.origin, path: `${u.pathname}${u.search}` }
    if (originCache.size > 1000) originCache.clear()
    originCache.set(url, hit)
  }
  return hit
}

/** Send `req`, stream its answer and measure it; never throws (failures are records). */
export function streamRequest(req: PlannedRequest, deps: ClientDeps): Promise<RequestRecord> {
  return new Promise<RequestRecord>((resolve) => {
    const { now, epochNs } = deps
    const dispatchNs = now()
    let sentNs = dispatchNs
    let lastNs = dispatchNs
    let status = 0
    const errorBody: Buffer[] = []
    let errorBodyLen = 0
    let settled = false
    let abort: ((err?: Error) => void) | null = null
    const parser = new SseParser()
    const state: StreamState = newStreamState(req.maxTokens)
    const deadlineMs = deps.deadlineMs ?? defaultRequestTimeoutS(req.promptTokens, req.maxTokens) * 1000

    const finish = (endNs: bigint, error: { kind: ErrorKind; detail: string } | null): void => {
      if (settled) return
      settled = true
      clearTimeout(deadline)
      const err = error ?? state.error ?? (state.count === 0 ? { kind: 'no_tokens' as const, detail: noTokensDetail(state) } : null)
      resolve(toRecord(req, state, sentNs, endNs, epochNs, err))
    }

    /** Record a failure found in the stream and stop reading it. */
    const failNow = (at: bigint): void => {
      finish(at, state.error)
      abort?.(new Error('servegate: stream abandoned after an error'))
    }

    // Armed before dispatch: a request still waiting for a connection counts too.
    // (setTimeout takes at most 2^31 − 1 ms, 24.8 days; more would fire at once.)
    const deadline = setTimeout(() => {
      if (settled) return
      state.error = { kind: 'deadline', detail: deadlineDetail(deadlineMs, state) }
      failNow(now())
    }, Math.min(deadlineMs, 2 ** 31 - 1))

    /** The error answer is complete (or its first MAX_ERROR_BODY_BYTES are): record it. */
    const finishHttpError = (at: bigint): void => {
      finish(at, { kind: 'http_status', detail: httpDetail(status, Buffer.concat(errorBody, errorBodyLen).toString('utf8')) })
    }

    const handler: Dispatcher.DispatchHandler = {
      onConnect(a) {
        // undici calls this as it writes the request to a socket: the "request
        // sent" instant. Dispatch → here is client-side queueing (send lag),
        // kept out of TTFT. (After the write returns would be too late: on
        // loopback the server may already have read the request by then.)
        sentNs = now()
        abort = a
        // The deadline passed while the request waited for its connection.
        if (settled) a(new Error('servegate: request abandoned at its deadline'))
      },
      onHeaders(statusCode, rawHeaders) {
        if (settled) return false
        status = statusCode
        if (status === 200) {
          const type = headerValue(rawHeaders, 'content-type')
          // A JSON answer to a streaming request means `stream: true` was ignored.
          if (type !== null && !type.includes('text/event-stream') && type.includes('json')) {
            state.error = { kind: 'malformed', detail: `expected an SSE stream (text/event-stream), got ${type}` }
            failNow(now())
            return false
          }
        }
        return true
      },
      onData(chunk) {
        // Timestamp at arrival, before parsing: a split TCP segment must not delay TTFT.
        const at = now()
        lastNs = at
        if (settled) return true
        if (status !== 200) {
          const take = Math.min(chunk.length, MAX_ERROR_BODY_BYTES - errorBodyLen)
          errorBody.push(Buffer.from(chunk.subarray(0, take)))
          errorBodyLen += take
          if (errorBodyLen < MAX_ERROR_BODY_BYTES) return true
          // Enough for the message: an endless error body is not read on.
          finishHttpError(at)
          abort?.(new Error('servegate: error body abandoned'))
          return false
        }
        if (applyRead(parser, state, chunk, at, sentNs)) return true
        failNow(at)
        return false
      },
      onComplete() {
        const at = now()
        if (settled) return
        if (status !== 200) {
          finishHttpError(at)
          return
        }
        applyEnd(parser, state, lastNs, sentNs)
        finish(at, null)
      },
      onError(err) {
        finish(now(), { kind: classify(err), detail: oneLine(describeError(err), MAX_MESSAGE_CHARS) })
      },
    }

    try {
      const { origin, path } = splitUrl(req.url)
      deps.dispatcher.dispatch(
        {
          origin,
          path,
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-request-id': req.id, ...req.headers },
          body: req.body,
          headersTimeout: deps.idleTimeoutMs,
          bodyTimeout: deps.idleTimeoutMs,
        },
        handler,
      )
    } catch (err) {
      finish(now(), { kind: 'transport', detail: describeError(err) })
    }
  })
}

/** One header's value from undici's raw [name, value, ...] list; null when absent. */
function headerValue(raw: Buffer[] | string[] | null | undefined, name: string): string | null {
  if (!raw) return null
  for (let i = 0; i + 1 < raw.length; i += 2) {
    if (String(raw[i]).toLowerCase() === name) return String(raw[i + 1]).toLowerCase()
  }
  return null
}

function classify(err: Error): ErrorKind {
  const code = (err as { code?: unknown }).code
  if (code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_BODY_TIMEOUT') return 'timeout'
  return 'transport'
}

/**
 * `HTTP 404: <the server's message>`, one line, from any error body: the
 * message of an OpenAI-, vLLM- or FastAPI-style JSON error, else a short
 * excerpt of the text with HTML tags stripped and whitespace collapsed.
 */
export function httpDetail(status: number, body: string): string {
  let message: string | null = null
  try {
    const j = JSON.parse(body) as Record<string, unknown>
    const e = j.error
    if (e !== null && typeof e === 'object' && typeof (e as { message?: unknown }).message === 'string') {
      message = (e as { message: string }).message
    } else if (typeof e === 'string') message = e
    else if (typeof j.message === 'string') message = j.message
    else if (typeof j.detail === 'string') message = j.detail
    else if (j.detail !== undefined) message = JSON.stringify(j.detail)
  } catch {
    // Not JSON: an excerpt of the text.
  }
  const line = message === null ? oneLine(body, MAX_EXCERPT_CHARS) : oneLine(message, MAX_MESSAGE_CHARS)
  return line.length > 0 ? `HTTP ${status}: ${line}` : `HTTP ${status}`
}

function noTokensDetail(state: StreamState): string {
  return `stream ended without a content token (${state.events} events${state.sawDone ? ', [DONE] seen' : ''})`
}

function deadlineDetail(deadlineMs: number, state: StreamState): string {
  return `no complete answer within the ${+(deadlineMs / 1000).toFixed(3)} s request deadline (--request-timeout; ${state.count} content chunks, ${state.events} events so far)`
}

function toRecord(
  req: PlannedRequest,
  state: StreamState,
  sentNs: bigint,
  endNs: bigint,
  epochNs: bigint,
  error: { kind: ErrorKind; detail: string } | null,
): RequestRecord {
  const n = state.count
  const arrivals = new Array<number>(n)
  for (let i = 0; i < n; i++) arrivals[i] = state.arrivalsMs[i] as number
  return {
    id: req.id,
    startMs: Number(sentNs - epochNs) / 1e6,
    ttftMs: n > 0 ? (arrivals[0] as number) : null,
    chunkArrivalsMs: arrivals,
    e2elMs: n > 0 ? (arrivals[n - 1] as number) : null,
    streamEndMs: Number(endNs - sentNs) / 1e6,
    contentChunks: n,
    usageCompletionTokens: state.usageCompletion,
    usagePromptTokens: state.usagePrompt,
    promptTokens: req.promptTokens,
    maxTokens: req.maxTokens,
    text: textOf(state),
    sawDone: state.sawDone,
    finishReason: state.finishReason,
    error,
  }
}
