/**
 * One request in flight: engines hand it tokens with `emit(k)`; it writes the
 * chunks (or the final JSON), records ground truth and server metrics, and
 * plays its planned fault. Engines only read `done` and `stallUntilNs`.
 */
import type { ServerResponse } from 'node:http'
import { errorObject, errorBody } from './api-error.js'
import { nowNs } from './clock.js'
import type { GenerationPlan } from './generation-plan.js'
import type { SimOptions } from './options.js'
import type { SimMetrics } from './prom-metrics.js'
import type { SimRequest } from './request.js'
import { SseFormat } from './sse-format.js'
import { tokensText } from './tokenizer.js'
import type { TraceRecorder } from './trace.js'

/** Every this many chunks a keep-alive comment precedes the chunk (quirk). */
const KEEPALIVE_EVERY = 8
/** The disconnect fault closes the socket this long after the last chunk, ms. */
const DISCONNECT_AFTER_MS = 20

export type SeqOptions = Pick<
  SimOptions,
  'reasoningTokens' | 'usageSkew' | 'keepAliveComments' | 'crlf' | 'omitDone' | 'stallMs' | 'timeScale'
>

export class SimSequence {
  /** Tokens generated so far. */
  generated = 0
  /** True once nothing more will be written (finished, failed or abandoned). */
  done = false
  /** The engine holds this stream until this time (nowNs scale) after a stall fault. */
  stallUntilNs = 0
  /** Chained prompt block hashes for the prefix cache (set by the server when it is on). */
  blockHashes: readonly number[] | null = null
  private chunks = 0
  private firstNs = -1
  private lastNs = -1
  private faultFired = false
  private reasoningLeft: number
  private readonly fmt: SseFormat | null

  constructor(
    readonly requestId: string,
    readonly req: SimRequest,
    readonly plan: GenerationPlan,
    private readonly res: ServerResponse,
    readonly trace: TraceRecorder,
    private readonly metrics: SimMetrics,
    private readonly opts: SeqOptions,
    created: number,
  ) {
    this.reasoningLeft = req.api === 'chat' ? Math.min(opts.reasoningTokens, plan.target) : 0
    const id = `${req.api === 'chat' ? 'chatcmpl' : 'cmpl'}-${requestId}`
    this.fmt = req.stream ? new SseFormat(req.api, id, req.model, created, { eol: opts.crlf ? '\r\n' : '\n' }) : null
    res.on('close', () => {
      if (!this.done) this.end('abort')
    })
  }

  /** Time the request reached the engine (nowNs scale). */
  get engineArrivalNs(): number {
    return this.trace.engineArrivalNs
  }

  /** Prompt length in tokens. */
  get promptLen(): number {
    return this.req.promptTokens
  }

  /** Tokens still to generate. */
  get remaining(): number {
    return this.plan.target - this.generated
  }

  /** Send the response head of a stream (before any token). */
  open(): void {
    if (!this.fmt) return
    this.res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache', 'x-request-id': this.requestId })
    if (this.opts.keepAliveComments) this.res.write(this.fmt.comment())
    else this.res.flushHeaders()
  }

  /** Deliver up to `k` newly generated tokens now. */
  emit(k: number): void {
    if (this.done) return
    const n = Math.min(k, this.remaining)
    if (n <= 0) return
    let pre = ''
    if (this.plan.fault !== null && !this.faultFired && this.generated >= this.plan.faultAt) {
      const kind = this.plan.fault
      if (kind === 'disconnect' || kind === 'stream-error') return this.strike(kind)
      if (kind === 'malformed') {
        this.faultFired = true
        if (!this.fmt) return this.strike(kind)
        pre = this.fmt.malformed()
      }
    }
    const t = nowNs()
    this.observe(t, n)
    const start = this.generated
    this.generated += n
    const final = this.generated === this.plan.target
    if (this.fmt) this.writeChunk(t, start, n, final, pre)
    else if (final) this.writeJson(t)
    if (final) this.end(this.plan.finishReason, t)
    else if (this.plan.fault === 'stall' && !this.faultFired && this.generated >= this.plan.faultAt) {
      this.faultFired = true
      this.stallUntilNs = t + this.opts.stallMs * this.opts.timeScale * 1e6
    }
  }

  private observe(t: number, n: number): void {
    const m = this.metrics
    if (this.firstNs < 0) {
      this.firstNs = t
      m.ttft.observe((t - this.engineArrivalNs) / 1e9)
      m.promptTokens += this.req.promptTokens
    } else {
      const gap = (t - this.lastNs) / 1e9
      m.itl.observe(gap)
      m.tpotGap.observe(gap)
    }
    this.lastNs = t
    m.generationTokens += n
  }

