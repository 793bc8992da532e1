/**
 * This host's clock offset against a time server, measured the SNTP way (RFC 4330, an NTPv4
 * client in mode 3): a sharded sweep runs its shards on several load hosts, and their records
 * can only be laid on one time line, and that alignment checked, when each host knows how far
 * its own clock is from a clock they share. A few queries are sent one after another and the
 * one with the shortest round trip is kept (its offset is the least spoiled by the network's
 * asymmetry), with the error bound SNTP can honestly claim for it.
 *
 * The packet work (encoding a query, decoding and vetting a reply, the offset formulas) is pure
 * and tested on its own; only measureClockOffset touches the network, and then only the one
 * address the server's name resolves to.
 */
import { createSocket, type Socket } from 'node:dgram'
import { lookup } from 'node:dns/promises'
import { isIP } from 'node:net'
import { describeError, UsageError } from '../errors.js'

/** One host's clock against a time server, as a sharded sweep records it. */
export interface ClockOffset {
  /** The time server asked, as `host:port` (`[ipv6]:port`). */
  server: string
  /** Server clock − local clock, in ms: positive when the local clock is behind. */
  offset_ms: number
  /**
   * How far offset_ms may be from the truth, in ms: half the round trip of the sample kept (no
   * client can tell how the trip split between the two ways) plus what the server says of its
   * own clock's error against the reference (root dispersion + root delay / 2).
   */
  uncertainty_ms: number
  /** Queries that got a usable reply; the offset is the one of them with the shortest round trip. */
  samples: number
  /** Local wall time (ISO 8601) when the kept sample's reply arrived: the instant the offset holds for. */
  measured_at: string
}

/** Why one query gave no sample; the failure message counts them by kind. */
export type SntpFailureKind = 'timeout' | 'kiss_of_death' | 'bad_reply' | 'unsynchronised' | 'socket_error'

/** A reply the client cannot use, with its kind and a short label for the failure message. */
export class SntpReplyError extends Error {
  override readonly name = 'SntpReplyError'
  constructor(
    readonly kind: 'kiss_of_death' | 'bad_reply' | 'unsynchronised',
    /** A few words, or the kiss code (`RATE`, `DENY`, …) of a kiss-o'-death. */
    readonly detail: string,
    message: string,
  ) {
    super(message)
  }
}

/** What a vetted server reply says, its timestamps as Unix ms (fractional: NTP's resolution is far below a ms). */
export interface SntpReply {
  /** Leap indicator: 0 none, 1 or 2 a leap second announced (3, unsynchronised, is rejected). */
  leap: number
  /** 3 or 4. */
  version: number
  /** 1 (a reference clock of its own) to 15: hops from a reference clock. */
  stratum: number
  /** Round trip from the server to its reference clock, ms (root delay). */
  rootDelayMs: number
  /** The server's own error bound against its reference clock, ms (root dispersion). */
  rootDispersionMs: number
  /** Server time when the query arrived (t2). */
  receiveMs: number
  /** Server time when the reply left (t3). */
  transmitMs: number
}

/** Seconds from the NTP epoch (1900-01-01) to the Unix epoch (1970-01-01). */
const NTP_UNIX_OFFSET_S = 2_208_988_800
const TWO_32 = 2 ** 32
/** The size of an NTP header without extension fields or a MAC: all a client needs. */
const NTP_PACKET_BYTES = 48
const MODE_CLIENT = 3
const MODE_SERVER = 4
const DEFAULT_PORT = 123
const DEFAULT_SAMPLES = 8
const DEFAULT_TIMEOUT_MS = 1000
/** The order the failure message counts kinds in. */
const KINDS: readonly SntpFailureKind[] = ['timeout', 'kiss_of_death', 'bad_reply', 'unsynchronised', 'socket_error']

/**
 * Clock offset and round-trip delay of one exchange (RFC 4330 section 5), all in ms: t1 the
 * query left (local clock), t2 it reached the server and t3 the reply left it (server clock),
 * t4 the reply arrived (local clock). The offset is exact when both ways took equally long;
 * otherwise it is off by at most half the delay.
 */
export function sntpOffset(t1: number, t2: number, t3: number, t4: number): { offsetMs: number; delayMs: number } {
  return { offsetMs: (t2 - t1 + (t3 - t4)) / 2, delayMs: t4 - t1 - (t3 - t2) }
}

