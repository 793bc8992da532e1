/**
 * The tail of a stream a tail fault took over (`keepalive`, `overrun`,
 * `trickle`, `huge-line`): played on a timer of its own, outside the engine,
 * so an endless stream never holds a batch slot and a hostile stream cannot
 * slow the others; stopped the moment the client goes away. Every write
 * respects back-pressure: nothing new is queued while the socket's buffer is
 * full, and the huge line is written from one shared filler Buffer, so a
 * client that stops reading costs the server one buffer's worth, not the
 * whole line.
 */
import type { TailFaultKind } from './options.js'

/** What the tail writes to (a ServerResponse in the server; any Writable in tests). */
export interface TailSink {
  write(chunk: string | Uint8Array): boolean
  end(chunk?: string): unknown
  readonly destroyed: boolean
  readonly writableEnded: boolean
  once(event: 'drain' | 'close', fn: () => void): unknown
  off(event: 'drain' | 'close', fn: () => void): unknown
}

/** The event texts of the rest of one stream, built by its sequence. */
export interface TailEvents {
  /**
   * The next event of the rest of the planned stream (content chunks, the
   * last one with its finish reason, usage, `[DONE]`), or null once all of it
   * was handed out.
   */
  nextPlanned(): string | null
  /** A content event carrying tokens beyond the planned length (`overrun`). */
  nextExtra(): string
  /** An SSE comment event (`: keep-alive`). */
  comment(): string
  /** A content event split around its text: `head` opens it with `data: `, `close` ends its JSON, `end` ends the event. */
  hugeLineParts(): { head: string; close: string; end: string }
}

export interface TailTiming {
  /** Wall ms between keep-alive comments (`keepalive`) and between trickled bytes (`trickle`). */
  intervalMs: number
  /** Wall ms between content events (`overrun`, and the rest of a `huge-line` stream). */
  itlMs: number
  /** Bytes of the huge `data:` line, line end excluded. */
  hugeLineBytes: number
}

/** How a tail ended: the client (or the server's shutdown) cut it, or the planned stream was written out. */
export type TailEnd = 'abort' | 'complete'

/** Size of the one filler Buffer every huge line is written from. */
export const FILLER_PIECE_BYTES = 64 * 1024
let filler: Buffer | null = null

function fillerPiece(): Buffer {
  // Shared by every stream: a written Buffer is only read by the socket, never changed.
  filler ??= Buffer.alloc(FILLER_PIECE_BYTES, 'x')
  return filler
}

/**
 * Play the tail of a taken-over stream on `sink` until the client leaves
 * (or, for `trickle` and `huge-line`, until the planned stream is written
 * out); `onEnd` is called exactly once.
 */
export function playFaultTail(kind: TailFaultKind, sink: TailSink, events: TailEvents, timing: TailTiming, onEnd: (how: TailEnd) => void): void {
  new FaultTail(kind, sink, events, timing, onEnd).start()
}

class FaultTail {
  private timer: NodeJS.Timeout | null = null
  private drainFn: (() => void) | null = null
  private stopped = false
  /** trickle: the event being written byte by byte, and the next byte's index. */
  private current: Buffer | null = null
  private pos = 0

  constructor(
    private readonly kind: TailFaultKind,
    private readonly sink: TailSink,
    private readonly events: TailEvents,
    private readonly timing: TailTiming,
    private readonly onEnd: (how: TailEnd) => void,
  ) {}

  start(): void {
    this.sink.once('close', this.onClose)
    if (this.kind === 'keepalive') this.after(this.timing.intervalMs, this.keepalive)
    else if (this.kind === 'overrun') this.after(this.timing.itlMs, this.overrun)
    else if (this.kind === 'trickle') this.after(this.timing.intervalMs, this.trickle)
    else this.after(this.timing.itlMs, this.hugeLine)
  }

  private readonly keepalive = (): void => {
    if (this.alive()) this.send(this.events.comment(), () => this.after(this.timing.intervalMs, this.keepalive))
  }

  private readonly overrun = (): void => {
    if (this.alive()) this.send(this.events.nextExtra(), () => this.after(this.timing.itlMs, this.overrun))
  }

  private readonly trickle = (): void => {
    if (!this.alive()) return
    if (this.current === null || this.pos >= this.current.length) {
      const next = this.events.nextPlanned()
      if (next === null) return this.finish()
      this.current = Buffer.from(next, 'utf8')
      this.pos = 0
    }
    const byte = this.current.subarray(this.pos, this.pos + 1)
    this.pos++
    this.send(byte, () => this.after(this.timing.intervalMs, this.trickle))
  }

  private readonly hugeLine = (): void => {
    if (!this.alive()) return
    const { head, close, end } = this.events.hugeLineParts()
    let left = Math.max(0, this.timing.hugeLineBytes - Buffer.byteLength(head) - Buffer.byteLength(close))
    const piece = fillerPiece()
    const writeFiller = (): void => {
      while (left > 0) {
        if (!this.alive()) return
        const n = Math.min(left, piece.length)
        left -= n
        // One piece at a time: wait for 'drain' before the next, so the socket's buffer holds at most one piece.
        if (!this.sink.write(n === piece.length ? piece : piece.subarray(0, n))) return this.onDrain(writeFiller)
      }
      if (this.alive()) this.send(close + end, () => this.after(this.timing.itlMs, this.planned))
    }
    this.send(head, writeFiller)
  }

  /** The rest of the planned stream, one event per ITL, then the end of the response. */
  private readonly planned = (): void => {
    if (!this.alive()) return
    const next = this.events.nextPlanned()
    if (next === null) return this.finish()
    this.send(next, () => this.after(this.timing.itlMs, this.planned))
  }

  /** Write `chunk`; run `then` at once, or once the socket's buffer drained. */
  private send(chunk: string | Uint8Array, then: () => void): void {
    if (this.sink.write(chunk)) then()
    else this.onDrain(then)
  }

  private onDrain(then: () => void): void {
    this.drainFn = () => {
      this.drainFn = null
      if (this.alive()) then()
    }
    this.sink.once('drain', this.drainFn)
  }

  private after(ms: number, fn: () => void): void {
    if (!this.alive()) return
    this.timer = setTimeout(() => {
      this.timer = null
      fn()
    }, ms)
  }

  /** False once stopped or once the sink can take no more (a destroyed socket not yet reported closed). */
  private alive(): boolean {
    if (this.stopped) return false
    if (this.sink.destroyed || this.sink.writableEnded) {
      this.stop('abort')
      return false
    }
    return true
  }

  private finish(): void {
    this.stop('complete')
    this.sink.end()
  }

  private readonly onClose = (): void => {
    this.stop('abort')
  }

  private stop(how: TailEnd): void {
    if (this.stopped) return
    this.stopped = true
    if (this.timer) clearTimeout(this.timer)
    this.timer = null
    if (this.drainFn) this.sink.off('drain', this.drainFn)
    this.drainFn = null
    this.sink.off('close', this.onClose)
    this.onEnd(how)
  }
}
