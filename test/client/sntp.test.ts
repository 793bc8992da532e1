// The SNTP clock-offset measurement: the packet arithmetic checked against values worked out by
// hand (and a timestamp writer of the test's own, so a shared bug cannot cancel out), each
// rule a reply is rejected by, and measurements against real fake time servers on loopback
// whose clocks are set a known distance from ours.
import { createSocket, type RemoteInfo, type Socket } from 'node:dgram'
import { lookup } from 'node:dns/promises'
import { afterEach, describe, expect, it } from 'vitest'
import { decodeSntpReply, encodeSntpRequest, measureClockOffset, parseTimeServer, SntpReplyError, sntpOffset } from '../../src/client/sntp.js'

const NTP_UNIX_OFFSET_S = 2208988800n

/** Unix ms as an NTP 64-bit timestamp, worked out in integers (the era wraps mod 2^64 as on the wire). */
function ntp64(unixMs: number): bigint {
  const whole = Math.floor(unixMs)
  const sub = unixMs - whole
  const fromWhole = ((BigInt(whole) + NTP_UNIX_OFFSET_S * 1000n) << 32n) / 1000n
  return (fromWhole + BigInt(Math.round((sub / 1000) * 2 ** 32))) & ((1n << 64n) - 1n)
}

/** The local wall clock measureClockOffset reads. */
const wallNow = (): number => performance.timeOrigin + performance.now()

interface ReplyFields {
  li?: number
  version?: number
  mode?: number
  stratum?: number
  refId?: string
  /** 16.16 seconds, as on the wire. */
  rootDelay?: number
  rootDispersion?: number
  /** Defaults to the query's transmit timestamp; a number is written as a Unix-ms timestamp. */
  originate?: number
  receiveMs?: number
  transmitMs?: number
  /** Write zero as the transmit timestamp. */
  zeroTransmit?: boolean
}

/** A server reply to `query` with the given fields (everything a real server would set). */
function reply(query: Buffer, f: ReplyFields): Buffer {
  const b = Buffer.alloc(48)
  b[0] = ((f.li ?? 0) << 6) | ((f.version ?? 4) << 3) | (f.mode ?? 4)
  b[1] = f.stratum ?? 2
  b[2] = 6
  b[3] = 0xec // precision 2^-20 s
  b.writeUInt32BE(f.rootDelay ?? 0, 4)
  b.writeUInt32BE(f.rootDispersion ?? 0, 8)
  b.write((f.refId ?? 'GPS').padEnd(4, '\0').slice(0, 4), 12, 'latin1')
  if (f.originate === undefined) query.copy(b, 24, 40, 48)
  else b.writeBigUInt64BE(ntp64(f.originate), 24)
  b.writeBigUInt64BE(ntp64(f.receiveMs ?? 0), 32)
  if (!f.zeroTransmit) b.writeBigUInt64BE(ntp64(f.transmitMs ?? 0), 40)
  return b
}

