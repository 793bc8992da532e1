/**
 * What one SSE event of an OpenAI-compatible stream means for the request's
 * measurement: content tokens (completions `choices[0].text`, chat
 * `choices[0].delta.content` / `reasoning_content` / `reasoning`), usage,
 * finish_reason, `[DONE]`, and errors. Pure apart from the state it fills.
 */
import type { ErrorKind } from '../types.js'
import { MAX_EXCERPT_CHARS, MAX_MESSAGE_CHARS, oneLine } from './one-line.js'
import type { SseParser } from './sse-parser.js'

/** Mutable per-request state, preallocated so a token adds no garbage but its text. */
export interface StreamState {
  /** Arrival of each content chunk, ms since send; room for exactly maxChunks. */
  arrivalsMs: Float64Array
  count: number
  /** Most content chunks accepted: max_tokens + CHUNK_SLACK; one more is an overrun. */
  maxChunks: number
  /** Every data event seen (including usage-only, role-only and [DONE]). */
  events: number
  /** Data events since the last content chunk (role-only, usage-only, empty text, [DONE]). */
  quietEvents: number
  /**
   * Generated text as UTF-8 bytes (off the JS heap): kept as strings, every
   * token's piece would live until the request ends and be copied by each
   * young-generation GC on the way, and those pauses stall every stream.
   */
  textBytes: Uint8Array
  textLen: number
  /** Most text bytes accepted (maxChunks × MAX_TEXT_BYTES_PER_CHUNK); more is an overrun. */
  maxTextBytes: number
  usageCompletion: number | null
  usagePrompt: number | null
  /** usage.prompt_tokens_details.cached_tokens, where the server reports it. */
  usageCached: number | null
  finishReason: string | null
  sawDone: boolean
  error: { kind: ErrorKind; detail: string } | null
}

/**
 * Content chunks tolerated beyond max_tokens. An honest server sends at most
 * one content chunk per token (fewer with multi-token chunks), and with
 * `ignore_eos` exactly max_tokens tokens; the slack only absorbs a server that
 * splits a character's bytes over two chunks now and then. A server that keeps
 * streaming past it ignores max_tokens, and its request never ends by itself.
 */
const CHUNK_SLACK = 16
/**
 * Text bytes tolerated per accepted chunk. Real tokens decode to ~4 bytes of
 * text on average, and the longest tokens of common vocabularies (runs of
 * spaces or punctuation) to well under 64; a stream averaging more than that
 * is not sending tokens. Bounds the text kept for re-tokenisation.
 */
const MAX_TEXT_BYTES_PER_CHUNK = 64
/**
 * Data events in a row without content (role-only, usage-only, empty text,
 * [DONE] repeated) before the stream counts as an overrun: a real stream has a
 * handful (a role chunk, a usage chunk, [DONE]), never hundreds.
 */
const MAX_QUIET_EVENTS = 1000

/** Fresh state for a request that asked for `maxTokens` tokens. */
export function newStreamState(maxTokens: number): StreamState {
  const maxChunks = Math.max(1, Math.min(Number.isFinite(maxTokens) ? Math.floor(maxTokens) : 0, 1 << 20)) + CHUNK_SLACK
  const maxTextBytes = maxChunks * MAX_TEXT_BYTES_PER_CHUNK
  return {
    arrivalsMs: new Float64Array(maxChunks),
    count: 0,
    maxChunks,
    events: 0,
    quietEvents: 0,
    // Grown on demand up to maxTextBytes: most text is ~4 bytes a token.
    textBytes: new Uint8Array(Math.min(maxChunks * 8, maxTextBytes)),
    textLen: 0,
    maxTextBytes,
    usageCompletion: null,
    usagePrompt: null,
    usageCached: null,
    finishReason: null,
    sawDone: false,
    error: null,
  }
}

/**
 * Apply one event's data, received at `atNs` for a request sent at `sentNs`
 * (monotonic ns). Returns false when the event is an error, malformed or an
 * overrun (`state.error` then says why) and the stream should be abandoned.
 */
