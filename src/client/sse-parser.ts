/**
 * Byte-level Server-Sent Events parser for servegate's streaming client.
 * Pure: bytes in, completed event `data` payloads out. It keeps only what an
 * OpenAI-compatible stream needs (the `data` field); `event`, `id` and `retry`
 * lines are read and ignored, `:` lines are comments.
 *
 * It works on bytes, not text: line ends (CR, LF, CRLF) are ASCII and never
 * occur inside a UTF-8 sequence, so each line is decoded once, whole, after it
 * is complete, and a character split between reads needs no decoder state.
 * Only a `data` value is ever decoded; comments and other fields are skipped
 * by looking at their first bytes.
 *
 * Linear in the bytes received: a read is scanned once (from where the last
 * line ended), and the unfinished tail of a line is appended to one growing
 * buffer, decoded once when its line end arrives. Rebuilding and rescanning that tail
 * on every read made a 16 MB line without a newline cost 2.6 s on the load
 * thread, against 0.14 s for 4 MB.
 *
 * Bounded: a line longer than `maxLineBytes` is an error as soon as the
 * unfinished tail passes the cap (the line end is not awaited), and so is an
 * event whose data lines add up to more than `maxEventBytes`. After an error
 * the parser delivers nothing more.
 */

/** Longest SSE line accepted (an OpenAI completion chunk is ~150 bytes; usage ~300). */
export const MAX_SSE_LINE_BYTES = 1 << 20
/** Most data one SSE event may carry, over all its `data` lines. */
const MAX_SSE_EVENT_BYTES = 1 << 20

export interface SseParserLimits {
  maxLineBytes?: number
  maxEventBytes?: number
}

export class SseParser {
  private readonly maxLine: number
  private readonly maxEvent: number
  /**
   * Unfinished line: the tails of earlier reads, copied into one buffer that
   * grows by doubling (every byte is copied O(1) times) and is reused from
   * line to line, so a line split between reads allocates nothing but its text.
   */
  private pending: Buffer = Buffer.allocUnsafe(PENDING_START)
  private pendingLen = 0
  /** The previous read ended with CR: a leading LF in the next read belongs to it. */
  private skipLf = false
  /** No line completed yet: a UTF-8 byte order mark may open the stream. */
  private first = true
  /** Data lines of the event being built (joined with LF); null when none yet. */
  private data: string | null = null
  private dataBytes = 0
  private out: string[] = []
  /**
   * Lines since the last dispatched event that dispatched nothing: comments
   * (`: keep-alive`), other fields, blank lines with no data before them.
   * A stream of these alone never ends by itself; the client bounds it.
   */
  quietLines = 0
  /** Set when the stream broke a size cap (one line, for a record's detail); nothing is delivered after it. */
  error: string | null = null

  constructor(limits: SseParserLimits = {}) {
    this.maxLine = limits.maxLineBytes ?? MAX_SSE_LINE_BYTES
    this.maxEvent = limits.maxEventBytes ?? MAX_SSE_EVENT_BYTES
  }

