/**
 * One request in flight: engines hand it tokens with `emit(k)`; it writes the
 * chunks (or the final JSON), records ground truth and server metrics, and
 * plays its planned fault. Engines only read `done` and `stallUntilNs`.
 *
 * A tail fault (keepalive, overrun, trickle, huge-line) takes a stream over
 * after its first tokens: the sequence turns `done` (so the engine frees its
 * slot and KV at once) and hands the rest to fault-tail.ts. Those tail events
 * are the fault, not generation: they enter neither the trace nor the token
 * histograms, and the trace stays incomplete.
 */
import type { ServerResponse } from 'node:http'
import { errorObject, errorBody } from './api-error.js'
import { nowNs } from './clock.js'
import { playFaultTail, type TailEnd, type TailEvents } from './fault-tail.js'
import type { GenerationPlan } from './generation-plan.js'
import { isTailFault, type SimOptions, type TailFaultKind } from './options.js'
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
  'reasoningTokens' | 'usageSkew' | 'keepAliveComments' | 'crlf' | 'omitDone' | 'stallMs' | 'timeScale' | 'faultIntervalMs' | 'hugeLineBytes'
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

  /**
   * Deliver up to `k` newly generated tokens now; `gapNs` is the engine's
   * current gap between two chunks of a stream (wall ns), which paces the
   * content of a tail fault that takes over here.
   */
  emit(k: number, gapNs: number): void {
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
    const fault = this.plan.fault
    const tail = fault !== null && this.fmt !== null && isTailFault(fault) && this.generated + n >= this.plan.faultAt ? fault : null
    const t = nowNs()
    this.observe(t, n)
    const start = this.generated
    this.generated += n
    const final = this.generated === this.plan.target && tail === null
    if (this.fmt) this.writeChunk(t, start, n, final, pre)
    else if (final) this.writeJson(t)
    if (tail !== null) this.handOver(tail, k, gapNs)
    else if (final) this.end(this.plan.finishReason, t)
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
    let out = pre + this.chunkEvents(start, n, final, t)
    if (!final) {
      this.res.write(out)
      return
    }
    if (this.req.includeUsage) out += fmt.usage(this.req.promptTokens, this.reportedTokens())
    if (!this.opts.omitDone) out += fmt.done()
    this.res.end(out)
  }

  /** The events carrying tokens start..start+n (reasoning first); traced when `t` is given. */
  private chunkEvents(start: number, n: number, final: boolean, t: number | null): string {
    const fmt = this.fmt as SseFormat
    let out = ''
    if (this.chunks === 0) out += fmt.roleChunk()
    else if (this.opts.keepAliveComments && this.chunks % KEEPALIVE_EVERY === 0) out += fmt.comment()
    const r = Math.min(n, this.reasoningLeft)
    if (r > 0) {
      this.reasoningLeft -= r
      const text = tokensText(start, r)
      out += final && r === n ? fmt.lastContent(text, this.plan.finishReason, true) : fmt.reasoning(text)
      if (t !== null) this.trace.push(t, r)
      this.chunks++
    }
    if (n > r) {
      const text = tokensText(start + r, n - r)
      out += final ? fmt.lastContent(text, this.plan.finishReason, false) : fmt.content(text)
      if (t !== null) this.trace.push(t, n - r)
      this.chunks++
    }
    return out
  }

  /**
   * Let the engine go and play the tail fault on this stream until the client
   * leaves. Content events of the tail come at the engine's gap of the
   * moment (the ITL in deterministic mode, the last step's time in batching
   * mode), so the stream keeps the pace it had.
   */
  private handOver(kind: TailFaultKind, k: number, gapNs: number): void {
    this.faultFired = true
    this.done = true
    const m = this.metrics
    m.faultTails++
    const intervalMs = this.opts.faultIntervalMs * this.opts.timeScale
    const itlMs = gapNs > 0 ? gapNs / 1e6 : intervalMs
    const onEnd = (how: TailEnd): void => {
      m.faultTails--
      const reason = how === 'abort' ? 'abort' : this.plan.finishReason
      m.finished[reason] = (m.finished[reason] ?? 0) + 1
    }
    playFaultTail(kind, this.res, this.tailEvents(k), { intervalMs, itlMs, hugeLineBytes: this.opts.hugeLineBytes }, onEnd)
  }

  /** The rest of this stream for a tail fault, `k` tokens per content event. */
  private tailEvents(k: number): TailEvents {
    const fmt = this.fmt as SseFormat
    let extra = this.generated
    let usageLeft = this.req.includeUsage
    let doneLeft = !this.opts.omitDone
    return {
      nextPlanned: () => {
        if (this.generated < this.plan.target) {
          const start = this.generated
          const n = Math.min(k, this.plan.target - start)
          this.generated += n
          return this.chunkEvents(start, n, this.generated === this.plan.target, null)
        }
        if (usageLeft) {
          usageLeft = false
          return fmt.usage(this.req.promptTokens, this.reportedTokens())
        }
        if (doneLeft) {
          doneLeft = false
          return fmt.done()
        }
        return null
      },
      nextExtra: () => {
        const text = tokensText(extra, k)
        extra += k
        return fmt.content(text)
      },
      comment: () => fmt.comment(),
      hugeLineParts: () => fmt.contentParts(),
    }
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
            id,
            object: 'chat.completion',
            created,
            model: this.req.model,
            choices: [
              {
                index: 0,
                message: {
                  role: 'assistant',
                  content: tokensText(reasoningCount, this.generated - reasoningCount),
                  reasoning_content: reasoningCount > 0 ? tokensText(0, reasoningCount) : null,
                  tool_calls: [],
                },
                logprobs: null,
                finish_reason: this.plan.finishReason,
                stop_reason: null,
              },
            ],
            usage,
          }
        : {
            id,
            object: 'text_completion',
            created,
            model: this.req.model,
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
