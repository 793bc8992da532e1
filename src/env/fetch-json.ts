/** Fetching a server's info endpoints for the environment record; a failure is null, never a throw. */
import { authHeaders } from '../util/auth.js'

/** GETs `url` and gives its JSON body, or null on any error, non-200 answer, invalid JSON or an answer over the size cap. */
export type FetchJsonFn = (url: string) => Promise<unknown | null>

/** Most bytes read from an info endpoint (/version, /v1/models, /server_info): a few KiB in practice. */
export const MAX_INFO_BODY_BYTES = 1 << 20

/** The default FetchJsonFn over the global fetch, with the API key (if any), a timeout and a size cap. */
export function createFetchJson(options: { apiKey?: string | null; timeoutMs?: number; maxBytes?: number } = {}): FetchJsonFn {
  const timeoutMs = options.timeoutMs ?? 5000
  const maxBytes = options.maxBytes ?? MAX_INFO_BODY_BYTES
  return async (url) => {
    try {
      const headers: Record<string, string> = { accept: 'application/json', ...authHeaders(options.apiKey) }
      const res = await fetch(url, { headers, signal: AbortSignal.timeout(timeoutMs) })
      if (res.status !== 200 || res.body === null) {
        await res.body?.cancel()
        return null
      }
      const text = await readCapped(res.body, maxBytes)
      return text === null ? null : (JSON.parse(text) as unknown)
    } catch {
      return null
    }
  }
}

/** The body as text, or null (the stream cancelled) once it passes `maxBytes`. */
async function readCapped(body: ReadableStream<Uint8Array>, maxBytes: number): Promise<string | null> {
  const reader = body.getReader()
  const chunks: Uint8Array[] = []
  let length = 0
  for (;;) {
    const { done, value } = await reader.read()
    if (done) break
    length += value.length
    if (length > maxBytes) {
      await reader.cancel()
      return null
    }
    chunks.push(value)
  }
  return Buffer.concat(chunks, length).toString('utf8')
}