  /** Feed received bytes; returns the data payloads of events completed by them. */
  push(bytes: Uint8Array): string[] {
    if (this.error !== null || bytes.length === 0) return EMPTY
    const buf = Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)
    this.feed(buf)
    return this.take()
  }

  /**
   * The stream ended: returns what is still pending. Unlike a browser, a final
   * line without its line end and an event without its closing blank line are
   * delivered, because servers that end the stream abruptly still sent them.
   */
  end(): string[] {
    if (this.error !== null) return EMPTY
    this.skipLf = false
    if (this.pendingLen > 0) this.lineEnd(EMPTY_BUF, 0, 0)
    if (this.error === null) this.line(EMPTY_BUF, 0, 0)
    return this.take()
  }

  private take(): string[] {
    if (this.out.length === 0) return EMPTY
    const out = this.out
    this.out = []
    return out
  }

  private feed(buf: Buffer): void {
    const n = buf.length
    let pos = 0
    if (this.skipLf) {
      this.skipLf = false
      if (buf[0] === LF) pos = 1
    }
    // Each search starts where the last line ended and is repeated only once
    // passed, so every byte is looked at once. CR is rare in practice.
    let lf = buf.indexOf(LF, pos)
    let cr = buf.indexOf(CR, pos)
    while (lf !== -1 || cr !== -1) {
      let end: number
      let next: number
      if (cr !== -1 && (lf === -1 || cr < lf)) {
        end = cr
        if (cr + 1 < n) next = buf[cr + 1] === LF ? cr + 2 : cr + 1
        else {
          next = n
          this.skipLf = true
        }
      } else {
        end = lf
        next = lf + 1
      }
      this.lineEnd(buf, pos, end)
      if (this.error !== null) return
      pos = next
      if (lf !== -1 && lf < pos) {
        // Most often the next line is the blank one ending an event: no search needed.
        lf = buf[pos] === LF ? pos : buf.indexOf(LF, pos)
      }
      if (cr !== -1 && cr < pos) cr = buf.indexOf(CR, pos)
    }
    if (pos < n) {
      if (this.pendingLen + (n - pos) > this.maxLine) return this.fail(`SSE line over ${sizeLabel(this.maxLine)} with no line end yet`)
      // Copied: the caller may reuse its buffer after the read.
      this.append(buf, pos, n)
    }
  }

  /** A line ended at buf[end]; its start is the pending tail, if any, then buf[start, end). */
  private lineEnd(buf: Buffer, start: number, end: number): void {
    if (this.pendingLen === 0) {
      if (end - start > this.maxLine) return this.fail(`SSE line of ${end - start} bytes, over ${sizeLabel(this.maxLine)}`)
      this.line(buf, start, end)
      return
    }
    const total = this.pendingLen + (end - start)
    if (total > this.maxLine) return this.fail(`SSE line of ${total} bytes, over ${sizeLabel(this.maxLine)}`)
    this.append(buf, start, end)
    this.pendingLen = 0
    this.line(this.pending, 0, total)
    // A long line's buffer is not kept for the rest of the stream.
    if (this.pending.length > PENDING_KEEP) this.pending = Buffer.allocUnsafe(PENDING_START)
  }

  /** Copy buf[start, end) after the pending bytes. */
  private append(buf: Buffer, start: number, end: number): void {
    const need = this.pendingLen + (end - start)
    if (need > this.pending.length) {
      let size = Math.max(PENDING_START, this.pending.length * 2)
      while (size < need) size *= 2
      const grown = Buffer.allocUnsafe(size)
      this.pending.copy(grown, 0, 0, this.pendingLen)
      this.pending = grown
    }
    buf.copy(this.pending, this.pendingLen, start, end)
    this.pendingLen = need
  }

  /** One complete line, b[start, end). */
  private line(b: Buffer, start: number, end: number): void {
    if (this.first) {
      this.first = false
      if (end - start >= 3 && b[start] === 0xef && b[start + 1] === 0xbb && b[start + 2] === 0xbf) start += 3
    }
    if (start === end) {
      // Blank line: dispatch the event if it had any data line.
      if (this.data !== null) {
        this.out.push(this.data)
        this.data = null
        this.dataBytes = 0
        this.quietLines = 0
      } else this.quietLines++
      return
    }
    // Only the `data` field matters; comments (`:`) and other fields are skipped.
    if (end - start < 4 || b[start] !== D || b[start + 1] !== A || b[start + 2] !== T || b[start + 3] !== A) {
      this.quietLines++
      return
    }
    let v = start + 4
    if (v < end) {
      if (b[v] !== COLON) {
        // A longer field name such as `dataset`.
        this.quietLines++
        return
      }
      v++
      if (v < end && b[v] === SPACE) v++
    }
    this.dataBytes += end - v + 1
    if (this.dataBytes > this.maxEvent) return this.fail(`SSE event with over ${sizeLabel(this.maxEvent)} of data`)
    const value = (b as unknown as Utf8Slicer).utf8Slice(v, end)
    this.data = this.data === null ? value : `${this.data}\n${value}`
  }

  private fail(message: string): void {
    this.error = message
    this.pending = EMPTY_BUF
    this.pendingLen = 0
    this.data = null
    this.out = []
  }
}

/** `1 MiB`, `512 KiB`, or bytes. */
export function sizeLabel(bytes: number): string {
  if (bytes >= 1 << 20 && bytes % (1 << 20) === 0) return `${bytes / (1 << 20)} MiB`
  if (bytes >= 1024 && bytes % 1024 === 0) return `${bytes / 1024} KiB`
  return `${bytes} bytes`
}

/** Buffer's own UTF-8 decoder of a range, without toString's argument handling (Node ≥ 4). */
interface Utf8Slicer {
  utf8Slice(start: number, end: number): string
}

const LF = 10
const CR = 13
const COLON = 58
const SPACE = 32
const D = 100
const A = 97
const T = 116
const EMPTY_BUF = Buffer.alloc(0)
/** First size of the pending-line buffer (a few token events). */
const PENDING_START = 1024
/** Past this size, the pending-line buffer is dropped once its line is done. */
const PENDING_KEEP = 64 * 1024
// Returned when a read completes no event (most reads of a token stream do
// complete one, but this saves an allocation when they do not); frozen so a
// caller cannot fill it.
const EMPTY = Object.freeze([]) as unknown as string[]