/** Write Unix ms `unixMs` at `at` as an NTP 64-bit timestamp (32.32 seconds since 1900; the era wraps in 2036, as on the wire). */
function writeNtpTimestamp(buf: Buffer, at: number, unixMs: number): void {
  // Seconds and the fraction are split before scaling: Unix ms times 2^32 would lose the fraction's low bits in a double.
  let seconds = Math.floor(unixMs / 1000)
  let fraction = Math.round(((unixMs - seconds * 1000) / 1000) * TWO_32)
  if (fraction >= TWO_32) {
    seconds += 1
    fraction -= TWO_32
  }
  const ntpSeconds = (((seconds + NTP_UNIX_OFFSET_S) % TWO_32) + TWO_32) % TWO_32
  buf.writeUInt32BE(ntpSeconds, at)
  buf.writeUInt32BE(fraction, at + 4)
}

/**
 * The NTP timestamp at `at` as Unix ms, in the 136-year era nearest `nearUnixMs`: the wire
 * carries no era, and the nearest is right for any server within 68 years of the local clock
 * (so a reply still reads right after the 2036 wrap).
 */
function readNtpTimestamp(buf: Uint8Array, at: number, nearUnixMs: number): number {
  const view = Buffer.from(buf.buffer, buf.byteOffset, buf.byteLength)
  const seconds = view.readUInt32BE(at)
  const fraction = view.readUInt32BE(at + 4)
  const era = Math.round((Math.floor(nearUnixMs / 1000) + NTP_UNIX_OFFSET_S - seconds) / TWO_32)
  return (era * TWO_32 + seconds - NTP_UNIX_OFFSET_S) * 1000 + (fraction / TWO_32) * 1000
}

/**
 * A 48-byte SNTP query: leap indicator 0, version 4, mode 3 (client), every field zero but the
 * transmit timestamp, which is the local send time `sentMs` (Unix ms). The server echoes it back
 * as the reply's originate timestamp, which is how the reply is matched to this query.
 */
export function encodeSntpRequest(sentMs: number): Buffer {
  const buf = Buffer.alloc(NTP_PACKET_BYTES)
  buf[0] = (0 << 6) | (4 << 3) | MODE_CLIENT
  writeNtpTimestamp(buf, 40, sentMs)
  return buf
}

/** Whether `reply` echoes `request`'s transmit timestamp as its originate timestamp (bytes 24–31 against 40–47). */
function echoes(reply: Uint8Array, request: Uint8Array): boolean {
  if (reply.length < 32 || request.length < NTP_PACKET_BYTES) return false
  for (let i = 0; i < 8; i++) if (reply[24 + i] !== request[40 + i]) return false
  return true
}

/** A kiss code (the reference id of a stratum-0 reply): four ASCII letters, anything else shown as `?`. */
function kissCode(packet: Uint8Array): string {
  let code = ''
  for (let i = 12; i < 16; i++) {
    const c = packet[i] ?? 0
    if (c === 0) break
    code += c >= 0x21 && c <= 0x7e ? String.fromCharCode(c) : '?'
  }
  return code === '' ? '?' : code
}

/**
 * The reply to the query sent at `sentMs` (the value given to encodeSntpRequest), vetted as
 * RFC 4330 section 5 asks; throws SntpReplyError when it cannot be used:
 * - bad_reply: shorter than 48 bytes, not mode 4 (server), not version 3 or 4, an originate
 *   timestamp that is not the query's transmit timestamp (a stray reply to another query, or a
 *   spoofed one: checked before anything the reply claims is believed), a stratum over 16, or a
 *   zero transmit timestamp;
 * - kiss_of_death: stratum 0, the server telling the client to back off or go away, with its
 *   four-letter code from the reference id (`RATE`, `DENY`, `RSTR`, …);
 * - unsynchronised: leap indicator 3, or stratum 16 (NTPv4's "unsynchronised"): the server's
 *   clock is not set from anything, so its time says nothing.
 */
