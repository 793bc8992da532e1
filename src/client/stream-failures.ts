/**
 * How a streaming request that went wrong is put into words for its record:
 * the error kind of a transport failure, the one-line detail of an HTTP error
 * answer (from its first MAX_ERROR_BODY_BYTES), a deadline and an empty stream.
 */
import type { ErrorKind } from '../types.js'
import { MAX_ERROR_BODY_BYTES } from './http.js'
import { MAX_EXCERPT_CHARS, MAX_MESSAGE_CHARS, oneLine } from './one-line.js'
import type { StreamState } from './stream-events.js'

/** The head of an error answer, kept for its message: at most MAX_ERROR_BODY_BYTES, the rest never read. */
export class ErrorBody {
  private readonly chunks: Buffer[] = []
  private length = 0

  /** Keep what fits of `chunk`; false once the cap is reached (read no more). */
  add(chunk: Uint8Array): boolean {
    const take = Math.min(chunk.length, MAX_ERROR_BODY_BYTES - this.length)
    this.chunks.push(Buffer.from(chunk.subarray(0, take)))
    this.length += take
    return this.length < MAX_ERROR_BODY_BYTES
  }

  text(): string {
    return Buffer.concat(this.chunks, this.length).toString('utf8')
  }
}

/** A transport failure's kind: the idle timeout (no byte for too long) or any other transport error. */
export function transportErrorKind(err: Error): ErrorKind {
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

export function noTokensDetail(state: StreamState): string {
  return `stream ended without a content token (${state.events} events${state.sawDone ? ', [DONE] seen' : ''})`
}

export function deadlineDetail(deadlineMs: number, state: StreamState): string {
  return `no complete answer within the ${+(deadlineMs / 1000).toFixed(3)} s request deadline (--request-timeout; ${state.count} content chunks, ${state.events} events so far)`
}
