/**
 * servegate's SSE parser (src/client/sse-parser.ts) against eventsource-parser
 * (v4, the parser most Node SSE clients use), on the client's hot path and on
 * one huge line.
 *
 * Hot path: a token stream as a vLLM-style server sends it: OpenAI completion
 * chunks of ~200 bytes each (`data: {...}` + blank line), delivered in
 * TCP-like reads of 1–4 events whose boundaries fall anywhere (inside an event,
 * between the CR and LF of a line end…), seeded. Each parser gets the reads
 * as the client receives them: bytes. servegate's parses bytes directly;
 * eventsource-parser takes text, so a streaming TextDecoder sits in front of
 * it (as in its own EventSourceParserStream). Figure: events/s, best of the
 * rounds, and the ratio.
 *
 * Huge line: one data line of 4, 8 and 16 MB with no line end until the last
 * read, pushed in 64 KiB reads (size caps raised so the whole line is parsed).
 * A linear parser takes ~4× as long for 16 MB as for 4 MB.
 *
 * Figures on the 2-core development machine (Node 22, busy neighbours, best
 * of 7 rounds of 200,000 events):
 *   hot path  servegate 3.26 M events/s, eventsource-parser 1.50 M events/s (2.17×)
 *   huge line 4/8/16 MB: servegate 2.3/4.4/9.1 ms (16/4 = 3.9×),
 *             eventsource-parser 6.4/13.3/30.1 ms (16/4 = 4.7×)
 * servegate's parser is kept: it is faster on the hot path (it decodes only
 * `data` values, looks at comment and field lines by their first bytes, and
 * needs no TextDecoder in front), linear on huge lines, and it counts quiet
 * lines for the client's overrun check.
 *
 *   npx tsx bench/sse-parser.ts [--events 200000] [--rounds 7]
 */
import { createParser } from 'eventsource-parser'
import { SseParser } from '../src/client/sse-parser.js'
import { createRng } from '../src/util/rng.js'

function arg(name: string, def: number): number {
  const i = process.argv.indexOf(`--${name}`)
  const v = i >= 0 ? Number(process.argv[i + 1]) : def
  if (!Number.isFinite(v) || v <= 0) throw new Error(`--${name} must be a positive number`)
  return v
}

const EVENTS = arg('events', 200_000)
const ROUNDS = arg('rounds', 7)

/** The token stream, cut into reads of 1–4 events' worth of bytes at seeded offsets. */
function tokenStreamReads(events: number, seed: number): { reads: Buffer[]; bytes: number } {
  const rng = createRng(seed)
  const parts: string[] = []
  for (let i = 0; i < events; i++) {
    const chunk = {
      id: 'cmpl-8f2b6c1e9d4a4c7f',
      object: 'text_completion',
      created: 1730000000,
      model: 'llama-3-8b',
      choices: [{ index: 0, text: ` tok${i % 1000}`, logprobs: null, finish_reason: null, stop_reason: null }],
    }
    parts.push(`data: ${JSON.stringify(chunk)}\r\n\r\n`.replace(/\r/g, i % 2 === 0 ? '' : '\r'))
  }
  const whole = Buffer.from(parts.join(''))
  const eventBytes = whole.length / events
  const reads: Buffer[] = []
  let pos = 0
  while (pos < whole.length) {
    const n = Math.max(1, Math.round(eventBytes * (1 + rng.next() * 3)))
    reads.push(Buffer.from(whole.subarray(pos, pos + n)))
    pos += n
  }
  return { reads, bytes: whole.length }
}

/** Parse with servegate's parser; returns events seen and elapsed ms. */
function runOurs(reads: readonly Buffer[], limits?: { maxLineBytes: number; maxEventBytes: number }): { events: number; ms: number } {
  const t0 = process.hrtime.bigint()
  const p = new SseParser(limits)
  let events = 0
  for (const r of reads) events += p.push(r).length
  events += p.end().length
  if (p.error !== null) throw new Error(p.error)
  return { events, ms: Number(process.hrtime.bigint() - t0) / 1e6 }
}

/** Parse with eventsource-parser behind a streaming TextDecoder. */
function runTheirs(reads: readonly Buffer[]): { events: number; ms: number } {
  const t0 = process.hrtime.bigint()
  let events = 0
  const decoder = new TextDecoder()
  const p = createParser({ onEvent: () => void events++ })
  for (const r of reads) p.feed(decoder.decode(r, { stream: true }))
  p.feed(`${decoder.decode()}\n\n`)
  return { events, ms: Number(process.hrtime.bigint() - t0) / 1e6 }
}

function best(run: () => { events: number; ms: number }, expectEvents: number): number {
  let min = Infinity
  for (let i = 0; i < ROUNDS; i++) {
    const r = run()
    if (r.events !== expectEvents) throw new Error(`parsed ${r.events} events, expected ${expectEvents}`)
    min = Math.min(min, r.ms)
  }
  return min
}

/** One `data:` line of `mb` MB with no line end until the last read, in 64 KiB reads. */
function hugeLineReads(mb: number): Buffer[] {
  const line = Buffer.alloc(mb * 1_000_000, 'x')
  line.write('data: ', 0)
  const reads: Buffer[] = []
  for (let pos = 0; pos < line.length; pos += 64 * 1024) reads.push(line.subarray(pos, pos + 64 * 1024))
  reads.push(Buffer.from('\n\n'))
  return reads
}

const { reads, bytes } = tokenStreamReads(EVENTS, 7)
// Warm both up (JIT) before measuring.
runOurs(reads)
runTheirs(reads)
const ours = best(() => runOurs(reads), EVENTS)
const theirs = best(() => runTheirs(reads), EVENTS)
const rate = (ms: number): string => `${((EVENTS / ms) * 1000 / 1e6).toFixed(2)} M events/s`
console.log(`hot path: ${EVENTS} events, ${(bytes / EVENTS).toFixed(0)} bytes each, ${reads.length} reads of 1–4 events`)
console.log(`  servegate           ${ours.toFixed(1)} ms  ${rate(ours)}`)
console.log(`  eventsource-parser  ${theirs.toFixed(1)} ms  ${rate(theirs)}`)
console.log(`  servegate / eventsource-parser throughput: ${(theirs / ours).toFixed(2)}×`)

const uncapped = { maxLineBytes: 64 << 20, maxEventBytes: 64 << 20 }
console.log('huge line (64 KiB reads, best of rounds):')
const figures: Record<string, number[]> = { servegate: [], 'eventsource-parser': [] }
for (const mb of [4, 8, 16]) {
  const r = hugeLineReads(mb)
  figures.servegate!.push(best(() => runOurs(r, uncapped), 1))
  figures['eventsource-parser']!.push(best(() => runTheirs(r), 1))
}
for (const [name, ms] of Object.entries(figures)) {
  console.log(`  ${name.padEnd(19)} 4 MB ${ms[0]!.toFixed(1)} ms, 8 MB ${ms[1]!.toFixed(1)} ms, 16 MB ${ms[2]!.toFixed(1)} ms (16/4 = ${(ms[2]! / ms[0]!).toFixed(1)}×)`)
}