export function decodeSntpReply(packet: Uint8Array, sentMs: number): SntpReply {
  if (packet.length < NTP_PACKET_BYTES)
    throw new SntpReplyError('bad_reply', 'short', `the reply is ${packet.length} bytes; an NTP packet has at least ${NTP_PACKET_BYTES}`)
  const b0 = packet[0] ?? 0
  const leap = b0 >> 6
  const version = (b0 >> 3) & 7
  const mode = b0 & 7
  if (mode !== MODE_SERVER) throw new SntpReplyError('bad_reply', `mode ${mode}`, `the reply is mode ${mode}, not ${MODE_SERVER} (server)`)
  if (version !== 3 && version !== 4) throw new SntpReplyError('bad_reply', `version ${version}`, `the reply is NTP version ${version}, not 3 or 4`)
  if (!echoes(packet, encodeSntpRequest(sentMs)))
    throw new SntpReplyError(
      'bad_reply',
      'originate not echoed',
      "the reply's originate timestamp is not the query's transmit timestamp: a stray or spoofed reply",
    )
  const stratum = packet[1] ?? 0
  if (stratum === 0) {
    const code = kissCode(packet)
    throw new SntpReplyError('kiss_of_death', code, `the server sent a kiss-o'-death (${code}): it asks the client to stop or slow down`)
  }
  if (leap === 3) throw new SntpReplyError('unsynchronised', 'LI 3', 'the server says its clock is unsynchronised (leap indicator 3)')
  if (stratum === 16) throw new SntpReplyError('unsynchronised', 'stratum 16', 'the server says its clock is unsynchronised (stratum 16)')
  if (stratum > 16) throw new SntpReplyError('bad_reply', `stratum ${stratum}`, `the reply's stratum ${stratum} is not 1 to 15`)
  if (packet.slice(40, 48).every((x) => x === 0))
    throw new SntpReplyError('bad_reply', 'zero transmit', "the reply's transmit timestamp is zero: the server did not say when it answered")
  const view = Buffer.from(packet.buffer, packet.byteOffset, packet.byteLength)
  return {
    leap,
    version,
    stratum,
    // NTP short format: unsigned 16.16 fixed-point seconds.
    rootDelayMs: (view.readUInt32BE(4) / 65536) * 1000,
    rootDispersionMs: (view.readUInt32BE(8) / 65536) * 1000,
    receiveMs: readNtpTimestamp(packet, 32, sentMs),
    transmitMs: readNtpTimestamp(packet, 40, sentMs),
  }
}

/** `server`'s host and port: `host`, `host:port`, `[ipv6]`, `[ipv6]:port` or a bare IPv6 address (port 123 where none is named). */
export function parseTimeServer(server: string): { host: string; port: number } {
  const bad = (why: string): UsageError =>
    new UsageError(`time server ${JSON.stringify(server)}: ${why}`, 'Name the time server as host, host:port or [ipv6]:port (the port defaults to 123).')
  let host: string
  let port: string | undefined
  const bracketed = /^\[([^\]]*)\](?::([^:]*))?$/.exec(server)
  if (bracketed) {
    host = bracketed[1] ?? ''
    port = bracketed[2]
    if (isIP(host) !== 6) throw bad(`${JSON.stringify(host)} in brackets is not an IPv6 address`)
  } else if (server.split(':').length > 2) {
    // More than one colon and no brackets: an IPv6 address alone, since its port could not be told apart.
    host = server
    if (isIP(host) !== 6) throw bad('not an IPv6 address, and a port after an IPv6 address needs brackets ([ipv6]:port)')
  } else {
    const colon = server.indexOf(':')
    host = colon < 0 ? server : server.slice(0, colon)
    port = colon < 0 ? undefined : server.slice(colon + 1)
    if (!/^[A-Za-z0-9._-]+$/.test(host)) throw bad('not a host name or address')
  }
  if (port === undefined) return { host, port: DEFAULT_PORT }
  const n = /^\d{1,5}$/.test(port) ? Number(port) : NaN
  if (!(n >= 1 && n <= 65535)) throw bad(`port ${JSON.stringify(port)} is not 1 to 65535`)
  return { host, port: n }
}

/** `host:port`, with an IPv6 address in brackets. */
function hostPort(host: string, port: number): string {
  return isIP(host) === 6 ? `[${host}]:${port}` : `${host}:${port}`
}

