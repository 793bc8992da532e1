/**
 * The one rule for turning a user's `--base-url` (or `server.base_url`) into
 * the server root every endpoint path is appended to.
 */
import { UsageError } from '../errors.js'
import { redactSecrets } from './redact.js'

/** Why a base URL is refused; `http` false when it is not an http(s) URL at all. */
export interface BaseUrlProblem {
  problem: string
  http: boolean
}

/**
 * The server's root URL without a trailing slash or `/v1` (both accepted on
 * input, as `vllm bench serve` accepts them), e.g. `http://host:8000` or
 * `http://host/llm`; the problem otherwise. Only an http(s) URL without a
 * query, a fragment or credentials is a base URL.
 */
export function baseUrlRoot(raw: string): string | BaseUrlProblem {
  let url: URL
  try {
    url = new URL(raw.trim())
  } catch {
    return { problem: 'expected an http(s) URL such as http://127.0.0.1:8000', http: false }
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return { problem: `expected an http(s) URL, not ${url.protocol}`, http: false }
  if (url.hostname === '') return { problem: 'expected an http(s) URL such as http://127.0.0.1:8000', http: false }
  if (url.search || url.hash) return { problem: 'expected a URL without a query or fragment', http: true }
  // The base URL is written to the result file; credentials must never be.
  if (url.username || url.password)
    return { problem: "expected a URL without credentials (name the key's environment variable in server.api_key_env)", http: true }
  let path = url.pathname.replace(/\/+$/, '')
  if (path.endsWith('/v1')) path = path.slice(0, -3)
  path = path.replace(/\/+$/, '')
  return `${url.protocol}//${url.host}${path}`
}

/** The server root of `input` by baseUrlRoot's rule; throws UsageError naming the value when it is not a base URL. */
export function normalizeBaseUrl(input: string): { root: string } {
  const r = baseUrlRoot(input)
  if (typeof r === 'string') return { root: r }
  // The URL may carry user:password@: the message shows it redacted, as config's does.
  if (r.http) throw new UsageError(`--base-url ${redactSecrets(JSON.stringify(input))}: ${r.problem}`)
  throw new UsageError(`--base-url "${input}": expected an http(s) URL such as http://127.0.0.1:8000`)
}
