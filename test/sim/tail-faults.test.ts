import { Writable } from 'node:stream'
import { afterEach, describe, expect, it } from 'vitest'
import { FILLER_PIECE_BYTES, playFaultTail, type TailEnd } from '../../src/sim/fault-tail.js'
import { planGeneration } from '../../src/sim/generation-plan.js'
import { BUILTIN_PROFILES, startSim, type SimHandle, type SimOptions, type SimProfile } from '../../src/sim/index.js'
import { SseFormat } from '../../src/sim/sse-format.js'
import { completionBody } from './sim-client.js'
import { eventText, metricReaches, metricValue, RawStream, sseEvents } from './raw-stream.js'

let sim: SimHandle | null = null
const streams: RawStream[] = []
afterEach(async () => {
  for (const st of streams.splice(0)) st.abort()
  await sim?.close()
  sim = null
})

type Api = 'completions' | 'chat'
const PATH: Record<Api, string> = { completions: '/v1/completions', chat: '/v1/chat/completions' }
const RUNNING = 'vllm:num_requests_running'
const FINISHED = 'vllm:request_success_total'

function body(api: Api, maxTokens: number, includeUsage = true): Record<string, unknown> {
  if (api === 'completions') return completionBody(4, maxTokens, includeUsage ? {} : { stream_options: undefined })
  return {
    messages: [{ role: 'user', content: 'one two three four' }],
    max_tokens: maxTokens,
    ignore_eos: true,
    stream: true,
    ...(includeUsage ? { stream_options: { include_usage: true } } : {}),
  }
}

async function start(o: Partial<SimOptions>): Promise<SimHandle> {
  sim = await startSim({ ttftMs: 5, itlMs: 10, ...o })
  return sim
}

function open(s: SimHandle, api: Api, b: Record<string, unknown>): RawStream {
  const st = new RawStream(`${s.url}${PATH[api]}`, b)
  streams.push(st)
  return st
}

const tokenEvents = (st: RawStream): Array<{ event: string; atMs: number }> => st.timedEvents().filter((e) => eventText(e.event) !== '')

/** The client gives up: the simulator must let go of the request (no timers or sequences left behind). */
async function abortAndExpectReleased(s: SimHandle, st: RawStream, abortsBefore = 0): Promise<void> {
  expect(await metricValue(s.url, RUNNING)).toBe(1)
  st.abort()
  expect(await metricReaches(s.url, RUNNING, 0, 2000)).toBe(true)
  expect(await metricValue(s.url, FINISHED, 'finished_reason="abort"')).toBe(abortsBefore + 1)
}