/**
 * Local wall time in Unix ms with sub-ms resolution: Date.now() is whole ms, coarser than a
 * LAN round trip. It follows the system clock as it was when the process started plus the
 * monotonic clock since, so a step of the system clock after that is not seen.
 */
function wallNow(): number {
  return performance.timeOrigin + performance.now()
}

/** One exchange's outcome: its timestamps, or why it gave none. */
type Outcome = { ok: true; t1: number; t2: number; t3: number; t4: number; reply: SntpReply } | { ok: false; kind: SntpFailureKind; detail?: string }

/** What the socket delivers to the query waiting on it. */
type SocketEvent = { type: 'message'; msg: Buffer; atMs: number } | { type: 'error'; err: Error } | { type: 'abort' }

/**
 * This host's clock offset against the SNTP server `server` (`host`, `host:port` or
 * `[ipv6]:port`; port 123 by default), from `samples` queries (default 8) sent one after
 * another, each given `timeoutMs` (default 1000) to be answered. The reply with the shortest
 * round trip is kept. The name is resolved once and only that address is ever sent to (the UDP
 * socket is connected to it, so nothing from elsewhere is read either).
 *
 * Rejects with one line naming the server and counting each kind of failure (`timeout 8`,
 * `kiss_of_death 1 (RATE)`, …) when no query gave a usable reply; after a kiss-o'-death no
 * further query is sent, as RFC 4330 asks. Rejects with the signal's reason when `signal`
 * aborts. The socket is closed however it ends.
 */
export async function measureClockOffset(server: string, opts: { samples?: number; timeoutMs?: number; signal?: AbortSignal } = {}): Promise<ClockOffset> {
  const samples = opts.samples ?? DEFAULT_SAMPLES
  const timeoutMs = opts.timeoutMs ?? DEFAULT_TIMEOUT_MS
  if (!Number.isInteger(samples) || samples < 1) throw new UsageError(`SNTP samples must be a whole number of at least 1, not ${samples}`)
  if (!(Number.isFinite(timeoutMs) && timeoutMs > 0)) throw new UsageError(`SNTP timeout must be a positive number of ms, not ${timeoutMs}`)
  const { host, port } = parseTimeServer(server)
  const name = hostPort(host, port)
  const signal = opts.signal
  signal?.throwIfAborted()

  let address = host
  if (isIP(host) === 0) {
    try {
      address = (await lookup(host)).address
    } catch (err) {
      throw new UsageError(`time server ${name}: cannot resolve ${host}: ${describeError(err)}`)
    }
    signal?.throwIfAborted()
  }

  const socket = createSocket(isIP(address) === 6 ? 'udp6' : 'udp4')
  // The query waiting for the socket, if any; the listeners stay for the socket's life so that an
  // error between queries (a late ICMP "port unreachable") never goes unhandled.
  let waiting: ((event: SocketEvent) => void) | null = null
  socket.on('message', (msg: Buffer) => {
    const atMs = wallNow()
    waiting?.({ type: 'message', msg, atMs })
  })
  socket.on('error', (err: Error) => waiting?.({ type: 'error', err }))
  const onAbort = (): void => waiting?.({ type: 'abort' })
  signal?.addEventListener('abort', onAbort)
  try {
    await connect(socket, port, address, signal, (w) => (waiting = w))
    const sent: Buffer[] = []
    const good: Extract<Outcome, { ok: true }>[] = []
    const failures = new Map<SntpFailureKind, { count: number; details: Set<string> }>()
    let kissed = false
    for (let i = 0; i < samples && !kissed; i++) {
      signal?.throwIfAborted()
      const outcome = await exchange(socket, timeoutMs, sent, (w) => (waiting = w))
      if (outcome === 'aborted') throw signal?.reason ?? new Error('aborted')
      if (outcome.ok) {
        good.push(outcome)
        continue
      }
      const f = failures.get(outcome.kind) ?? { count: 0, details: new Set<string>() }
      f.count++
      if (outcome.detail !== undefined) f.details.add(outcome.detail)
      failures.set(outcome.kind, f)
      if (outcome.kind === 'kiss_of_death') kissed = true
    }
    if (good.length === 0) {
      const counts = KINDS.flatMap((k) => {
        const f = failures.get(k)
        if (f === undefined) return []
        return [`${k} ${f.count}${f.details.size > 0 ? ` (${[...f.details].join(', ')})` : ''}`]
      })
      const n = sent.length
      const stopped = kissed && n < samples ? ` (it sent a kiss-o'-death, so no more were sent)` : ''
      throw new UsageError(`time server ${name} gave no usable reply to ${n} ${n === 1 ? 'query' : 'queries'}${stopped}: ${counts.join(', ')}`)
    }
    // The shortest round trip leaves the least room for asymmetry; a negative delay (the server
    // claims to have held the query longer than the whole trip) counts as zero, not as a better sample.
    const delay = (s: Extract<Outcome, { ok: true }>): number => Math.max(0, sntpOffset(s.t1, s.t2, s.t3, s.t4).delayMs)
    const best = good.reduce((a, b) => (delay(b) < delay(a) ? b : a))
    const { offsetMs } = sntpOffset(best.t1, best.t2, best.t3, best.t4)
    return {
      server: name,
      offset_ms: offsetMs,
      uncertainty_ms: delay(best) / 2 + best.reply.rootDispersionMs + best.reply.rootDelayMs / 2,
      samples: good.length,
      measured_at: new Date(best.t4).toISOString(),
    }
  } finally {
    waiting = null
    signal?.removeEventListener('abort', onAbort)
    socket.close()
  }
}

