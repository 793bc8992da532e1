/**
 * Property tests of the client's stream handling (parser + event application,
 * exactly as streamRequest runs them on each read): the way bytes are split
 * never changes a record, and no input, however broken or endless, throws or
 * keeps a request going: it ends, counted by kind.
 */
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { SseParser } from '../../src/client/sse-parser.js'
import { applyEnd, applyRead, newStreamState, textOf } from '../../src/client/stream-events.js'

const enc = new TextEncoder()

interface Outcome {
  count: number
  text: string
  events: number
  usage: number | null
  finish: string | null
  done: boolean
  error: string | null
  /** Reads consumed before the stream was abandoned (all of them when it was not). */
  reads: number
}

/** Feed `reads` as streamRequest does; the error kind is what the record would say (no_tokens included). */
function consume(reads: readonly Uint8Array[], maxTokens: number, parser = new SseParser()): Outcome {
  const state = newStreamState(maxTokens)
  let n = 0
  let ok = true
  for (const r of reads) {
    n++
    if (!applyRead(parser, state, r, BigInt(n), 0n)) {
      ok = false
      break
    }
  }
  if (ok) applyEnd(parser, state, BigInt(n), 0n)
  return {
    count: state.count,
    text: textOf(state),
    events: state.events,
    usage: state.usageCompletion,
    finish: state.finishReason,
    done: state.sawDone,
    error: state.error?.kind ?? (state.count === 0 ? 'no_tokens' : null),
    reads: n,
  }
}

/** Split `bytes` at the given cut points (any byte offset, inside UTF-8 characters and CRLFs too). */
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

// Token text: any characters, multi-byte and astral ones included.
const tokenText = fc.string({ unit: 'grapheme', minLength: 1, maxLength: 6 })
/** One data event and the content text it carries ('' for none). */
const frame: fc.Arbitrary<{ data: unknown; content: string }> = fc.oneof(
  tokenText.map((t) => ({ data: { choices: [{ index: 0, text: t, finish_reason: null }] }, content: t })),
  tokenText.map((t) => ({ data: { choices: [{ index: 0, delta: { content: t }, finish_reason: null }] }, content: t })),
  fc.constant({ data: { choices: [{ index: 0, delta: { role: 'assistant' } }] }, content: '' }),
  fc.constant({ data: { choices: [{ index: 0, text: '', finish_reason: 'length' }] }, content: '' }),
  fc.nat({ max: 64 }).map((n) => ({ data: { choices: [], usage: { prompt_tokens: 3, completion_tokens: n } }, content: '' })),
)
const comment = fc.option(
  fc.string({ maxLength: 10 }).map((s) => s.replace(/[\r\n]/g, ' ')),
  { nil: undefined },
)
const validStream = fc.record({
  frames: fc.array(fc.record({ frame, comment }), { maxLength: 24 }),
  eol: fc.constantFrom('\n', '\r\n'),
  done: fc.boolean(),
})
type ValidStream = typeof validStream extends fc.Arbitrary<infer T> ? T : never

function render(s: ValidStream): Uint8Array {
  let text = ''
  for (const f of s.frames) {
    if (f.comment !== undefined) text += `:${f.comment}${s.eol}`
    text += `data: ${JSON.stringify(f.frame.data)}${s.eol}${s.eol}`
  }
  if (s.done) text += `data: [DONE]${s.eol}${s.eol}`
  return enc.encode(text)
}

const ENDING_KINDS = ['malformed', 'stream_error', 'overrun', 'no_tokens', null]

