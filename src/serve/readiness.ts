/**
 * Is the server ready? `GET /health` answering 200 (vLLM, SGLang, TGI), else,
 * where there is no /health, `GET /v1/models` answering 200. Probes are
 * failures-as-data: what the server last said is kept for the progress line.
 */
import { Agent } from 'undici'
import { send } from '../client/http.js'
import { describeError } from '../errors.js'
import { authHeaders } from '../util/auth.js'

export type Probe = { ready: true; via: string } | { ready: false; last: string }

/** One readiness probe of `root` (no trailing slash), each request bounded by `timeoutMs`. */
export async function probeReady(root: string, opts: { apiKey: string | null; timeoutMs: number; dispatcher: Agent }): Promise<Probe> {
  const get = async (path: string): Promise<number | string> => {
    try {
      const res = await send(`${root}${path}`, {
        headers: path === '/health' ? {} : authHeaders(opts.apiKey),
        timeoutMs: opts.timeoutMs,
        dispatcher: opts.dispatcher,
      })
      await res.body.dump()
      return res.statusCode
    } catch (err) {
      return describeProbeError(err, opts.timeoutMs)
    }
  }
  const health = await get('/health')
  if (health === 200) return { ready: true, via: '/health' }
  if (typeof health === 'string') return { ready: false, last: health }
  // A server without /health (404, 405) may still be up: ask for its models.
  if (health === 404 || health === 405) {
    const models = await get('/v1/models')
    if (models === 200) return { ready: true, via: '/v1/models' }
    return { ready: false, last: typeof models === 'string' ? models : `/health HTTP ${health}, /v1/models HTTP ${models}` }
  }
  return { ready: false, last: `/health HTTP ${health}` }
}

/** A refused or timed-out probe in words ("connection refused"), not a stack of codes. */
function describeProbeError(err: unknown, timeoutMs: number): string {
  const code = (err as { code?: unknown } | null)?.code
  if (code === 'ECONNREFUSED') return 'connection refused'
  if (code === 'ECONNRESET' || code === 'UND_ERR_SOCKET') return 'connection reset'
  if (code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_BODY_TIMEOUT' || code === 'UND_ERR_CONNECT_TIMEOUT')
    return `no answer within ${Math.round(timeoutMs / 1000)} s`
  return describeError(err)
}

/** An agent for probes that keeps no idle connection to a server about to be stopped. */
export function probeAgent(): Agent {
  return new Agent({ keepAliveTimeout: 10, keepAliveMaxTimeout: 10, pipelining: 0 })
}
