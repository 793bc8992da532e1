/**
 * The one place an API key becomes a request header (and nowhere else: it is never logged or
 * stored), and where the sweep's extra headers (--header, server.headers) join every request to
 * the server: generation, /v1/models, /tokenize, /metrics, readiness.
 */

/** The sweep's extra headers, set by the sweep for its duration (setRequestHeaders). */
let extraHeaders: Readonly<Record<string, string>> = {}

/** Headers every later request to the server carries beside the key; {} clears them. */
export function setRequestHeaders(headers: Readonly<Record<string, string>>): void {
  extraHeaders = { ...headers }
}

/** The extra headers in force, then `Authorization: Bearer KEY` (none without a key). */
export function authHeaders(apiKey: string | null | undefined): Record<string, string> {
  return { ...extraHeaders, ...(apiKey ? { authorization: `Bearer ${apiKey}` } : {}) }
}
