/**
 * Ground truth: the true send time of every chunk of every request, kept in
 * typed arrays (no per-token objects) and bounded to the most recent requests.
 */
import { toHrtimeNs } from './clock.js'

/** What really happened to one request, on the `process.hrtime.bigint()` clock. */
export interface TokenTrace {
  requestId: string
  /** When the request arrived at the HTTP server. */
  arrivalNs: bigint
  /** When it reached the engine clock (arrival + front delay). */
  engineArrivalNs: bigint
  /** Just before each token-carrying chunk (reasoning or content) was written. */
  chunkSendNs: bigint[]
  /** Tokens carried by each of those chunks. */
  tokensPerChunk: number[]
  promptTokens: number
  /** Tokens actually sent (true count, whatever usage reports). */
  completionTokens: number
  /** True once the response ended normally. */
  complete: boolean
  /** The fault injected into this request (`--fault`), or null for a clean one. */
  fault: string | null
}

/** The per-request recorder a sequence writes into (times on the nowNs scale). */
export class TraceRecorder {
  private sendNs: Float64Array
  private tokens: Uint32Array
  private n = 0
  completionTokens = 0
  complete = false
  fault: string | null = null
  engineArrivalNs: number

  constructor(
    readonly requestId: string,
    readonly arrivalNs: number,
    readonly promptTokens: number,
    expectedChunks: number,
  ) {
    this.engineArrivalNs = arrivalNs
    const cap = Math.max(4, expectedChunks + 2)
    this.sendNs = new Float64Array(cap)
    this.tokens = new Uint32Array(cap)
  }

  /** Record a chunk of `count` tokens about to be written at `atNs`. */
  push(atNs: number, count: number): void {
    if (this.n === this.sendNs.length) {
      const s = new Float64Array(this.n * 2)
      s.set(this.sendNs)
      this.sendNs = s
      const t = new Uint32Array(this.n * 2)
      t.set(this.tokens)
      this.tokens = t
    }
    this.sendNs[this.n] = atNs
    this.tokens[this.n] = count
    this.n++
    this.completionTokens += count
  }

  /** The public, bigint form. */
  toTrace(): TokenTrace {
    const chunkSendNs: bigint[] = new Array(this.n)
    const tokensPerChunk: number[] = new Array(this.n)
    for (let i = 0; i < this.n; i++) {
      chunkSendNs[i] = toHrtimeNs(this.sendNs[i] as number)
      tokensPerChunk[i] = this.tokens[i] as number
    }
    return {
      requestId: this.requestId,
      arrivalNs: toHrtimeNs(this.arrivalNs),
      engineArrivalNs: toHrtimeNs(this.engineArrivalNs),
      chunkSendNs,
      tokensPerChunk,
      promptTokens: this.promptTokens,
      completionTokens: this.completionTokens,
      complete: this.complete,
      fault: this.fault,
    }
  }
}

/** The most recent `limit` requests' recorders, by request id. */
export class TraceStore {
  private readonly byId = new Map<string, TraceRecorder>()

  constructor(private readonly limit: number) {}

  add(rec: TraceRecorder): void {
    this.byId.delete(rec.requestId)
    this.byId.set(rec.requestId, rec)
    if (this.byId.size > this.limit) {
      const oldest = this.byId.keys().next().value
      if (oldest !== undefined) this.byId.delete(oldest)
    }
  }

  get(requestId: string): TokenTrace | undefined {
    return this.byId.get(requestId)?.toTrace()
  }

  all(): TokenTrace[] {
    return [...this.byId.values()].map((r) => r.toTrace())
  }

  clear(): void {
    this.byId.clear()
  }
}

/** JSON form for GET /sim/trace/:id (nanoseconds as decimal strings). */
export function traceToJson(t: TokenTrace): string {
  return JSON.stringify({
    requestId: t.requestId,
    arrivalNs: t.arrivalNs.toString(),
    engineArrivalNs: t.engineArrivalNs.toString(),
    chunkSendNs: t.chunkSendNs.map((x) => x.toString()),
    tokensPerChunk: t.tokensPerChunk,
    promptTokens: t.promptTokens,
    completionTokens: t.completionTokens,
    complete: t.complete,
    fault: t.fault,
  })
}