describe('SNTP arithmetic', () => {
  it('computes offset and delay by the RFC 4330 formulas', () => {
    // Sent at 1000 local; the server (60 ms ahead) got it at 1065 and answered at 1067; back at 1012 local.
    // Each way took 5 ms and the server held it 2 ms: delay 10, offset 60.
    expect(sntpOffset(1000, 1065, 1067, 1012)).toEqual({ offsetMs: 60, delayMs: 10 })
    // With the trip out 3 ms and back 9 ms the offset is off by half the asymmetry, (3 − 9) / 2 = −3.
    const r = sntpOffset(0, 3 + 60, 3 + 60 + 1, 3 + 1 + 9)
    expect(r.delayMs).toBe(12)
    expect(r.offsetMs).toBe(57)
  })

  it('encodes a 48-byte version-4 client query carrying the send time', () => {
    const q = encodeSntpRequest(0)
    expect(q.length).toBe(48)
    expect(q[0]).toBe(0x23) // LI 0, VN 4, mode 3
    expect(q.subarray(0, 40).every((x, i) => i === 0 || x === 0)).toBe(true)
    // The Unix epoch is 2 208 988 800 s after NTP's (0x83AA7E80), fraction 0.
    expect(q.readUInt32BE(40)).toBe(0x83aa7e80)
    expect(q.readUInt32BE(44)).toBe(0)
    // A quarter second is 2^30 in the fraction.
    const t = encodeSntpRequest(1_700_000_000_250)
    expect(t.readUInt32BE(40)).toBe(1_700_000_000 + 2_208_988_800)
    expect(t.readUInt32BE(44)).toBe(2 ** 30)
    // Sub-ms send times are kept (to a fraction of a µs), as the test's own integer arithmetic writes them.
    const sub = 1_700_000_000_123.375
    expect(encodeSntpRequest(sub).readBigUInt64BE(40)).toBe(ntp64(sub))
  })

  it('decodes a reply to its own query: timestamps to sub-ms, root delay and dispersion from 16.16 seconds', () => {
    const sentMs = 1_750_000_000_000.25
    const q = encodeSntpRequest(sentMs)
    const r = decodeSntpReply(
      reply(q, { stratum: 3, version: 3, rootDelay: 0x0000_8000, rootDispersion: 0x0001_4000, receiveMs: sentMs + 250.75, transmitMs: sentMs + 251.125 }),
      sentMs,
    )
    expect(r.stratum).toBe(3)
    expect(r.version).toBe(3)
    expect(r.leap).toBe(0)
    expect(r.rootDelayMs).toBe(500)
    expect(r.rootDispersionMs).toBe(1250)
    expect(r.receiveMs).toBeCloseTo(sentMs + 250.75, 3)
    expect(r.transmitMs).toBeCloseTo(sentMs + 251.125, 3)
  })

  it('reads timestamps past the 2036 era wrap in the era of the query', () => {
    const sentMs = Date.UTC(2040, 0, 1)
    const q = encodeSntpRequest(sentMs)
    // Era 1: the seconds field has wrapped past 2^32.
    expect(q.readUInt32BE(40)).toBe(sentMs / 1000 + 2_208_988_800 - 2 ** 32)
    const r = decodeSntpReply(reply(q, { receiveMs: sentMs + 5, transmitMs: sentMs + 6 }), sentMs)
    expect(r.receiveMs).toBeCloseTo(sentMs + 5, 3)
    expect(r.transmitMs).toBeCloseTo(sentMs + 6, 3)
  })

  const sentMs = 1_750_000_000_000
  const q = encodeSntpRequest(sentMs)
  const ok: ReplyFields = { receiveMs: sentMs + 1, transmitMs: sentMs + 2 }
  const rejected = (packet: Buffer): SntpReplyError => {
    try {
      decodeSntpReply(packet, sentMs)
    } catch (err) {
      expect(err).toBeInstanceOf(SntpReplyError)
      return err as SntpReplyError
    }
    throw new Error('the reply was accepted')
  }

  it.each<[string, Buffer, string, string | RegExp]>([
    ['shorter than 48 bytes', reply(q, ok).subarray(0, 47), 'bad_reply', /47 bytes/],
    ['mode 3 (a client query, e.g. our own echoed back)', reply(q, { ...ok, mode: 3 }), 'bad_reply', /mode 3/],
    ['mode 5 (broadcast)', reply(q, { ...ok, mode: 5 }), 'bad_reply', /mode 5/],
    ['version 2', reply(q, { ...ok, version: 2 }), 'bad_reply', /version 2/],
    ['version 5', reply(q, { ...ok, version: 5 }), 'bad_reply', /version 5/],
    ['an originate timestamp that is not the query’s', reply(q, { ...ok, originate: sentMs + 0.001 }), 'bad_reply', /stray or spoofed/],
    ['stratum 0: a kiss-o’-death, named by its code', reply(q, { ...ok, stratum: 0, refId: 'RATE' }), 'kiss_of_death', /RATE/],
    ['leap indicator 3', reply(q, { ...ok, li: 3 }), 'unsynchronised', /leap indicator 3/],
    ['stratum 16', reply(q, { ...ok, stratum: 16 }), 'unsynchronised', /stratum 16/],
    ['stratum over 16', reply(q, { ...ok, stratum: 200 }), 'bad_reply', /stratum 200/],
    ['a zero transmit timestamp', reply(q, { ...ok, zeroTransmit: true }), 'bad_reply', /transmit timestamp is zero/],
  ])('rejects a reply with %s', (_what, packet, kind, message) => {
    const err = rejected(packet)
    expect(err.kind).toBe(kind)
    expect(err.message).toMatch(message)
  })

  it('names the kiss code in the error detail, and checks the originate before believing a kiss-o’-death', () => {
    expect(rejected(reply(q, { ...ok, stratum: 0, refId: 'DENY' })).detail).toBe('DENY')
    // A spoofed kiss (not echoing the query) must not stop the client: it is a bad reply.
    expect(rejected(reply(q, { ...ok, stratum: 0, refId: 'DENY', originate: 0 })).kind).toBe('bad_reply')
    // Stratum 1..15, version 3 or 4, LI 0..2 are all accepted.
    for (const stratum of [1, 15]) expect(decodeSntpReply(reply(q, { ...ok, stratum }), sentMs).stratum).toBe(stratum)
    for (const li of [1, 2]) expect(decodeSntpReply(reply(q, { ...ok, li }), sentMs).leap).toBe(li)
  })

  it('parses host, host:port and [ipv6]:port, and refuses the rest in one line', () => {
    expect(parseTimeServer('ntp.example.org')).toEqual({ host: 'ntp.example.org', port: 123 })
    expect(parseTimeServer('10.0.0.5:1123')).toEqual({ host: '10.0.0.5', port: 1123 })
    expect(parseTimeServer('[::1]:40123')).toEqual({ host: '::1', port: 40123 })
    expect(parseTimeServer('[fe80::1]')).toEqual({ host: 'fe80::1', port: 123 })
    expect(parseTimeServer('2001:db8::7')).toEqual({ host: '2001:db8::7', port: 123 })
    for (const bad of ['', 'host:0', 'host:65536', 'host:x', 'host:', '[::1', '[nothost]:1', '2001:db8::7:123x', 'ntp://host', 'a b']) {
      expect(() => parseTimeServer(bad), bad).toThrow(/^time server .*: [^\n]+$/)
    }
  })
})