describe('stream handling under any byte split and any input', () => {
  it('gives the same record for any split of a valid stream (LF or CRLF, comments, UTF-8 split anywhere)', () => {
    fc.assert(
      fc.property(validStream, fc.array(fc.nat(), { maxLength: 16 }), (s, cuts) => {
        const bytes = render(s)
        const whole = consume([bytes], 64)
        const { reads: _w, ...expected } = whole
        const { reads: _s, ...split } = consume(splitAt(bytes, cuts), 64)
        expect(split).toEqual(expected)
        const contents = s.frames.map((f) => f.frame.content).filter((c) => c !== '')
        expect(expected.count).toBe(contents.length)
        expect(expected.text).toBe(contents.join(''))
        expect(expected.done).toBe(s.done)
      }),
      { numRuns: 300 },
    )
  })

  it('never throws on random bytes, split anywhere, and ends with a counted kind', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 400 }), fc.array(fc.nat(), { maxLength: 8 }), (bytes, cuts) => {
        const out = consume(splitAt(bytes, cuts), 8)
        expect(ENDING_KINDS).toContain(out.error)
      }),
      { numRuns: 300 },
    )
  })

  it('never throws on a valid stream cut short anywhere, and keeps only what arrived', () => {
    fc.assert(
      fc.property(validStream, fc.nat(), (s, at) => {
        const bytes = render(s)
        const full = consume([bytes], 64)
        const cut = consume([bytes.subarray(0, at % (bytes.length + 1))], 64)
        expect(ENDING_KINDS).toContain(cut.error)
        expect(cut.count).toBeLessThanOrEqual(full.count)
      }),
      { numRuns: 200 },
    )
  })

  it('refuses a line over the cap as malformed, with or without its line end', () => {
    fc.assert(
      fc.property(fc.integer({ min: 4097, max: 20_000 }), fc.boolean(), fc.integer({ min: 1, max: 5000 }), (size, ended, readSize) => {
        const line = enc.encode(`data: ${'x'.repeat(size)}${ended ? '\n\n' : ''}`)
        const reads: Uint8Array[] = []
        for (let i = 0; i < line.length; i += readSize) reads.push(line.subarray(i, i + readSize))
        const out = consume(reads, 8, new SseParser({ maxLineBytes: 4096, maxEventBytes: 4096 }))
        expect(out.error).toBe('malformed')
        // Refused once past the cap: never more than one read after it.
        expect(out.reads).toBeLessThanOrEqual(Math.ceil(4096 / readSize) + 2)
      }),
      { numRuns: 100 },
    )
  })

  // Pieces of a stream that, repeated for ever, a server might send.
  const piece = fc.oneof(
    fc.constant(': keep-alive\n\n'),
    fc.constant('\n'),
    fc.constant('\r\n'),
    fc.constant('event: ping\n'),
    fc.constant('data: {"choices":[{"index":0,"delta":{"role":"assistant"}}]}\n\n'),
    fc.constant('data: {"choices":[],"usage":{"completion_tokens":1}}\n\n'),
    fc.constant('data: [DONE]\n\n'),
    fc.constant('data: {"choices":[{"index":0,"text":" tok"}]}\n\n'),
    fc.constant('data: {"choices":[{"index":0,"text":""}]}\n\n'),
    fc.constant('data: {"choices":[{"index":0,"text":" tok"}]}\n'),
    fc.constant('xxxxxxxx'),
    fc.uint8Array({ minLength: 1, maxLength: 24 }).map((b) => Buffer.from(b).toString('latin1')),
  )

  it('ends any endless stream within a bounded number of reads, as overrun, malformed or stream_error', () => {
    fc.assert(
      fc.property(fc.array(piece, { minLength: 1, maxLength: 6 }), (pieces) => {
        const pattern = Buffer.from(pieces.join(''), 'latin1')
        const parser = new SseParser({ maxLineBytes: 4096, maxEventBytes: 4096 })
        const state = newStreamState(8)
        // Bound: 1001 quiet events or lines, 24 chunks, or 4 KiB of one line or event — whichever comes first.
        const budget = 1001 + 4096 + 24
        let reads = 0
        while (reads < budget && applyRead(parser, state, pattern, BigInt(reads), 0n)) reads++
        expect(reads).toBeLessThan(budget)
        expect(['overrun', 'malformed', 'stream_error']).toContain(state.error?.kind)
      }),
      { numRuns: 150 },
    )
  })

  it('says which bound an overrun broke', () => {
    const repeatUntilEnd = (text: string, maxTokens: number): string => {
      const parser = new SseParser()
      const state = newStreamState(maxTokens)
      for (let i = 0; i < 100_000 && applyRead(parser, state, enc.encode(text), 0n, 0n); i++);
      return `${state.error?.kind}: ${state.error?.detail}`
    }
    expect(repeatUntilEnd('data: {"choices":[{"index":0,"text":" tok"}]}\n\n', 4)).toBe(
      'overrun: more than 20 content chunks for max_tokens 4 (the server ignores max_tokens)',
    )
    expect(repeatUntilEnd(': keep-alive\n\n', 4)).toMatch(/^overrun: 1000 lines in a row without an event \(comments such as ": keep-alive"/)
    expect(repeatUntilEnd('data: {"choices":[],"usage":null}\n\n', 4)).toBe('overrun: 1000 events in a row without content (0 content chunks so far)')
    expect(repeatUntilEnd(`data: {"choices":[{"index":0,"text":"${'y'.repeat(400)}"}]}\n\n`, 4)).toBe(
      'overrun: more than 1280 bytes of text in 4 content chunks (over 64 bytes a chunk)',
    )
  })
})
