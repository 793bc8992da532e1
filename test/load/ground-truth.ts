/**
 * Compare what the client measured with what the stream server really did.
 * The server (stream-server.mjs) sends each token's text as " <send ns>", so
 * every record carries its own ground truth in `text`.
 */
import type { RequestRecord } from '../../src/types.js'

/** Server send times (hrtime ns) of each content chunk of a record. */
export function sendTimesNs(r: RequestRecord): bigint[] {
  return r.text
    .trim()
    .split(/\s+/)
    .filter((s) => s.length > 0)
    .map((s) => BigInt(s))
}

/** Per gap: client ITL − server ITL, ms (signed). */
export function itlErrorsMs(records: readonly RequestRecord[]): number[] {
  const out: number[] = []
  for (const r of records) {
    if (r.error !== null) continue
    const sends = sendTimesNs(r)
    if (sends.length !== r.chunkArrivalsMs.length) throw new Error(`${r.id}: ${sends.length} send times for ${r.chunkArrivalsMs.length} arrivals`)
    for (let i = 1; i < sends.length; i++) {
      const client = (r.chunkArrivalsMs[i] as number) - (r.chunkArrivalsMs[i - 1] as number)
      const server = Number((sends[i] as bigint) - (sends[i - 1] as bigint)) / 1e6
      out.push(client - server)
    }
  }
  return out
}

/**
 * Per request: client TTFT minus the server's own TTFT (first token sent −
 * request arrived), ms — the cost of the network path and of the client.
 */
export function ttftOverheadsMs(records: readonly RequestRecord[], arrivalNsById: ReadonlyMap<string, bigint>): number[] {
  const out: number[] = []
  for (const r of records) {
    const arrival = arrivalNsById.get(r.id)
    if (r.error !== null || r.ttftMs === null || arrival === undefined) continue
    const first = sendTimesNs(r)[0] as bigint
    out.push(r.ttftMs - Number(first - arrival) / 1e6)
  }
  return out
}

/** Nearest-rank percentile of |values|, ms. */
export function absPercentile(values: readonly number[], p: number): number {
  const a = values.map(Math.abs).sort((x, y) => x - y)
  if (a.length === 0) return NaN
  return a[Math.min(a.length - 1, Math.max(0, Math.ceil((p / 100) * a.length) - 1))] as number
}

/** Nearest-rank percentile of signed values, ms. */
export function signedPercentile(values: readonly number[], p: number): number {
  const a = [...values].sort((x, y) => x - y)
  if (a.length === 0) return NaN
  return a[Math.min(a.length - 1, Math.max(0, Math.ceil((p / 100) * a.length) - 1))] as number
}

/**
 * Per request, the two halves of the TTFT overhead, ms: request path (server
 * arrival − client send: network, the server's HTTP front end and its queue
 * when requests arrive together) and response path (client arrival of the first
 * token − server send: network and the client's own read and timestamp).
 */
export function ttftPathsMs(
  records: readonly RequestRecord[],
  arrivalNsById: ReadonlyMap<string, bigint>,
  epochNs: bigint,
): { requestPath: number[]; responsePath: number[] } {
  const requestPath: number[] = []
  const responsePath: number[] = []
  for (const r of records) {
    const arrival = arrivalNsById.get(r.id)
    if (r.error !== null || r.ttftMs === null || arrival === undefined) continue
    const sentNs = epochNs + BigInt(Math.round(r.startMs * 1e6))
    requestPath.push(Number(arrival - sentNs) / 1e6)
    responsePath.push(Number(sentNs + BigInt(Math.round(r.ttftMs * 1e6)) - (sendTimesNs(r)[0] as bigint)) / 1e6)
  }
  return { requestPath, responsePath }
}
