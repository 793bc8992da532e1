/**
 * Byte-level Server-Sent Events parser for servegate's streaming client.
 * Pure: bytes in, completed event `data` payloads out. It keeps only what an
 * OpenAI-compatible stream needs (the `data` field); `event`, `id` and `retry`
 * lines are read and ignored, `:` lines are comments.
 *
 * Bytes may be split anywhere, including inside a UTF-8 character (a streaming
 * TextDecoder holds the partial sequence) and between the CR and LF of a CRLF
 * (remembered in `skipLf`).
 */
export class SseParser {
  private readonly decoder = new TextDecoder('utf-8')
  /** Text after the last line end seen (an incomplete line). */
  private rest = ''
  /** The previous text ended with CR: a leading LF in the next text belongs to it. */
  private skipLf = false
  /** Data lines of the event being built (joined with LF); null when none yet. */
  private data: string | null = null
  private out: string[] = []

  /** Feed received bytes; returns the data payloads of events completed by them. */
  push(bytes: Uint8Array): string[] {
    const text = this.decoder.decode(bytes, { stream: true })
    if (text.length > 0) this.feed(text)
    return this.take()
  }

  /**
   * The stream ended: returns what is still pending. Unlike a browser, a final
   * line without its line end and an event without its closing blank line are
   * delivered, because servers that end the stream abruptly still sent them.
   */
  end(): string[] {
    const tail = this.decoder.decode()
    if (tail.length > 0) this.feed(tail)
    if (this.rest.length > 0) {
      const line = this.rest
      this.rest = ''
      this.line(line, 0, line.length)
    }
    this.line('', 0, 0)
    return this.take()
  }

  private take(): string[] {
    if (this.out.length === 0) return EMPTY
    const out = this.out
    this.out = []
    return out
  }

  private feed(chunk: string): void {
    let text = chunk
    if (this.skipLf) {
      this.skipLf = false
      if (text.charCodeAt(0) === LF) text = text.slice(1)
    }
    const s = this.rest.length > 0 ? this.rest + text : text
    const n = s.length
    let start = 0
    let pos = 0
    // CR is rare in practice: search for it once, and again only when passed.
    let cr = s.indexOf('\r')
    let lf = s.indexOf('\n')
    while (cr !== -1 || lf !== -1) {
      let end: number
      if (cr !== -1 && (lf === -1 || cr < lf)) {
        end = cr
        if (cr + 1 < n) {
          pos = s.charCodeAt(cr + 1) === LF ? cr + 2 : cr + 1
        } else {
          pos = n
          this.skipLf = true
        }
      } else {
        end = lf
        pos = lf + 1
      }
      this.line(s, start, end)
      start = pos
      if (cr !== -1 && cr < pos) cr = s.indexOf('\r', pos)
      if (lf !== -1 && lf < pos) lf = s.indexOf('\n', pos)
    }
    this.rest = start < n ? s.slice(start) : ''
  }

  /** One complete line, s[start, end). */
  private line(s: string, start: number, end: number): void {
    if (start === end) {
      // Blank line: dispatch the event if it had any data line.
      if (this.data !== null) {
        this.out.push(this.data)
        this.data = null
      }
      return
    }
    // Only the `data` field matters; comments (`:`) and other fields are skipped.
    if (end - start < 4 || !s.startsWith('data', start)) return
    let v = start + 4
    if (v < end) {
      if (s.charCodeAt(v) !== COLON) return // a longer field name such as `dataset`
      v++
      if (v < end && s.charCodeAt(v) === SPACE) v++
    }
    const value = s.slice(v, end)
    this.data = this.data === null ? value : `${this.data}\n${value}`
  }
}

const LF = 10
const COLON = 58
const SPACE = 32
// Returned when a read completes no event (most reads of a token stream do
// complete one, but this saves an allocation when they do not); frozen so a
// caller cannot fill it.
const EMPTY = Object.freeze([]) as unknown as string[]