/** A fake time server on loopback; `answer` says what to send back to the nth query (0-based), or nothing. */
interface FakeTimeServer {
  address: string
  port: number
  /** Queries received. */
  queries: number
  close(): Promise<void>
}

type Answer = (query: Buffer, n: number, reply: (b: Buffer, delayMs?: number) => void) => void

const servers: FakeTimeServer[] = []
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()))
})

async function startTimeServer(answer: Answer, address = '127.0.0.1'): Promise<FakeTimeServer> {
  const socket: Socket = createSocket(address.includes(':') ? 'udp6' : 'udp4')
  const timers = new Set<NodeJS.Timeout>()
  const s: FakeTimeServer = {
    address,
    port: 0,
    queries: 0,
    close: () => {
      for (const t of timers) clearTimeout(t)
      return new Promise<void>((r) => socket.close(() => r()))
    },
  }
  socket.on('message', (msg: Buffer, from: RemoteInfo) => {
    const n = s.queries++
    answer(msg, n, (b, delayMs) => {
      if (delayMs === undefined) return socket.send(b, from.port, from.address)
      const t = setTimeout(() => {
        timers.delete(t)
        socket.send(b, from.port, from.address)
      }, delayMs)
      timers.add(t)
    })
  })
  await new Promise<void>((r) => socket.bind(0, address, r))
  s.port = socket.address().port
  servers.push(s)
  return s
}

/** A server whose clock is ours + `skewMs`, answering every query at once with the given fields. */
function skewed(skewMs: number, fields: ReplyFields = {}): Answer {
  return (q, _n, send) => {
    const t2 = wallNow() + skewMs
    send(reply(q, { ...fields, receiveMs: t2, transmitMs: wallNow() + skewMs }))
  }
}

/** Open UDP sockets of this process (the test's own servers included). */
const udpHandles = (): number => process.getActiveResourcesInfo().filter((r) => r === 'UDPWrap').length
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms))

/** The count of open UDP sockets once those closing have gone (a closed handle leaves the list a loop turn or so later). */
async function settledUdpHandles(expected?: number): Promise<number> {
  await sleep(10)
  const until = performance.now() + 300
  while (expected !== undefined && udpHandles() > expected && performance.now() < until) await sleep(5)
  return udpHandles()
}

const ONE_LINE = /^time server [^\n]+$/

