/**
 * Handing a planned streaming request to undici's raw dispatch (see
 * stream-request.ts for why raw): its URL split into origin and path (cached:
 * a run sends thousands of requests to one URL), its headers, and the idle
 * timeout; and telling from the answer's headers that it is no stream.
 */
import type { Dispatcher } from 'undici'
import type { PlannedRequest } from '../types.js'

const originCache = new Map<string, { origin: string; path: string }>()

function splitUrl(url: string): { origin: string; path: string } {
  let hit = originCache.get(url)
  if (hit === undefined) {
    const u = new URL(url)
    hit = { origin: u.origin, path: `${u.pathname}${u.search}` }
    if (originCache.size > 1000) originCache.clear()
    originCache.set(url, hit)
  }
  return hit
}

/** POST `req` through `dispatcher` to `handler`, failing it when no byte arrives for `idleTimeoutMs`. May throw (a bad URL). */
export function dispatchStream(dispatcher: Dispatcher, req: PlannedRequest, idleTimeoutMs: number, handler: Dispatcher.DispatchHandler): void {
  const { origin, path } = splitUrl(req.url)
  dispatcher.dispatch(
    {
      origin,
      path,
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-request-id': req.id, ...req.headers },
      body: req.body,
      headersTimeout: idleTimeoutMs,
      bodyTimeout: idleTimeoutMs,
    },
    handler,
  )
}

/**
 * Why a 200 answer to a streaming request is not a stream: a JSON content-type
 * means `stream: true` was ignored. Null for an SSE stream (or no content-type).
 */
export function notAStreamDetail(rawHeaders: Buffer[] | string[] | null | undefined): string | null {
  const type = headerValue(rawHeaders, 'content-type')
  if (type !== null && !type.includes('text/event-stream') && type.includes('json')) return `expected an SSE stream (text/event-stream), got ${type}`
  return null
}

/** One header's value, lower-cased, from undici's raw [name, value, ...] list; null when absent. */
function headerValue(raw: Buffer[] | string[] | null | undefined, name: string): string | null {
  if (!raw) return null
  for (let i = 0; i + 1 < raw.length; i += 2) {
    if (String(raw[i]).toLowerCase() === name) return String(raw[i + 1]).toLowerCase()
  }
  return null
}