describe.each<Api>(['completions', 'chat'])('tail faults on %s streams (deterministic mode)', (api) => {
  it('keepalive: after 3 tokens, only ": keep-alive" comments, every interval, never [DONE]', async () => {
    const s = await start({ faults: [{ kind: 'keepalive', rate: 1 }], faultIntervalMs: 20 })
    const st = open(s, api, body(api, 50))
    const comments = (): Array<{ event: string; atMs: number }> => st.timedEvents().filter((e) => e.event.startsWith(':'))
    expect(await st.until(() => comments().length >= 10, 2500)).toBe(true)
    const events = st.timedEvents()
    const toks = events.filter((e) => eventText(e.event) !== '')
    expect(toks.map((e) => eventText(e.event))).toEqual([' tok0', ' tok1', ' tok2'])
    const after = events.slice(events.indexOf(toks[2] as (typeof toks)[number]) + 1)
    expect(after.length).toBeGreaterThanOrEqual(10)
    expect(after.every((e) => e.event === ': keep-alive')).toBe(true)
    expect(st.text()).not.toContain('[DONE]')
    expect(st.ended).toBe(false)
    // Paced, not burst: comment n cannot arrive before TTFT + 2 ITL + n intervals after the send
    // (a busy host only makes it later; 0.9 allows the ~1 ms a Node timer may fire early).
    const c = comments()
    expect((c.at(-1)?.atMs ?? 0) - st.sentMs).toBeGreaterThanOrEqual(0.9 * (5 + 2 * 10 + c.length * 20))
    await abortAndExpectReleased(s, st)
  })

  it('overrun: tokens go on past max_tokens at the ITL, with no finish_reason, usage or [DONE]', async () => {
    const s = await start({ faults: [{ kind: 'overrun', rate: 1 }] })
    const st = open(s, api, body(api, 4))
    expect(await st.until(() => tokenEvents(st).length >= 16, 2500)).toBe(true)
    const toks = tokenEvents(st)
    expect(toks.slice(0, 16).map((e) => eventText(e.event))).toEqual(Array.from({ length: 16 }, (_, i) => ` tok${i}`))
    for (const e of st.timedEvents()) {
      if (e.event.startsWith('data: {')) expect(JSON.parse(e.event.slice(6))).toMatchObject({ choices: [{ finish_reason: null }] })
    }
    expect(st.text()).not.toMatch(/usage|\[DONE\]/)
    expect(st.ended).toBe(false)
    // The tokens past the plan keep the stream's own pace (10 ms), not a burst: token k is due TTFT + k ITL after the send.
    expect((toks[15]?.atMs ?? 0) - st.sentMs).toBeGreaterThanOrEqual(0.9 * (5 + 15 * 10))
    await abortAndExpectReleased(s, st)
  })

  it('trickle: after the first token, the rest of the stream arrives one byte per interval', async () => {
    const s = await start({ faults: [{ kind: 'trickle', rate: 1 }], faultIntervalMs: 20 })
    const st = open(s, api, body(api, 10))
    const firstTokenEnd = (): number => {
      const text = st.text()
      const i = text.indexOf('tok0')
      const end = i < 0 ? -1 : text.indexOf('\n\n', i)
      return end < 0 ? -1 : end + 2
    }
    expect(await st.until(() => firstTokenEnd() >= 0 && st.size - firstTokenEnd() >= 12, 2500)).toBe(true)
    const offset = firstTokenEnd()
    const trickled = st.text().slice(offset)
    // A valid stream goes on, just slowly: the next event's first bytes.
    expect(trickled.slice(0, 12)).toBe('data: {"id":')
    expect(tokenEvents(st)).toHaveLength(1)
    // Reads that start past the first token: one byte each (two coalesce only when the client lagged).
    let pos = 0
    const late: Array<{ atMs: number; n: number }> = []
    for (const r of st.reads) {
      if (pos >= offset) late.push({ atMs: r.atMs, n: r.bytes.length })
      pos += r.bytes.length
    }
    expect(late.length).toBeGreaterThanOrEqual(6)
    expect(late.filter((r) => r.n === 1).length).toBeGreaterThanOrEqual(late.length / 2)
    expect(Math.max(...late.map((r) => r.n))).toBeLessThanOrEqual(3)
    // No faster than one byte per interval: byte j after the first token cannot arrive before TTFT + j intervals.
    const bytes = late.reduce((a, r) => a + r.n, 0)
    expect((late.at(-1)?.atMs ?? 0) - st.sentMs).toBeGreaterThanOrEqual(0.9 * (5 + bytes * 20))
    expect(st.ended).toBe(false)
    await abortAndExpectReleased(s, st)
  })

  it('huge-line: after 5 tokens, one data: line of exactly hugeLineBytes with no line end, then the rest of the stream', async () => {
    const size = 8 * 1024 * 1024
    const s = await start({ faults: [{ kind: 'huge-line', rate: 1 }], itlMs: 5 })
    const st = open(s, api, body(api, 8))
    expect(await st.until(() => st.ended, 5000)).toBe(true)
    const text = st.text()
    const lines = text.split('\n')
    const huge = lines.filter((l) => l.length > 4096)
    expect(huge).toHaveLength(1)
    const line = huge[0] as string
    expect(line.length).toBe(size) // the default --huge-line-bytes, line end excluded
    expect(line.startsWith('data: {')).toBe(true)
    const events = sseEvents(text)
    const texts = events.map(eventText).filter((t) => t !== '')
    expect(texts.slice(0, 5)).toEqual([' tok0', ' tok1', ' tok2', ' tok3', ' tok4'])
    expect(texts[5]).toMatch(/^x+$/)
    expect(texts.slice(6)).toEqual([' tok5', ' tok6', ' tok7'])
    expect(events.at(-1)).toBe('data: [DONE]')
    expect(JSON.parse((events.at(-2) as string).slice(6))).toMatchObject({ usage: { completion_tokens: 8 } })
    expect(await metricReaches(s.url, RUNNING, 0, 1000)).toBe(true)
    expect(await metricValue(s.url, FINISHED, 'finished_reason="length"')).toBe(1)
  })
})

describe('tail faults: the client leaving and the end of a stream', () => {
  it('huge-line: a client that gives up mid-line releases the stream', async () => {
    const s = await start({ faults: [{ kind: 'huge-line', rate: 1 }], hugeLineBytes: 64 * 1024 * 1024 })
    const st = open(s, 'completions', body('completions', 8))
    expect(await st.until(() => st.size >= 1024 * 1024, 2500)).toBe(true)
    await abortAndExpectReleased(s, st)
  })

  it('trickle: a stream left to finish is a complete, valid stream', async () => {
    const s = await start({ faults: [{ kind: 'trickle', rate: 1 }], faultIntervalMs: 1 })
    const st = open(s, 'completions', body('completions', 2, false))
    expect(await st.until(() => st.ended, 5000)).toBe(true)
    const events = sseEvents(st.text())
    expect(events.map(eventText).filter((t) => t !== '')).toEqual([' tok0', ' tok1'])
    expect(JSON.parse((events.at(-2) as string).slice(6))).toMatchObject({ choices: [{ finish_reason: 'length' }] })
    expect(events.at(-1)).toBe('data: [DONE]')
    expect(st.reads.length).toBeGreaterThan(100) // byte by byte
    expect(await metricReaches(s.url, RUNNING, 0, 1000)).toBe(true)
    expect(await metricValue(s.url, FINISHED, 'finished_reason="length"')).toBe(1)
    expect(await metricValue(s.url, FINISHED, 'finished_reason="abort"')).toBe(0)
  })

  it('non-streamed requests are served normally', async () => {
    const s = await start({ faults: [{ kind: 'keepalive', rate: 1 }] })
    const r = await fetch(`${s.url}/v1/completions`, { method: 'POST', body: JSON.stringify({ prompt: [1, 2, 3], max_tokens: 6, ignore_eos: true }) })
    expect(await r.json()).toMatchObject({ usage: { completion_tokens: 6 } })
  })

  it('closing the simulator ends every endless stream', async () => {
    const s = await start({ faults: [{ kind: 'keepalive', rate: 1 }], faultIntervalMs: 10 })
    const sts = [open(s, 'completions', body('completions', 50)), open(s, 'chat', body('chat', 50))]
    for (const st of sts) expect(await st.until(() => st.text().includes(': keep-alive'), 2500)).toBe(true)
    await s.close()
    sim = null
    for (const st of sts) expect(await st.until(() => st.closed, 1000)).toBe(true)
    // Cut, not finished: an endless stream has no natural end.
    for (const st of sts) expect(st.ended).toBe(false)
  })
})