describe('measureClockOffset against a fake time server on loopback', () => {
  it('measures a clock 250 ms ahead within its uncertainty, which counts the root delay and dispersion', async () => {
    // Root delay 2 ms and root dispersion 1 ms, as 16.16 seconds.
    const rootDelay = Math.round(0.002 * 65536)
    const rootDispersion = Math.round(0.001 * 65536)
    const srv = await startTimeServer(skewed(250, { rootDelay, rootDispersion }))
    const handles = await settledUdpHandles()
    const before = Date.now()
    const m = await measureClockOffset(`127.0.0.1:${srv.port}`)
    expect(await settledUdpHandles(handles)).toBe(handles)
    expect(srv.queries).toBe(8)
    expect(m.server).toBe(`127.0.0.1:${srv.port}`)
    expect(m.samples).toBe(8)
    const floor = ((rootDispersion + rootDelay / 2) / 65536) * 1000
    expect(m.uncertainty_ms).toBeGreaterThanOrEqual(floor)
    expect(m.uncertainty_ms).toBeLessThan(20)
    expect(Math.abs(m.offset_ms - 250)).toBeLessThanOrEqual(m.uncertainty_ms)
    const at = Date.parse(m.measured_at)
    expect(m.measured_at).toBe(new Date(at).toISOString())
    expect(at).toBeGreaterThanOrEqual(before - 5)
    expect(at).toBeLessThanOrEqual(Date.now() + 5)
  })

  it('measures a clock 1234.5 ms behind to well under a ms when the server claims no error of its own', async () => {
    const srv = await startTimeServer(skewed(-1234.5))
    const m = await measureClockOffset(`127.0.0.1:${srv.port}`, { samples: 4 })
    expect(m.samples).toBe(4)
    // The bound is then half the loopback round trip alone: the .5 must survive.
    expect(m.uncertainty_ms).toBeLessThan(20)
    expect(Math.abs(m.offset_ms + 1234.5)).toBeLessThanOrEqual(m.uncertainty_ms + 1e-6)
  })

  it('speaks udp6 to an [ipv6]:port server, and resolves a host name to the one address it then uses', async (ctx) => {
    let v6: FakeTimeServer
    try {
      v6 = await startTimeServer(skewed(40), '::1')
    } catch {
      return ctx.skip() // no IPv6 loopback on this host
    }
    const m = await measureClockOffset(`[::1]:${v6.port}`, { samples: 2 })
    expect(m.server).toBe(`[::1]:${v6.port}`)
    expect(Math.abs(m.offset_ms - 40)).toBeLessThanOrEqual(m.uncertainty_ms)

    // Whichever address localhost resolves to first is the one asked.
    const { address } = await lookup('localhost')
    const named = await startTimeServer(skewed(-70), address)
    const n = await measureClockOffset(`localhost:${named.port}`, { samples: 2 })
    expect(n.server).toBe(`localhost:${named.port}`)
    expect(Math.abs(n.offset_ms + 70)).toBeLessThanOrEqual(n.uncertainty_ms)
  })

  it('keeps the sample with the shortest round trip, from a server that answers only some queries', async () => {
    // Queries 0 and 4 go unanswered, 1 is answered unsynchronised, 2 after a 60 ms wait the
    // timestamps cannot see (an asymmetric trip: its offset is ~30 ms off, its bound over 30 ms,
    // which the bound below tells apart), 3 at once.
    const srv = await startTimeServer((q, n, send) => {
      const t = wallNow() + 500
      if (n === 1) send(reply(q, { li: 3, receiveMs: t, transmitMs: t }))
      if (n === 2) send(reply(q, { receiveMs: t, transmitMs: t }), 60)
      if (n === 3) send(reply(q, { receiveMs: t, transmitMs: t }))
    })
    const m = await measureClockOffset(`127.0.0.1:${srv.port}`, { samples: 5, timeoutMs: 100 })
    expect(srv.queries).toBe(5)
    expect(m.samples).toBe(2)
    expect(m.uncertainty_ms).toBeLessThan(20)
    expect(Math.abs(m.offset_ms - 500)).toBeLessThanOrEqual(m.uncertainty_ms)
  })

  it('rejects a server that never answers within samples × timeout, in one line, and closes its socket', async () => {
    const srv = await startTimeServer(() => {})
    const handles = await settledUdpHandles()
    const start = performance.now()
    const err = await measureClockOffset(`127.0.0.1:${srv.port}`, { samples: 3, timeoutMs: 100 }).catch((e: unknown) => e)
    const took = performance.now() - start
    expect(err).toBeInstanceOf(Error)
    expect((err as Error).message).toBe(`time server 127.0.0.1:${srv.port} gave no usable reply to 3 queries: timeout 3`)
    expect(took).toBeGreaterThanOrEqual(290)
    expect(took).toBeLessThan(3 * 100 + 250)
    expect(srv.queries).toBe(3)
    expect(await settledUdpHandles(handles)).toBe(handles)
  })

  it('stops at a kiss-o’-death and names its code', async () => {
    const srv = await startTimeServer((q, _n, send) => send(reply(q, { stratum: 0, refId: 'RATE', receiveMs: wallNow(), transmitMs: wallNow() })))
    const err = (await measureClockOffset(`127.0.0.1:${srv.port}`, { samples: 4, timeoutMs: 100 }).catch((e: unknown) => e)) as Error
    expect(err.message).toMatch(ONE_LINE)
    expect(err.message).toMatch(/kiss_of_death 1 \(RATE\)/)
    // Told to slow down, the client asks no more.
    expect(srv.queries).toBe(1)
  })

  it('rejects replies that do not echo the query as bad_reply, and ignores a late answer to an earlier query', async () => {
    const wrong = await startTimeServer((q, _n, send) => send(reply(q, { originate: wallNow() - 3, receiveMs: wallNow(), transmitMs: wallNow() })))
    const err = (await measureClockOffset(`127.0.0.1:${wrong.port}`, { samples: 3, timeoutMs: 100 }).catch((e: unknown) => e)) as Error
    expect(err.message).toBe(`time server 127.0.0.1:${wrong.port} gave no usable reply to 3 queries: bad_reply 3 (originate not echoed)`)

    // The first query's answer comes 150 ms late, while the second waits: not a stray, just late.
    const late = await startTimeServer((q, n, send) => {
      if (n === 0) send(reply(q, { receiveMs: wallNow(), transmitMs: wallNow() }), 150)
    })
    const lateErr = (await measureClockOffset(`127.0.0.1:${late.port}`, { samples: 2, timeoutMs: 100 }).catch((e: unknown) => e)) as Error
    expect(lateErr.message).toBe(`time server 127.0.0.1:${late.port} gave no usable reply to 2 queries: timeout 2`)
  })

  it('counts mixed failures by kind, socket errors included', async () => {
    const srv = await startTimeServer((q, n, send) => {
      const t = wallNow()
      if (n === 1) send(reply(q, { li: 3, receiveMs: t, transmitMs: t }))
      if (n === 2) send(reply(q, { mode: 3, receiveMs: t, transmitMs: t }))
    })
    const err = (await measureClockOffset(`127.0.0.1:${srv.port}`, { samples: 3, timeoutMs: 100 }).catch((e: unknown) => e)) as Error
    expect(err.message).toBe(`time server 127.0.0.1:${srv.port} gave no usable reply to 3 queries: timeout 1, bad_reply 1 (mode 3), unsynchronised 1 (LI 3)`)

    // Nothing listens: loopback answers with ICMP port unreachable, which the connected socket reports.
    const gone = await startTimeServer(() => {})
    await gone.close()
    servers.splice(servers.indexOf(gone), 1)
    const refused = (await measureClockOffset(`127.0.0.1:${gone.port}`, { samples: 2, timeoutMs: 100 }).catch((e: unknown) => e)) as Error
    expect(refused.message).toMatch(ONE_LINE)
    expect(refused.message).toMatch(/gave no usable reply to 2 queries: socket_error 2 \(ECONNREFUSED\)$/)
  })

  it('stops at once on abort, with the signal’s reason, and closes its socket', async () => {
    const srv = await startTimeServer(() => {})
    const handles = await settledUdpHandles()
    const ac = new AbortController()
    setTimeout(() => ac.abort(new Error('sweep cancelled')), 50)
    const start = performance.now()
    const err = (await measureClockOffset(`127.0.0.1:${srv.port}`, { samples: 8, timeoutMs: 1000, signal: ac.signal }).catch((e: unknown) => e)) as Error
    expect(err.message).toBe('sweep cancelled')
    expect(performance.now() - start).toBeLessThan(500)
    expect(await settledUdpHandles(handles)).toBe(handles)
    // An already aborted signal sends nothing.
    await expect(measureClockOffset(`127.0.0.1:${srv.port}`, { signal: AbortSignal.abort(new Error('no')) })).rejects.toThrow('no')
    expect(srv.queries).toBe(1)
  })
})
