/**
 * What one SSE event of an OpenAI-compatible stream means for the request's
 * measurement: content tokens (completions `choices[0].text`, chat
 * `choices[0].delta.content` / `reasoning_content` / `reasoning`), usage,
 * finish_reason, `[DONE]`, and errors. Pure apart from the state it fills.
 */
import type { ErrorKind } from '../types.js'

/** Mutable per-request state, preallocated so a token adds no garbage but its text. */
export interface StreamState {
  /** Arrival of each content chunk, ms since send; grown only past maxTokens + slack. */
  arrivalsMs: Float64Array
  count: number
  /** Every data event seen (including usage-only, role-only and [DONE]). */
  events: number
  /**
   * Generated text as UTF-8 bytes (off the JS heap): kept as strings, every
   * token's piece would live until the request ends and be copied by each
   * young-generation GC on the way, and those pauses stall every stream.
   */
  textBytes: Uint8Array
  textLen: number
  usageCompletion: number | null
  usagePrompt: number | null
  finishReason: string | null
  sawDone: boolean
  error: { kind: ErrorKind; detail: string } | null
}

/** Room for a few more chunks than asked for before growing the buffer. */
const SLACK = 16

/** Fresh state for a request that asked for `maxTokens` tokens. */
export function newStreamState(maxTokens: number): StreamState {
  const size = Math.max(1, Math.min(Number.isFinite(maxTokens) ? Math.floor(maxTokens) : 0, 1 << 20)) + SLACK
  return {
    arrivalsMs: new Float64Array(size),
    count: 0,
    events: 0,
    textBytes: new Uint8Array(size * 8),
    textLen: 0,
    usageCompletion: null,
    usagePrompt: null,
    finishReason: null,
    sawDone: false,
    error: null,
  }
}

/**
 * Apply one event's data, received at `atNs` for a request sent at `sentNs`
 * (monotonic ns). Returns false when the event is an error or malformed
 * (`state.error` then says why) and the stream should be abandoned.
 */
export function applyEvent(state: StreamState, data: string, atNs: bigint, sentNs: bigint): boolean {
  state.events++
  if (data === '[DONE]') {
    state.sawDone = true
    return true
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
  const c = choices?.[0] as Record<string, unknown> | undefined
  if (c !== undefined && c !== null) {
    const piece = pieceOf(c)
    if (piece.length > 0) {
      addArrival(state, Number(atNs - sentNs) / 1e6)
      addText(state, piece)
    }
    if (typeof c.finish_reason === 'string') state.finishReason = c.finish_reason
  }
  const usage = o.usage as Record<string, unknown> | null | undefined
  if (usage !== null && typeof usage === 'object') {
    if (typeof usage.completion_tokens === 'number') state.usageCompletion = usage.completion_tokens
    if (typeof usage.prompt_tokens === 'number') state.usagePrompt = usage.prompt_tokens
  }
  return true
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

function addArrival(state: StreamState, ms: number): void {
  if (state.count === state.arrivalsMs.length) {
    const grown = new Float64Array(state.arrivalsMs.length * 2)
    grown.set(state.arrivalsMs)
    state.arrivalsMs = grown
  }
  state.arrivalsMs[state.count++] = ms
}

const encoder = new TextEncoder()
const decoder = new TextDecoder()

function addText(state: StreamState, piece: string): void {
  // A UTF-16 code unit takes at most 3 UTF-8 bytes.
  const need = state.textLen + piece.length * 3
  if (need > state.textBytes.length) {
    const grown = new Uint8Array(Math.max(need, state.textBytes.length * 2))
    grown.set(state.textBytes.subarray(0, state.textLen))
    state.textBytes = grown
  }
  state.textLen += encoder.encodeInto(piece, state.textBytes.subarray(state.textLen)).written
}

/** The generated text so far (content and reasoning, in arrival order). */
export function textOf(state: StreamState): string {
  return decoder.decode(state.textBytes.subarray(0, state.textLen))
}

function errorMessage(e: unknown): string {
  if (typeof e === 'string') return e
  if (typeof e === 'object' && e !== null) {
    const m = (e as { message?: unknown }).message
    if (typeof m === 'string') return m
  }
  return clip(JSON.stringify(e))
}

function clip(s: string): string {
  return s.length > 200 ? `${s.slice(0, 200)}…` : s
}