describe('tail faults in batching mode', () => {
  // One slot: if a faulted stream kept its batch slot, the next request would never be served.
  const oneSlot: SimProfile = { ...(BUILTIN_PROFILES.default as SimProfile), name: 'one-slot', maxRunning: 1, jitterCv: 0 }

  it.each(['keepalive', 'overrun'] as const)('%s frees its batch slot when it takes over, so the next request is served', async (kind) => {
    const faults = [{ kind, rate: 0.5 }]
    const seed = 11
    const ids = Array.from({ length: 40 }, (_, i) => `b${i}`)
    const faulted = (id: string): boolean => planGeneration({ maxTokens: 8, ignoreEos: true }, { seed, faults, stopEarlyAt: null }, id).fault === kind
    const badId = ids.find(faulted) as string
    const goodId = ids.find((id) => !faulted(id)) as string
    sim = await startSim({ profile: oneSlot, seed, faults, faultIntervalMs: 20, timeScale: 0.5 })
    const s = sim
    // The request id (x-request-id) seeds the fault draw, so the test picks which request it strikes.
    const withId = (id: string, maxTokens: number): RawStream => {
      const st = new RawStream(`${s.url}/v1/completions`, completionBody(4, maxTokens), { 'x-request-id': id })
      streams.push(st)
      return st
    }
    // Long enough that a keepalive stream still holding its slot would block the next request for seconds.
    const bad = withId(badId, kind === 'keepalive' ? 2000 : 8)
    const takenOver = (): boolean => (kind === 'keepalive' ? bad.text().includes(': keep-alive') : tokenEvents(bad).length > 10)
    expect(await bad.until(takenOver, 2500)).toBe(true)
    const good = withId(goodId, 8)
    expect(await good.until(() => good.ended, 2500)).toBe(true)
    const events = sseEvents(good.text())
    expect(events.map(eventText).filter((t) => t !== '')).toHaveLength(8)
    expect(events.at(-1)).toBe('data: [DONE]')
    expect(bad.ended).toBe(false)
    await abortAndExpectReleased(s, bad)
  })
})

describe('the huge line respects back-pressure', () => {
  it('queues at most one filler piece on a sink that stops draining, and stops when it closes', async () => {
    const held: Array<() => void> = []
    // A reader that never reads: each write's callback is held, so the buffer only grows by what the tail writes.
    const sink = new Writable({ highWaterMark: 16 * 1024, write: (_chunk, _enc, cb) => void held.push(cb) })
    const fmt = new SseFormat('completions', 'cmpl-x', 'm', 0, { eol: '\n' })
    const ends: TailEnd[] = []
    const events = { nextPlanned: () => null, nextExtra: () => fmt.content(' tok'), comment: () => fmt.comment(), hugeLineParts: () => fmt.contentParts() }
    playFaultTail('huge-line', sink, events, { intervalMs: 1, itlMs: 1, hugeLineBytes: 8 * 1024 * 1024 }, (h) => ends.push(h))
    await new Promise((r) => setTimeout(r, 100))
    const head = Buffer.byteLength(fmt.contentParts().head)
    expect(sink.writableLength).toBeGreaterThan(0)
    expect(sink.writableLength).toBeLessThanOrEqual(head + FILLER_PIECE_BYTES)
    // Let a few writes through: the tail writes the next piece only after 'drain'.
    for (let i = 0; i < 3; i++) {
      for (const cb of held.splice(0)) cb()
      await new Promise((r) => setTimeout(r, 10))
      expect(sink.writableLength).toBeLessThanOrEqual(FILLER_PIECE_BYTES)
    }
    sink.destroy()
    await new Promise((r) => setTimeout(r, 10))
    expect(ends).toEqual(['abort'])
  })
})
