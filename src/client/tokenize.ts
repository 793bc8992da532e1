/**
 * POST {root}/tokenize: the token count of a generated text (tokenizeCount),
 * and of a chat prompt under the model's own template and tokenizer
 * (tokenizeMessages). For messages, vLLM and SGLang accept
 * `{model, messages}` there, apply the chat template (with the generation
 * prompt, as a chat completion does) and answer `{count, tokens, ...}`.
 * Failures are values: a server without the endpoint is `unsupported`, a
 * transient fault is `error`.
 */
import type { Dispatcher } from 'undici'
import { describeError } from '../errors.js'
import { authHeaders } from '../util/auth.js'
import { normalizeBaseUrl } from '../util/base-url.js'
import { fetchJson, HttpStatusError } from './http.js'

/** Most bytes read from /tokenize: it lists every token id (~7 bytes each), so a 128k-token text is ~0.9 MB. */
const MAX_TOKENIZE_BODY_BYTES = 8 << 20

/** POST `body` to `{root}/tokenize` and parse the answer (fetchJson's errors). */
function postTokenize(root: string, body: unknown, opts: TokenizeOptions): Promise<unknown> {
  return fetchJson(`${normalizeBaseUrl(root).root}/tokenize`, {
    body,
    headers: authHeaders(opts.apiKey),
    // The answer lists every token id: a 128k-token prompt is ~1 MB of JSON.
    maxBytes: MAX_TOKENIZE_BODY_BYTES,
    ...(opts.timeoutMs !== undefined ? { timeoutMs: opts.timeoutMs } : {}),
    ...(opts.dispatcher ? { dispatcher: opts.dispatcher } : {}),
  })
}

/** Token count of `text` by the server's own tokenizer (`POST {root}/tokenize`), or null if unavailable. */
export async function tokenizeCount(
  baseUrl: string,
  model: string,
  text: string,
  apiKey: string | null = null,
  dispatcher?: Dispatcher,
): Promise<number | null> {
  try {
    // add_special_tokens false: count the generated text only, not a BOS token.
    const j = (await postTokenize(baseUrl, { model, prompt: text, add_special_tokens: false }, { apiKey, ...(dispatcher ? { dispatcher } : {}) })) as {
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
  let j: unknown
  try {
    // add_generation_prompt: the assistant turn's opening is part of what a chat completion prefills.
    j = await postTokenize(root, { model, messages, add_generation_prompt: true }, opts)
  } catch (err) {
    if (err instanceof HttpStatusError && UNSUPPORTED_STATUS.has(err.status)) return { kind: 'unsupported', reason: `HTTP ${err.status}` }
    return { kind: 'error', reason: describeError(err) }
  }
  const o = (j ?? {}) as { count?: unknown; tokens?: unknown }
  if (typeof o.count === 'number' && Number.isInteger(o.count) && o.count >= 0) return { kind: 'count', count: o.count }
  if (Array.isArray(o.tokens)) return { kind: 'count', count: o.tokens.length }
  return { kind: 'unsupported', reason: 'the answer has neither `count` nor `tokens`' }
}