  private writeChunk(t: number, start: number, n: number, final: boolean, pre: string): void {
    const fmt = this.fmt as SseFormat
    let out = pre
    if (this.chunks === 0) out += fmt.roleChunk()
    else if (this.opts.keepAliveComments && this.chunks % KEEPALIVE_EVERY === 0) out += fmt.comment()
    const r = Math.min(n, this.reasoningLeft)
    if (r > 0) {
      this.reasoningLeft -= r
      const text = tokensText(start, r)
      out += final && r === n ? fmt.lastContent(text, this.plan.finishReason, true) : fmt.reasoning(text)
      this.trace.push(t, r)
      this.chunks++
    }
    if (n > r) {
      const text = tokensText(start + r, n - r)
      out += final ? fmt.lastContent(text, this.plan.finishReason, false) : fmt.content(text)
      this.trace.push(t, n - r)
      this.chunks++
    }
    if (!final) {
      this.res.write(out)
      return
    }
    if (this.req.includeUsage) out += fmt.usage(this.req.promptTokens, this.reportedTokens())
    if (!this.opts.omitDone) out += fmt.done()
    this.res.end(out)
  }

  private writeJson(t: number): void {
    const text = tokensText(0, this.generated)
    const reasoningCount = this.req.api === 'chat' ? Math.min(this.opts.reasoningTokens, this.generated) : 0
    const usage = {
      prompt_tokens: this.req.promptTokens,
      total_tokens: this.req.promptTokens + this.reportedTokens(),
      completion_tokens: this.reportedTokens(),
    }
    const id = `${this.req.api === 'chat' ? 'chatcmpl' : 'cmpl'}-${this.requestId}`
    const created = Math.floor(Date.now() / 1000)
    const body =
      this.req.api === 'chat'
        ? {
            id, object: 'chat.completion', created, model: this.req.model,
            choices: [{
              index: 0,
              message: {
                role: 'assistant',
                content: tokensText(reasoningCount, this.generated - reasoningCount),
                reasoning_content: reasoningCount > 0 ? tokensText(0, reasoningCount) : null,
                tool_calls: [],
              },
              logprobs: null, finish_reason: this.plan.finishReason, stop_reason: null,
            }],
            usage,
          }
        : {
            id, object: 'text_completion', created, model: this.req.model,
            choices: [{ index: 0, text, logprobs: null, finish_reason: this.plan.finishReason, stop_reason: null }],
            usage,
          }
    this.trace.push(t, this.generated)
    this.res.writeHead(200, { 'content-type': 'application/json', 'x-request-id': this.requestId })
    this.res.end(JSON.stringify(body))
  }

  /** usage.completion_tokens as reported (the usage-skew lie). */
  private reportedTokens(): number {
    return Math.round(this.generated * this.opts.usageSkew)
  }

  private strike(kind: 'disconnect' | 'stream-error' | 'malformed'): void {
    this.faultFired = true
    if (kind === 'disconnect') {
      // Drop the connection a moment after the last chunk, as a dying link would: chunks
      // already written still reach the client, then the socket closes mid-response.
      const socket = this.res.socket
      setTimeout(() => socket?.destroy(), DISCONNECT_AFTER_MS).unref()
      this.end('abort')
      return
    }
    const msg = `servegate sim: injected ${kind} fault after ${this.generated} tokens`
    if (this.fmt) {
      this.res.end(this.fmt.error(errorObject(500, msg)) + (this.opts.omitDone ? '' : this.fmt.done()))
    } else if (kind === 'malformed') {
      this.res.writeHead(200, { 'content-type': 'application/json', 'x-request-id': this.requestId })
      this.res.end('{"id":"cmpl-broken","choices":[{"text":')
    } else {
      this.res.writeHead(500, { 'content-type': 'application/json', 'x-request-id': this.requestId })
      this.res.end(errorBody(500, msg))
    }
    this.end('error')
  }

  private end(reason: string, t = nowNs()): void {
    this.done = true
    this.metrics.finished[reason] = (this.metrics.finished[reason] ?? 0) + 1
    if (reason !== 'stop' && reason !== 'length') return
    this.trace.complete = true
    const m = this.metrics
    m.e2e.observe((t - this.engineArrivalNs) / 1e9)
    if (this.generated > 1) m.tpotReq.observe((t - this.firstNs) / (this.generated - 1) / 1e9)
  }
}
