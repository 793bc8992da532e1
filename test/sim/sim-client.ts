/**
 * Test helper: a tiny streaming client for the simulator's own tests (the real
 * client lives in src/client). Timestamps each socket read with the monotonic
 * clock and splits SSE events on blank lines (LF or CRLF).
 */
import { Agent, request } from 'undici'

export interface SseEvent {
  /** The `data:` payload, or null for a comment-only event. */
  data: string | null
  raw: string
  atNs: bigint
}

export interface StreamResult {
  status: number
  headers: Record<string, string | string[] | undefined>
  sentNs: bigint
  events: SseEvent[]
  body: string
  /** Arrival times of events carrying non-empty content or reasoning text. */
  tokenChunkNs: bigint[]
  /** Concatenated content + reasoning text. */
  text: string
  usage: { prompt_tokens: number; completion_tokens: number } | null
  sawDone: boolean
  finishReason: string | null
  /** Set when the connection failed or a data line was not JSON. */
  error: string | null
}

export function makeAgent(connections = 256): Agent {
  return new Agent({ connections, pipelining: 1, keepAliveTimeout: 30_000 })
}

/** POST `body` to `url` and collect the whole (streamed or not) answer. */
export async function post(url: string, body: unknown, opts: { agent?: Agent; requestId?: string } = {}): Promise<StreamResult> {
  const headers: Record<string, string> = { 'content-type': 'application/json' }
  if (opts.requestId) headers['x-request-id'] = opts.requestId
  const sentNs = process.hrtime.bigint()
  const out: StreamResult = {
    status: 0,
    headers: {},
    sentNs,
    events: [],
    body: '',
    tokenChunkNs: [],
    text: '',
    usage: null,
    sawDone: false,
    finishReason: null,
    error: null,
  }
  try {
    const res = await request(url, { method: 'POST', headers, body: JSON.stringify(body), dispatcher: opts.agent })
    out.status = res.statusCode
    out.headers = res.headers
    let buf = ''
    for await (const chunk of res.body) {
      const at = process.hrtime.bigint()
      const s = (chunk as Buffer).toString('utf8')
      out.body += s
      buf += s
      for (;;) {
        const m = /\r?\n\r?\n/.exec(buf)
        if (!m) break
        const raw = buf.slice(0, m.index)
        buf = buf.slice(m.index + m[0].length)
        onEvent(out, raw, at)
      }
    }
  } catch (err) {
    out.error = `transport: ${(err as Error).message}`
  }
  return out
}

function onEvent(out: StreamResult, raw: string, at: bigint): void {
  const dataLines = raw
    .split(/\r?\n/)
    .filter((l) => l.startsWith('data:'))
    .map((l) => l.slice(5).trimStart())
  const data = dataLines.length > 0 ? dataLines.join('\n') : null
  out.events.push({ data, raw, atNs: at })
  if (data === null) return
  if (data === '[DONE]') {
    out.sawDone = true
    return
  }
  let o: Record<string, unknown>
  try {
    o = JSON.parse(data) as Record<string, unknown>
  } catch {
    out.error ??= `malformed: ${data.slice(0, 80)}`
    return
  }
  if (o.error) {
    out.error ??= `stream_error: ${JSON.stringify(o.error)}`
    return
  }
  if (o.usage) out.usage = o.usage as StreamResult['usage']
  const choices = o.choices as Array<Record<string, unknown>> | undefined
  const c = choices?.[0]
  if (!c) return
  const delta = c.delta as Record<string, unknown> | undefined
  const piece = String(c.text ?? delta?.content ?? '') + String(delta?.reasoning_content ?? '')
  if (piece.length > 0) {
    out.tokenChunkNs.push(at)
    out.text += piece
  }
  if (typeof c.finish_reason === 'string') out.finishReason = c.finish_reason
}

/** Millisecond gaps between consecutive entries. */
export function gapsMs(ns: readonly bigint[]): number[] {
  const out: number[] = []
  for (let i = 1; i < ns.length; i++) out.push(Number((ns[i] as bigint) - (ns[i - 1] as bigint)) / 1e6)
  return out
}

/** The p-th percentile (nearest rank) of `xs`. */
export function percentile(xs: readonly number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b)
  if (s.length === 0) return Number.NaN
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1))] as number
}

/** A completions streaming body with token-id prompt of `inputLen`. */
export function completionBody(inputLen: number, maxTokens: number, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    prompt: Array.from({ length: inputLen }, (_, i) => (i * 7919 + maxTokens) % 50000),
    max_tokens: maxTokens,
    ignore_eos: true,
    stream: true,
    stream_options: { include_usage: true },
    ...extra,
  }
}
