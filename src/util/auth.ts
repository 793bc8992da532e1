/** The one place an API key becomes a request header (and nowhere else: it is never logged or stored). */

/** `Authorization: Bearer KEY`, or no header without a key. */
export function authHeaders(apiKey: string | null | undefined): Record<string, string> {
  return apiKey ? { authorization: `Bearer ${apiKey}` } : {}
}
