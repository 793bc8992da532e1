/**
 * POST {root}/tokenize: the token count of a generated text (tokenizeCount),
 * and of a chat prompt under the model's own template and tokenizer
 * (tokenizeMessages). For messages, vLLM (and Dynamo's frontend) accept
 * `{model, messages}` there, apply the chat template (with the generation
 * prompt, as a chat completion does) and answer `{count, tokens, ...}`.
 * SGLang's reads `prompt` only (its serving_tokenize.py): a `{messages}` body
 * is refused, so its chat prompts are sized by `--tokenizer` or not at all.
 * Failures are values: a server without the endpoint is `unsupported`, a
 * transient fault is `error`.
 *
 * Two shapes of the endpoint are spoken. vLLM's reads `prompt` or `messages`
 * (SGLang's `prompt` alone); llama.cpp's `llama-server` reads only `content` and answers
 * `{tokens: []}` with status 200 to any other body, and templates chat at
 * `POST /apply-template`. An answer of 0 tokens for a non-empty text cannot be
 * right: it is never taken as a count. servegate then asks in llama-server's
 * shape, and where that gives no count either, the server's /tokenize is
 * `unsupported` (its checks say they could not run).
 */
import type { Dispatcher } from 'undici'
import { describeError } from '../errors.js'
import { authHeaders } from '../util/auth.js'
import { normalizeBaseUrl } from '../util/base-url.js'
import { fetchJson, HttpStatusError } from './http.js'

/** Most bytes read from /tokenize: it lists every token id (~7 bytes each), so a 128k-token text is ~0.9 MB. */
const MAX_TOKENIZE_BODY_BYTES = 8 << 20

/** POST `body` to `{root}{path}` (default /tokenize) and parse the answer (fetchJson's errors). */
function postTokenize(root: string, body: unknown, opts: TokenizeOptions, path = '/tokenize'): Promise<unknown> {
  return fetchJson(`${normalizeBaseUrl(root).root}${path}`, {
    body,
    headers: authHeaders(opts.apiKey),
    // The answer lists every token id: a 128k-token prompt is ~1 MB of JSON.
    maxBytes: MAX_TOKENIZE_BODY_BYTES,
    ...(opts.timeoutMs !== undefined ? { timeoutMs: opts.timeoutMs } : {}),
    ...(opts.dispatcher ? { dispatcher: opts.dispatcher } : {}),
  })
}

/** The count an answer of /tokenize gives (`count`, else the length of `tokens`), or null when it has neither. */
function countOf(j: unknown): number | null {
  const o = (j ?? {}) as { count?: unknown; tokens?: unknown }
  if (typeof o.count === 'number' && Number.isInteger(o.count) && o.count >= 0) return o.count
  if (Array.isArray(o.tokens)) return o.tokens.length
  return null
}

/** Token count of `text` by the server's own tokenizer (`POST {root}/tokenize`), or null if unavailable. */
export async function tokenizeCount(
  baseUrl: string,
  model: string,
  text: string,
  apiKey: string | null = null,
  dispatcher?: Dispatcher,
): Promise<number | null> {
  const opts = { apiKey, ...(dispatcher ? { dispatcher } : {}) }
  const root = normalizeBaseUrl(baseUrl).root
  try {
    // add_special_tokens / add_special false: count the generated text only, not a BOS token.
    const n = countOf(await postTokenize(root, { model, prompt: text, add_special_tokens: false }, opts))
    if (n === null) return null
    if (n > 0 || text === '') return n
    // 0 tokens for a non-empty text: the server ignored `prompt`. Ask in llama-server's shape (the
    // re-count runs after the measurement, so asking twice costs no measured time).
    const m = countOf(await postTokenize(root, { content: text, add_special: false }, opts))
    return m === null || m === 0 ? null : m
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

/** An answer of fetchJson's errors: `unsupported` for a status meaning "not this endpoint", else `error`. */
function failed(err: unknown, what: string): TokenizeAnswer {
  if (err instanceof HttpStatusError && UNSUPPORTED_STATUS.has(err.status)) return { kind: 'unsupported', reason: `${what}: HTTP ${err.status}` }
  return { kind: 'error', reason: `${what}: ${describeError(err)}` }
}

/**
 * Templated token count of `messages` by the server's /tokenize (see TokenizeAnswer): in vLLM's
 * shape `{model, messages}`, and where that is refused or counts nothing, in llama-server's
 * (`/apply-template`, then `/tokenize` of its prompt with the special tokens a chat completion adds).
 */
export async function tokenizeMessages(root: string, model: string, messages: readonly ChatMessage[], opts: TokenizeOptions): Promise<TokenizeAnswer> {
  let first: TokenizeAnswer
  try {
    // add_generation_prompt: the assistant turn's opening is part of what a chat completion prefills.
    const n = countOf(await postTokenize(root, { model, messages, add_generation_prompt: true }, opts))
    first =
      n === null
        ? { kind: 'unsupported', reason: '/tokenize answered neither `count` nor `tokens`' }
        : n > 0
          ? { kind: 'count', count: n }
          : { kind: 'unsupported', reason: '/tokenize answered 0 tokens for a non-empty chat prompt (it ignored the messages it was sent)' }
  } catch (err) {
    first = failed(err, '/tokenize')
  }
  if (first.kind !== 'unsupported') return first
  const second = await llamaServerMessages(root, messages, opts)
  // Where llama-server's shape is missing too, the first refusal says most about the server.
  return second.kind === 'unsupported' ? { kind: 'unsupported', reason: `${first.reason}; ${second.reason}` } : second
}

/**
 * llama.cpp's llama-server: `POST /apply-template` renders the messages as its chat completion
 * does (with the generation prompt), and `POST /tokenize` of that prompt with `add_special` and
 * `parse_special` counts it as the completion tokenizes it (BOS where the model adds one).
 */
async function llamaServerMessages(root: string, messages: readonly ChatMessage[], opts: TokenizeOptions): Promise<TokenizeAnswer> {
  let text: unknown
  try {
    text = ((await postTokenize(root, { messages }, opts, '/apply-template')) as { prompt?: unknown } | null)?.prompt
  } catch (err) {
    return failed(err, '/apply-template')
  }
  if (typeof text !== 'string' || text === '') return { kind: 'unsupported', reason: '/apply-template answered no `prompt`' }
  try {
    const n = countOf(await postTokenize(root, { content: text, add_special: true, parse_special: true }, opts))
    if (n === null || n === 0) return { kind: 'unsupported', reason: `/tokenize of llama-server's shape answered ${n === null ? 'no count' : '0 tokens'}` }
    return { kind: 'count', count: n }
  } catch (err) {
    return failed(err, '/tokenize')
  }
}
