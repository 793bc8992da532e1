/**
 * What a deployment needs on every request beyond the methodology's body: extra
 * headers (a routing header, a gateway's tenant) and extra body fields
 * (`chat_template_kwargs` of a reasoning model, `min_tokens` where `ignore_eos`
 * is not honoured), from `--header NAME:VALUE` / `--extra-body JSON` and the
 * config's `server.headers` / `server.extra_body`. Neither may change what the
 * methodology pins: the shape (`max_tokens`, the prompt or messages), the
 * stream and its usage, `ignore_eos`, one choice, greedy sampling, the model,
 * or the headers servegate itself sets (the key comes from `server.api_key_env`
 * only). Header values are treated as secrets: recorded by name only, redacted
 * wherever they could appear.
 */
import type { Problems } from './flags.js'

/** Body fields the methodology sets on every request (plan/prompts.ts), and why each is pinned. */
export const PINNED_BODY_KEYS: Readonly<Record<string, string>> = {
  model: 'the model measured (server.model, --model)',
  prompt: 'the prompt of input_len tokens',
  messages: 'the chat prompt of input_len tokens',
  max_tokens: 'the shape’s output_len',
  max_completion_tokens: 'the shape’s output_len',
  ignore_eos: 'every request generates exactly output_len tokens',
  stream: 'TTFT and ITL need a stream',
  stream_options: 'usage in the stream counts the tokens',
  n: 'one completion a request',
  temperature: 'greedy decoding, the same work on every run',
}

/** Headers servegate sets itself (lower case). */
const RESERVED_HEADERS: Readonly<Record<string, string>> = {
  authorization: 'the key comes from server.api_key_env',
  'content-type': 'servegate sends JSON',
  'content-length': 'set by the client',
  host: 'set by the client',
  connection: 'set by the client',
  'transfer-encoding': 'set by the client',
  'x-request-id': 'servegate names each request with it',
}

/** RFC 9110's token: the characters a header name may have. */
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/

export interface RequestExtras {
  /** Header name (as given) → value. */
  headers: Record<string, string>
  /** Fields merged into every generation request's body. */
  extraBody: Record<string, unknown>
}

/** One header, checked; `where` names its source in a problem (`--header "X"`, `servegate.yml: server.headers.X`). */
function checkHeader(name: string, value: string, where: string, problems: Problems): boolean {
  if (!HEADER_NAME.test(name)) {
    problems.push(`${where}: expected a header name of letters, digits and !#$%&'*+.^_\`|~- (no spaces)`)
    return false
  }
  const reserved = RESERVED_HEADERS[name.toLowerCase()]
  if (reserved !== undefined) {
    problems.push(`${where}: servegate sets ${name.toLowerCase()} itself (${reserved})`)
    return false
  }
  if (/[\r\n\0]/.test(value)) {
    problems.push(`${where}: expected a value on one line`)
    return false
  }
  return true
}

/** `--header NAME:VALUE`, repeatable; the value may hold colons. */
export function parseHeaderFlags(raw: readonly string[] | undefined, problems: Problems): Record<string, string> {
  const out: Record<string, string> = {}
  for (const item of raw ?? []) {
    const colon = item.indexOf(':')
    // The value is never echoed: it may be a token.
    const name = colon < 0 ? item.trim() : item.slice(0, colon).trim()
    if (colon <= 0) {
      problems.push(`--header ${JSON.stringify(colon < 0 ? '…' : `:…`)}: expected NAME:VALUE, e.g. --header x-route:blue`)
      continue
    }
    const value = item.slice(colon + 1).trim()
    if (checkHeader(name, value, `--header ${name}`, problems)) out[name] = value
  }
  return out
}

/** The pinned fields an extra body would set, as one problem line each. */
function pinnedProblems(body: Record<string, unknown>, where: (key: string) => string, problems: Problems): boolean {
  let ok = true
  for (const key of Object.keys(body)) {
    const why = PINNED_BODY_KEYS[key]
    if (why === undefined) continue
    problems.push(`${where(key)}: servegate pins ${key} (${why}); an extra body may add fields, never change these`)
    ok = false
  }
  return ok
}

/** `--extra-body JSON`: a JSON object whose fields join every generation request. */
export function parseExtraBodyFlag(raw: string | undefined, problems: Problems): Record<string, unknown> {
  if (raw === undefined) return {}
  let v: unknown
  try {
    v = JSON.parse(raw)
  } catch (err) {
    problems.push(`--extra-body: expected a JSON object, e.g. '{"chat_template_kwargs": {"enable_thinking": false}}' (${(err as Error).message})`)
    return {}
  }
  if (v === null || typeof v !== 'object' || Array.isArray(v)) {
    problems.push(`--extra-body: expected a JSON object, e.g. '{"min_tokens": 128}'`)
    return {}
  }
  const body = v as Record<string, unknown>
  return pinnedProblems(body, (key) => `--extra-body ${key}`, problems) ? body : {}
}

/**
 * The request extras in force: the config's `server.headers` and `server.extra_body`, with the
 * flags' fields over them (a flag's header replaces the file's of the same name, case-blind).
 */
export function resolveRequestExtras(
  file: { headers?: Record<string, string>; extra_body?: Record<string, unknown> } | undefined,
  fileName: string,
  flags: { headers: Record<string, string>; extraBody: Record<string, unknown> },
  problems: Problems,
): RequestExtras {
  const headers: Record<string, string> = {}
  for (const [name, value] of Object.entries(file?.headers ?? {})) {
    if (checkHeader(name, value, `${fileName}: server.headers.${name}`, problems)) headers[name] = value
  }
  for (const [name, value] of Object.entries(flags.headers)) {
    for (const k of Object.keys(headers)) if (k.toLowerCase() === name.toLowerCase()) delete headers[k]
    headers[name] = value
  }
  const fileBody = file?.extra_body ?? {}
  const fromFile = pinnedProblems(fileBody, (key) => `${fileName}: server.extra_body.${key}`, problems) ? fileBody : {}
  return { headers, extraBody: { ...fromFile, ...flags.extraBody } }
}

/**
 * What a result records of the extras: header names with the value redacted, and the extra body
 * (absent when neither is set, so older results and results without extras read alike).
 */
export function extrasForResult(x: RequestExtras | undefined): Record<string, unknown> {
  if (x === undefined) return {}
  const names = Object.keys(x.headers).sort((a, b) => a.toLowerCase().localeCompare(b.toLowerCase()))
  return {
    ...(names.length > 0 ? { headers: Object.fromEntries(names.map((n) => [n.toLowerCase(), '<redacted>'])) } : {}),
    ...(Object.keys(x.extraBody).length > 0 ? { extra_body: x.extraBody } : {}),
  }
}
