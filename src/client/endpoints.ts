/**
 * Small non-streaming calls to an OpenAI-compatible server that other stages
 * need: the model list, the version and the Prometheus metrics (the tokenizer
 * is tokenize.ts's).
 */
import type { Dispatcher } from 'undici'
import { describeError, UsageError } from '../errors.js'
import { authHeaders } from '../util/auth.js'
import { normalizeBaseUrl } from '../util/base-url.js'
import { discard, fetchJson, MAX_JSON_BODY_BYTES, readBodyCapped, send } from './http.js'

/** Most bytes read from /v1/models: an engine lists one model, but a gateway may list hundreds with descriptions (~1 MB). */
const MAX_MODELS_BODY_BYTES = 8 << 20
/** Most bytes read from /metrics: vLLM's is ~100 KiB, with per-LoRA or per-engine labels a few MiB. */
export const MAX_METRICS_BODY_BYTES = 8 << 20

/**
 * The text of `{root}{path}` (default `/metrics`), or null when absent (404).
 * Throws UsageError naming the URL when unreachable or over MAX_METRICS_BODY_BYTES.
 */
export async function fetchMetricsText(baseUrl: string, apiKey: string | null = null, dispatcher?: Dispatcher, path = '/metrics'): Promise<string | null> {
  const url = `${normalizeBaseUrl(baseUrl).root}${path}`
  let res: Dispatcher.ResponseData
  try {
    res = await send(url, {
      // A server behind a gateway may guard every path, /metrics included.
      headers: authHeaders(apiKey),
      timeoutMs: 10_000,
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
 * The Prometheus text of `{root}/metrics`, or of `{root}/prometheus/metrics` where `/metrics` is
 * absent or not Prometheus text (trtllm-serve answers JSON iteration stats at `/metrics` and
 * serves its `trtllm_*` Prometheus metrics there); null when neither has any, the server is
 * unreachable or the text too large: server-side figures are optional beside the client's.
 */
export async function scrapeMetrics(baseUrl: string, apiKey: string | null = null, dispatcher?: Dispatcher): Promise<string | null> {
  for (const path of ['/metrics', '/prometheus/metrics']) {
    try {
      const text = await fetchMetricsText(baseUrl, apiKey, dispatcher, path)
      if (text !== null && isPrometheusText(text)) return text
    } catch {
      // unreachable or too large: try the next place, else none
    }
  }
  return null
}

/** Whether a body reads as Prometheus text, not JSON (an empty body has nothing to read either way). */
function isPrometheusText(text: string): boolean {
  const t = text.trimStart()
  return t !== '' && !t.startsWith('{') && !t.startsWith('[')
}

/** The objects listed in a `/v1/models` answer's `data` (model cards: id, owned_by, root, …); null when it has no `data` list. */
export function modelCards(answer: unknown): Record<string, unknown>[] | null {
  const data = answer !== null && typeof answer === 'object' ? (answer as { data?: unknown }).data : undefined
  if (!Array.isArray(data)) return null
  return data.filter((m): m is Record<string, unknown> => m !== null && typeof m === 'object')
}

/** The string ids of model cards, in the server's order. */
export function modelIds(cards: readonly Record<string, unknown>[]): string[] {
  return cards.flatMap((c) => (typeof c.id === 'string' ? [c.id] : []))
}

/**
 * The model cards of `{root}/v1/models` (null when the answer lists none as `data`);
 * throws UsageError naming the URL when the server cannot be asked.
 */
export async function fetchModelCards(
  baseUrl: string,
  opts: { apiKey?: string | null; dispatcher?: Dispatcher } = {},
): Promise<Record<string, unknown>[] | null> {
  const url = `${normalizeBaseUrl(baseUrl).root}/v1/models`
  return modelCards(
    await fetchJson(url, { headers: authHeaders(opts.apiKey), maxBytes: MAX_MODELS_BODY_BYTES, ...(opts.dispatcher ? { dispatcher: opts.dispatcher } : {}) }),
  )
}

/** Model ids served at `{root}/v1/models`; throws UsageError when the server cannot be asked or lists no `data`. */
export async function listModels(baseUrl: string, opts: { apiKey?: string | null; dispatcher?: Dispatcher } = {}): Promise<string[]> {
  const cards = await fetchModelCards(baseUrl, opts)
  if (cards === null) throw new UsageError(`GET ${normalizeBaseUrl(baseUrl).root}/v1/models: expected {"data": [...]} listing models`)
  return modelIds(cards)
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

/**
 * Hugging Face TGI, named by its own `GET /info` (`"router": "text-generation-router"`, with its
 * `version`); null for any other server, or one whose /info cannot be read. TGI cannot be
 * measured to servegate's rules: its OpenAI routes take string prompts only (servegate's
 * completions prompts are exact token ids) and drop `ignore_eos`, so no request is held to its
 * output length.
 */
export async function tgiVersion(baseUrl: string, opts: { apiKey?: string | null; dispatcher?: Dispatcher } = {}): Promise<string | null> {
  try {
    const j = await fetchJson(`${normalizeBaseUrl(baseUrl).root}/info`, {
      headers: authHeaders(opts.apiKey),
      maxBytes: MAX_JSON_BODY_BYTES,
      ...(opts.dispatcher ? { dispatcher: opts.dispatcher } : {}),
    })
    if (j === null || typeof j !== 'object' || (j as { router?: unknown }).router !== 'text-generation-router') return null
    const v = (j as { version?: unknown }).version
    return typeof v === 'string' && v.trim() !== '' ? v.trim() : 'unknown'
  } catch {
    return null
  }
}
