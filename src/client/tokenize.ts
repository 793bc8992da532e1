/**
 * POST {root}/tokenize with chat messages: the token count of a chat prompt
 * under the model's own template and tokenizer. vLLM and SGLang accept
 * `{model, messages}` there, apply the chat template (with the generation
 * prompt, as a chat completion does) and answer `{count, tokens, ...}`.
 * Failures are values: a server without the endpoint is `unsupported`, a
 * transient fault is `error`.
 */
import type { Dispatcher } from 'undici'
import { describeError } from '../errors.js'
import { authHeaders } from '../util/auth.js'
import { normalizeBaseUrl } from './base-url.js'
import { MAX_TOKENIZE_BODY_BYTES } from './endpoints.js'
import { fetchJson, HttpStatusError } from './http.js'

/** A chat message as servegate sends it. */
export interface ChatMessage {
  role: string
  content: string
}

export type TokenizeAnswer =
  | { kind: 'count'; count: number }
  /** The server has no /tokenize, or one that does not take messages (404, 405, 400, 501, or no count). */
  | { kind: 'unsupported'; reason: string }
  /** It could not be asked this time (transport error, 5xx, timeout). */
  | { kind: 'error'; reason: string }

export interface TokenizeOptions {
  apiKey: string | null
  dispatcher?: Dispatcher
  timeoutMs?: number
}

// Statuses that mean "this endpoint does not do this", not "try again".
const UNSUPPORTED_STATUS = new Set([400, 404, 405, 415, 422, 501])

/** Templated token count of `messages` by the server's /tokenize (see TokenizeAnswer). */
export async function tokenizeMessages(root: string, model: string, messages: readonly ChatMessage[], opts: TokenizeOptions): Promise<TokenizeAnswer> {
  const url = `${normalizeBaseUrl(root).root}/tokenize`
  let j: unknown
  try {
    j = await fetchJson(url, {
      // add_generation_prompt: the assistant turn's opening is part of what a chat completion prefills.
      body: { model, messages, add_generation_prompt: true },
      headers: authHeaders(opts.apiKey),
      // The answer lists every token id: a 128k-token prompt is ~1 MB of JSON.
      maxBytes: MAX_TOKENIZE_BODY_BYTES,
      ...(opts.timeoutMs !== undefined ? { timeoutMs: opts.timeoutMs } : {}),
      ...(opts.dispatcher ? { dispatcher: opts.dispatcher } : {}),
    })
  } catch (err) {
    if (err instanceof HttpStatusError && UNSUPPORTED_STATUS.has(err.status)) return { kind: 'unsupported', reason: `HTTP ${err.status}` }
    return { kind: 'error', reason: describeError(err) }
  }
  const o = (j ?? {}) as { count?: unknown; tokens?: unknown }
  if (typeof o.count === 'number' && Number.isInteger(o.count) && o.count >= 0) return { kind: 'count', count: o.count }
  if (Array.isArray(o.tokens)) return { kind: 'count', count: o.tokens.length }
  return { kind: 'unsupported', reason: 'the answer has neither `count` nor `tokens`' }
}
