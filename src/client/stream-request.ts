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
import { MAX_MESSAGE_CHARS, oneLine } from './one-line.js'
import { SseParser } from './sse-parser.js'
import { dispatchStream, notAStreamDetail } from './stream-dispatch.js'
import { applyEnd, applyRead, newStreamState, type StreamState } from './stream-events.js'
import { deadlineDetail, ErrorBody, httpDetail, noTokensDetail, transportErrorKind } from './stream-failures.js'
import { streamRecord } from './stream-record.js'

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

/** Send `req`, stream its answer and measure it; never throws (failures are records). */
export function streamRequest(req: PlannedRequest, deps: ClientDeps): Promise<RequestRecord> {
  return new Promise<RequestRecord>((resolve) => {
    const { now, epochNs } = deps
    const dispatchNs = now()
    let sentNs = dispatchNs
    let lastNs = dispatchNs
    let status = 0
    const errorBody = new ErrorBody()
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
      resolve(streamRecord(req, state, sentNs, endNs, epochNs, err))
    }

    /** Record a failure found in the stream and stop reading it. */
    const failNow = (at: bigint): void => {
      finish(at, state.error)
      abort?.(new Error('servegate: stream abandoned after an error'))
    }

    // Armed before dispatch: a request still waiting for a connection counts too.
    // (setTimeout takes at most 2^31 − 1 ms, 24.8 days; more would fire at once.)
    const deadline = setTimeout(
      () => {
        if (settled) return
        state.error = { kind: 'deadline', detail: deadlineDetail(deadlineMs, state) }
        failNow(now())
      },
      Math.min(deadlineMs, 2 ** 31 - 1),
    )

    /** The error answer is complete (or its first MAX_ERROR_BODY_BYTES are): record it. */
    const finishHttpError = (at: bigint): void => {
      finish(at, { kind: 'http_status', detail: httpDetail(status, errorBody.text()) })
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
        const notStream = status === 200 ? notAStreamDetail(rawHeaders) : null
        if (notStream === null) return true
        state.error = { kind: 'malformed', detail: notStream }
        failNow(now())
        return false
      },
      onData(chunk) {
        // Timestamp at arrival, before parsing: a split TCP segment must not delay TTFT.
        const at = now()
        lastNs = at
        if (settled) return true
        if (status !== 200) {
          if (errorBody.add(chunk)) return true
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
        finish(now(), { kind: transportErrorKind(err), detail: oneLine(describeError(err), MAX_MESSAGE_CHARS) })
      },
    }

    try {
      dispatchStream(deps.dispatcher, req, deps.idleTimeoutMs, handler)
    } catch (err) {
      finish(now(), { kind: 'transport', detail: describeError(err) })
    }
  })
}