function applyEvent(state: StreamState, data: string, atNs: bigint, sentNs: bigint): boolean {
  state.events++
  if (data === '[DONE]') {
    state.sawDone = true
    return quiet(state)
  }
  let obj: unknown
  try {
    obj = JSON.parse(data)
  } catch {
    state.error = { kind: 'malformed', detail: `SSE data is not JSON: ${clip(data)}` }
    return false
  }
  if (obj === null || typeof obj !== 'object' || Array.isArray(obj)) {
    state.error = { kind: 'malformed', detail: `SSE data is not a JSON object: ${clip(data)}` }
    return false
  }
  const o = obj as Record<string, unknown>
  if (o.error !== undefined && o.error !== null) {
    state.error = { kind: 'stream_error', detail: `error in stream: ${errorMessage(o.error)}` }
    return false
  }
  const choices = o.choices
  if (choices !== undefined && !Array.isArray(choices)) {
    state.error = { kind: 'malformed', detail: `"choices" is not an array: ${clip(data)}` }
    return false
  }
  const usage = o.usage as Record<string, unknown> | null | undefined
  if (usage !== null && typeof usage === 'object') {
    if (typeof usage.completion_tokens === 'number') state.usageCompletion = usage.completion_tokens
    if (typeof usage.prompt_tokens === 'number') state.usagePrompt = usage.prompt_tokens
    // OpenAI's usage.prompt_tokens_details.cached_tokens: prompt tokens the engine served from its prefix cache.
    const details = usage.prompt_tokens_details as Record<string, unknown> | null | undefined
    if (details !== null && typeof details === 'object' && typeof details.cached_tokens === 'number') state.usageCached = details.cached_tokens
  }
  const c = choices?.[0] as Record<string, unknown> | undefined
  if (c === undefined || c === null) return quiet(state)
  if (typeof c.finish_reason === 'string') state.finishReason = c.finish_reason
  const piece = pieceOf(c)
  if (piece.length === 0) return quiet(state)
  state.quietEvents = 0
  if (state.count === state.maxChunks) {
    state.error = {
      kind: 'overrun',
      detail: `more than ${state.maxChunks} content chunks for max_tokens ${state.maxChunks - CHUNK_SLACK} (the server ignores max_tokens)`,
    }
    return false
  }
  state.arrivalsMs[state.count++] = Number(atNs - sentNs) / 1e6
  if (!addText(state, piece)) {
    state.error = {
      kind: 'overrun',
      detail: `more than ${state.maxTextBytes} bytes of text in ${state.count} content chunks (over ${MAX_TEXT_BYTES_PER_CHUNK} bytes a chunk)`,
    }
    return false
  }
  return true
}

/** One more event without content; false (an overrun) past MAX_QUIET_EVENTS in a row. */
function quiet(state: StreamState): boolean {
  if (++state.quietEvents <= MAX_QUIET_EVENTS) return true
  state.error = { kind: 'overrun', detail: `${MAX_QUIET_EVENTS} events in a row without content (${state.count} content chunks so far)` }
  return false
}

/**
 * One read of the stream, received at `atNs`: parse it and apply the events it
 * completes. Returns false when the stream must be abandoned (`state.error`
 * says why): an error event, malformed data, a line or event over the
 * parser's caps, or an overrun (including MAX_QUIET_EVENTS lines in a row,
 * such as `: keep-alive` comments, that complete no event).
 */
export function applyRead(parser: SseParser, state: StreamState, bytes: Uint8Array, atNs: bigint, sentNs: bigint): boolean {
  const events = parser.push(bytes)
  for (let i = 0; i < events.length; i++) {
    if (!applyEvent(state, events[i] as string, atNs, sentNs)) return false
  }
  if (parser.error !== null) {
    state.error = { kind: 'malformed', detail: parser.error }
    return false
  }
  if (parser.quietLines > MAX_QUIET_EVENTS) {
    state.error = {
      kind: 'overrun',
      detail: `${MAX_QUIET_EVENTS} lines in a row without an event (comments such as ": keep-alive", or other fields; ${state.count} content chunks so far)`,
    }
    return false
  }
  return true
}

/** The stream ended (the last byte arrived at `lastNs`): apply what the parser still held. */
export function applyEnd(parser: SseParser, state: StreamState, lastNs: bigint, sentNs: bigint): void {
  const events = parser.end()
  for (let i = 0; i < events.length; i++) {
    if (!applyEvent(state, events[i] as string, lastNs, sentNs)) return
  }
  if (state.error === null && parser.error !== null) state.error = { kind: 'malformed', detail: parser.error }
}

/** Content or reasoning text of one choice (completions or chat delta); '' when none. */
function pieceOf(c: Record<string, unknown>): string {
  let piece = typeof c.text === 'string' ? c.text : ''
  const d = c.delta as Record<string, unknown> | null | undefined
  if (d !== null && typeof d === 'object') {
    // Reasoning servers stream thinking under one of two names; it is output too.
    if (typeof d.reasoning_content === 'string') piece += d.reasoning_content
    else if (typeof d.reasoning === 'string') piece += d.reasoning
    if (typeof d.content === 'string') piece += d.content
  }
  return piece
}

const encoder = new TextEncoder()
const decoder = new TextDecoder()

/** Append a piece's UTF-8; false when it does not fit within maxTextBytes (what fits is kept). */
function addText(state: StreamState, piece: string): boolean {
  // A UTF-16 code unit takes at most 3 UTF-8 bytes.
  const need = state.textLen + piece.length * 3
  if (need > state.textBytes.length && state.textBytes.length < state.maxTextBytes) {
    const grown = new Uint8Array(Math.min(state.maxTextBytes, Math.max(need, state.textBytes.length * 2)))
    grown.set(state.textBytes.subarray(0, state.textLen))
    state.textBytes = grown
  }
  const r = encoder.encodeInto(piece, state.textBytes.subarray(state.textLen))
  state.textLen += r.written
  return r.read === piece.length
}

/** The generated text so far (content and reasoning, in arrival order). */
export function textOf(state: StreamState): string {
  return decoder.decode(state.textBytes.subarray(0, state.textLen))
}

function errorMessage(e: unknown): string {
  if (typeof e === 'string') return oneLine(e, MAX_MESSAGE_CHARS)
  if (typeof e === 'object' && e !== null) {
    const m = (e as { message?: unknown }).message
    if (typeof m === 'string') return oneLine(m, MAX_MESSAGE_CHARS)
  }
  return clip(JSON.stringify(e))
}

function clip(s: string): string {
  return oneLine(s, MAX_EXCERPT_CHARS)
}
