import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { SseParser } from '../../src/client/sse-parser.js'

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
})
