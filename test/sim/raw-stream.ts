/**
 * Test helper: a raw node:http client for hostile streams. Keeps every socket
 * read with its arrival time (so a test can see bytes arrive one at a time),
 * never waits for the end on its own, and can be aborted at any moment.
 */
import { request } from 'node:http'

export interface RawRead {
  /** Arrival, ms on the monotonic clock. */
  atMs: number
  bytes: Buffer
}

export class RawStream {
  status = 0
  readonly reads: RawRead[] = []
  /** Bytes received so far. */
  size = 0
  /** The response ended normally (the server finished it). */
  ended = false
  /** The connection is gone (ended, cut by the server, or aborted). */
  closed = false
  error: string | null = null
  private readonly req
  private waiters: Array<() => void> = []

  /** When the request was sent, ms on the monotonic clock: nothing the server does can arrive before it. */
  readonly sentMs = nowMs()

  constructor(url: string, body: unknown, headers: Record<string, string> = {}) {
    this.req = request(url, { method: 'POST', agent: false, headers: { 'content-type': 'application/json', ...headers } }, (res) => {
      this.status = res.statusCode ?? 0
      res.on('data', (b: Buffer) => {
        this.reads.push({ atMs: nowMs(), bytes: b })
        this.size += b.length
        this.poke()
      })
      res.on('end', () => {
        this.ended = true
        this.poke()
      })
      res.on('error', (err) => {
        this.error ??= err.message
        this.poke()
      })
      res.on('close', () => {
        this.closed = true
        this.poke()
      })
    })
    this.req.on('error', (err) => {
      this.error ??= err.message
      this.poke()
    })
    this.req.end(JSON.stringify(body))
  }

  /** Everything received so far, as text. */
  text(): string {
    return Buffer.concat(this.reads.map((r) => r.bytes)).toString('utf8')
  }

  /** Each complete SSE event with the arrival time of the read that completed it. */
  timedEvents(): Array<{ event: string; atMs: number }> {
    const out: Array<{ event: string; atMs: number }> = []
    let buf = ''
    for (const r of this.reads) {
      buf += r.bytes.toString('latin1')
      const parts = buf.split(/\r?\n\r?\n/)
      buf = parts.pop() ?? ''
      for (const event of parts) out.push({ event, atMs: r.atMs })
    }
    return out
  }

  /** Resolves true once `pred()` holds, false after `timeoutMs` (or once the stream ended or failed without it). */
  async until(pred: () => boolean, timeoutMs: number): Promise<boolean> {
    const deadline = nowMs() + timeoutMs
    for (;;) {
      if (pred()) return true
      if (this.ended || this.closed || this.error !== null) return pred()
      const left = deadline - nowMs()
      if (left <= 0) return false
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, left)
        this.waiters.push(() => {
          clearTimeout(t)
          resolve()
        })
      })
    }
  }

  /** Drop the connection, as a client that gave up does. */
  abort(): void {
    this.req.destroy()
  }

  private poke(): void {
    const w = this.waiters
    this.waiters = []
    for (const f of w) f()
  }
}

export function nowMs(): number {
  return Number(process.hrtime.bigint()) / 1e6
}

/** The SSE events in `text` (split on blank lines), the unfinished remainder left out. */
export function sseEvents(text: string): string[] {
  const parts = text.split(/\r?\n\r?\n/)
  parts.pop()
  return parts
}

/** Text of a data event's content (completions `text`, chat `content`/`reasoning_content`), '' for anything else. */
export function eventText(event: string): string {
  if (!event.startsWith('data: ') || event === 'data: [DONE]') return ''
  const o = JSON.parse(event.slice(6)) as { choices?: Array<{ text?: string; delta?: { content?: string; reasoning_content?: string } }> }
  const c = o.choices?.[0]
  return c === undefined ? '' : (c.text ?? '') + (c.delta?.content ?? '') + (c.delta?.reasoning_content ?? '')
}

/** A value of the simulator's /metrics (the first sample of `name`, optionally with a label filter). */
export async function metricValue(url: string, name: string, labels = ''): Promise<number> {
  const text = await (await fetch(`${url}/metrics`)).text()
  for (const line of text.split('\n')) {
    if (line.startsWith(`${name}{`) && line.includes(labels)) return Number(line.slice(line.lastIndexOf(' ') + 1))
  }
  return Number.NaN
}

/** Poll until metric `name` reads `want` (true) or `timeoutMs` passes (false). */
export async function metricReaches(url: string, name: string, want: number, timeoutMs: number, labels = ''): Promise<boolean> {
  const deadline = nowMs() + timeoutMs
  for (;;) {
    if ((await metricValue(url, name, labels)) === want) return true
    if (nowMs() > deadline) return false
    await new Promise((r) => setTimeout(r, 10))
  }
}
