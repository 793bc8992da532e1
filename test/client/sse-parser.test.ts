import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { MAX_SSE_LINE_BYTES, SseParser } from '../../src/client/sse-parser.js'

const enc = new TextEncoder()

/** Parse a whole byte stream, pushed in the given pieces. */
function parse(pieces: Uint8Array[]): string[] {
  const p = new SseParser()
  const out: string[] = []
  for (const b of pieces) out.push(...p.push(b))
  out.push(...p.end())
  return out
}

/** Split `bytes` at the given cut points (any byte offset, inside UTF-8 characters too). */
function splitAt(bytes: Uint8Array, cuts: number[]): Uint8Array[] {
  const points = [...new Set(cuts.map((c) => c % (bytes.length + 1)))].sort((a, b) => a - b)
  const out: Uint8Array[] = []
  let prev = 0
  for (const c of points) {
    out.push(bytes.subarray(prev, c))
    prev = c
  }
  out.push(bytes.subarray(prev))
  return out
}

describe('SseParser', () => {
  it('returns the data of each event completed by a read', () => {
    const p = new SseParser()
    expect(p.push(enc.encode('data: {"a":1}\n\ndata: {"b":2}\n\ndata: [DO'))).toEqual(['{"a":1}', '{"b":2}'])
    expect(p.push(enc.encode('NE]\n\n'))).toEqual(['[DONE]'])
    expect(p.end()).toEqual([])
  })

  it('accepts CRLF, CR and LF line ends, including a CRLF split between reads', () => {
    const p = new SseParser()
    expect(p.push(enc.encode('data: a\r\n\r\ndata: b\r\r'))).toEqual(['a', 'b'])
    expect(p.push(enc.encode('data: c\r'))).toEqual([])
    // The LF completing "data: c\r" must not count as the blank line.
    expect(p.push(enc.encode('\ndata: d\r\n'))).toEqual([])
    expect(p.push(enc.encode('\r\n'))).toEqual(['c\nd'])
  })

  it('skips comment lines and fields other than data', () => {
    expect(parse([enc.encode(': keep-alive\n\nevent: message\nid: 7\nretry: 10\ndata: x\n\n')])).toEqual(['x'])
  })

  it('joins multi-line data with LF and strips only one leading space', () => {
    expect(parse([enc.encode('data: one\ndata:  two\ndata:three\ndata\n\n')])).toEqual(['one\n two\nthree\n'])
  })

  it('ignores a field whose name only starts with data', () => {
    expect(parse([enc.encode('dataset: no\ndata: yes\n\n')])).toEqual(['yes'])
  })

  it('delivers a last event whose blank line (and even line end) never came', () => {
    expect(parse([enc.encode('data: a\n\ndata: b')])).toEqual(['a', 'b'])
    expect(parse([enc.encode('data: a\n')])).toEqual(['a'])
  })

  it('decodes a UTF-8 character split across reads', () => {
    const bytes = enc.encode('data: 日本🎉\n\n')
    const p = new SseParser()
    const out: string[] = []
    for (const b of bytes) out.push(...p.push(Uint8Array.of(b)))
    expect(out).toEqual(['日本🎉'])
  })

  it('does not emit an event for a blank line with no data', () => {
    expect(parse([enc.encode('\n\n: c\n\n')])).toEqual([])
  })

  // A stream is a list of events, each a list of data lines (no CR/LF inside),
  // with comments interleaved and any of the three line ends between lines.
  const lineText = fc.string({ unit: 'grapheme', maxLength: 12 }).map((s) => s.replace(/[\r\n]/g, ''))
  const event = fc.record({
    lines: fc.array(lineText, { minLength: 1, maxLength: 3 }),
    comment: fc.option(lineText, { nil: undefined }),
    eol: fc.constantFrom('\n', '\r\n', '\r'),
  })

  it('yields the same events for any split of the byte stream', () => {
    fc.assert(
      fc.property(fc.array(event, { maxLength: 8 }), fc.array(fc.nat(), { maxLength: 12 }), (events, cuts) => {
        let text = ''
        for (const e of events) {
          if (e.comment !== undefined) text += `:${e.comment}${e.eol}`
          for (const l of e.lines) text += `data: ${l}${e.eol}`
          text += e.eol
        }
        const bytes = enc.encode(text)
        const expected = events.map((e) => e.lines.join('\n'))
        expect(parse([bytes])).toEqual(expected)
        expect(parse(splitAt(bytes, cuts))).toEqual(expected)
      }),
      { numRuns: 500 },
    )
  })

  it('skips a UTF-8 byte order mark opening the stream, even split across reads', () => {
    const bytes = enc.encode('\uFEFFdata: a\n\n')
    expect(parse([bytes])).toEqual(['a'])
    expect(parse([bytes.subarray(0, 1), bytes.subarray(1, 2), bytes.subarray(2)])).toEqual(['a'])
  })

  it('refuses a line over the cap while it is still incomplete, and delivers nothing after', () => {
    const p = new SseParser({ maxLineBytes: 1000 })
    expect(p.push(enc.encode('data: ok\n\ndata: '))).toEqual(['ok'])
    expect(p.error).toBeNull()
    expect(p.push(new Uint8Array(600).fill(120))).toEqual([])
    expect(p.error).toBeNull()
    // Past 1000 bytes with no line end yet: refused now, not when the newline comes.
    expect(p.push(new Uint8Array(600).fill(120))).toEqual([])
    expect(p.error).toMatch(/^SSE line over 1000 bytes with no line end yet$/)
    expect(p.push(enc.encode('\n\ndata: late\n\n'))).toEqual([])
    expect(p.end()).toEqual([])
  })

  it('refuses a complete line over the cap that arrives in one read', () => {
    const p = new SseParser({ maxLineBytes: 100 })
    expect(p.push(enc.encode(`data: ${'y'.repeat(200)}\n\n`))).toEqual([])
    expect(p.error).toMatch(/SSE line of 206 bytes, over 100 bytes/)
  })

  it('refuses an event whose data lines add up to more than the event cap', () => {
    const p = new SseParser({ maxEventBytes: 1024 })
    const out: string[] = []
    for (let i = 0; i < 200 && p.error === null; i++) out.push(...p.push(enc.encode('data: 0123456789\n')))
    expect(out).toEqual([])
    expect(p.error).toBe('SSE event with over 1 KiB of data')
  })

  it('has a 1 MiB line cap by default', () => {
    const p = new SseParser()
    p.push(enc.encode('data: '))
    p.push(new Uint8Array(MAX_SSE_LINE_BYTES).fill(120))
    expect(p.error).toBe('SSE line over 1 MiB with no line end yet')
  })

  it('counts lines that complete no event since the last event', () => {
    const p = new SseParser()
    p.push(enc.encode(': keep-alive\n\n: keep-alive\n\nevent: x\nretry: 5\n'))
    expect(p.quietLines).toBe(6)
    expect(p.push(enc.encode('data: a\n\n'))).toEqual(['a'])
    expect(p.quietLines).toBe(0)
    p.push(enc.encode('\r\n\r\n'))
    expect(p.quietLines).toBe(2)
  })

  it('looks at each byte of a long line a bounded number of times, whatever its length (1 and 16 MB in 64 KB reads)', () => {
    // Before the parser resumed its scan, 4/8/16 MB took 136/593/2,622 ms: every read rescanned and
    // recopied the unfinished line (quadratic, ~128 looks a byte at 16 MB in 64 KB reads). The work
    // is counted, not timed, so a busy neighbour cannot fail it: the bytes each Buffer primitive the
    // parser uses touched (indexOf's scan, copy, the final decode), per byte of the line.
    const limits = { maxLineBytes: 64 << 20, maxEventBytes: 64 << 20 }
    const proto = Buffer.prototype as unknown as Record<string, (...args: never[]) => unknown>
    const counted = { bytes: 0 }
    const wrap = <A extends unknown[]>(name: string, touched: (self: Buffer, result: unknown, ...args: A) => number): (() => void) => {
      const original = proto[name]!
      proto[name] = function (this: Buffer, ...args: A) {
        const result = original.apply(this, args as unknown as never[])
        counted.bytes += touched(this, result, ...args)
        return result
      } as never
      return () => void (proto[name] = original)
    }
    const workPerByte = (mb: number): number => {
      const line = new Uint8Array(mb * 1_000_000).fill(120)
      line.set(enc.encode('data: '))
      const restore = [
        wrap('indexOf', (self, at, _value: unknown, from?: number) => ((at as number) === -1 ? self.length : (at as number) + 1) - (from ?? 0)),
        wrap('copy', (_self, _n, _target: unknown, _at?: number, start?: number, stop?: number) => (stop ?? 0) - (start ?? 0)),
        wrap('utf8Slice', (_self, _s, start?: number, stop?: number) => (stop ?? 0) - (start ?? 0)),
      ]
      counted.bytes = 0
      try {
        const p = new SseParser(limits)
        for (let pos = 0; pos < line.length; pos += 65536) p.push(line.subarray(pos, pos + 65536))
        const out = p.push(enc.encode('\n\n'))
        expect(out.length === 1 && out[0]!.length === line.length - 6).toBe(true)
      } finally {
        for (const r of restore) r()
      }
      return counted.bytes / line.length
    }
    const one = workPerByte(1)
    const sixteen = workPerByte(16)
    // Linear: two scans (LF, CR), one copy into the pending buffer plus the doubling's copies (under
    // one more), one decode: about 5 looks a byte at any length.
    expect(one).toBeGreaterThanOrEqual(3)
    expect(one).toBeLessThanOrEqual(6)
    expect(sixteen).toBeLessThanOrEqual(6)
  })
})