/** Connect `socket` to the server's one address (sends go only there; replies are read only from there). */
function connect(
  socket: Socket,
  port: number,
  address: string,
  signal: AbortSignal | undefined,
  wait: (w: ((e: SocketEvent) => void) | null) => void,
): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    wait((e) => {
      if (e.type === 'message') return
      wait(null)
      reject(
        e.type === 'abort'
          ? (signal?.reason ?? new Error('aborted'))
          : new UsageError(`cannot open a UDP socket to ${hostPort(address, port)}: ${describeError(e.err)}`),
      )
    })
    socket.connect(port, address, () => {
      wait(null)
      resolve()
    })
  })
}

/**
 * One query and its reply, or why there was none by the deadline. A reply that does not echo
 * this query is not this query's answer: one echoing an earlier query (late, or duplicated) is
 * ignored, any other is remembered and the wait goes on, so the query fails as bad_reply rather
 * than timeout only if nothing better comes. `sent` gets this query's packet.
 */
function exchange(socket: Socket, timeoutMs: number, sent: Buffer[], wait: (w: ((e: SocketEvent) => void) | null) => void): Promise<Outcome | 'aborted'> {
  return new Promise((resolve) => {
    let stray = false
    let done = false
    const finish = (o: Outcome | 'aborted'): void => {
      // Once only: a send error reported after the reply must not clear the next query's wait.
      if (done) return
      done = true
      clearTimeout(timer)
      wait(null)
      resolve(o)
    }
    const timer = setTimeout(() => finish(stray ? { ok: false, kind: 'bad_reply', detail: 'originate not echoed' } : { ok: false, kind: 'timeout' }), timeoutMs)
    const t1 = wallNow()
    const request = encodeSntpRequest(t1)
    const earlier = sent.slice()
    sent.push(request)
    wait((e) => {
      if (e.type === 'abort') return finish('aborted')
      if (e.type === 'error') return finish({ ok: false, kind: 'socket_error', detail: socketErrorLabel(e.err) })
      if (e.msg.length >= 32 && !echoes(e.msg, request)) {
        if (!earlier.some((r) => echoes(e.msg, r))) stray = true
        return
      }
      try {
        const reply = decodeSntpReply(e.msg, t1)
        finish({ ok: true, t1, t2: reply.receiveMs, t3: reply.transmitMs, t4: e.atMs, reply })
      } catch (err) {
        if (err instanceof SntpReplyError) finish({ ok: false, kind: err.kind, detail: err.detail })
        else finish({ ok: false, kind: 'bad_reply', detail: describeError(err) })
      }
    })
    socket.send(request, (err) => {
      if (err) finish({ ok: false, kind: 'socket_error', detail: socketErrorLabel(err) })
    })
  })
}

/** An error's code (`ECONNREFUSED`, …) for the failure message, else its message. */
function socketErrorLabel(err: Error): string {
  const code = (err as { code?: unknown }).code
  return typeof code === 'string' ? code : describeError(err)
}
