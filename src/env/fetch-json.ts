/** Fetching a server's info endpoints for the environment record; a failure is null, never a throw. */
import { authHeaders } from '../util/auth.js'

/** GETs `url` and gives its JSON body, or null on any error, non-200 answer or invalid JSON. */
export type FetchJsonFn = (url: string) => Promise<unknown | null>

/** The default FetchJsonFn over the global fetch, with the API key (if any) and a timeout. */
export function createFetchJson(options: { apiKey?: string | null; timeoutMs?: number } = {}): FetchJsonFn {
  const timeoutMs = options.timeoutMs ?? 5000
  return async (url) => {
    try {
      const headers: Record<string, string> = { accept: 'application/json', ...authHeaders(options.apiKey) }
      const res = await fetch(url, { headers, signal: AbortSignal.timeout(timeoutMs) })
      if (res.status !== 200) {
        await res.body?.cancel()
        return null
      }
      return (await res.json()) as unknown
    } catch {
      return null
    }
  }
}
