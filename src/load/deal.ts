/**
 * Dealing a point's requests to its load threads: the concurrency split
 * near-evenly, each thread a share of the plan in proportion, interleaved so
 * every thread sees a spread of it (and, open loop, the arrival times of its
 * requests on the point's one schedule).
 */
import type { OpenLoopSettings, PlannedRequest } from '../types.js'
import { arrivalScheduleMs } from './arrivals.js'
import type { ShareInput } from './share.js'

/** Split `total` into `parts` near-equal integers (the first ones get the remainder). */
export function splitEven(total: number, parts: number): number[] {
  return Array.from({ length: parts }, (_, i) => Math.floor(total / parts) + (i < total % parts ? 1 : 0))
}

/** Deal `items` to shares in proportion to their concurrency, interleaved so each share gets a spread of the plan. */
export function dealByShare<T>(items: readonly T[], shares: readonly number[]): number[][] {
  const total = shares.reduce((a, b) => a + b, 0)
  const out = shares.map(() => [] as number[])
  const given = shares.map(() => 0)
  for (let i = 0; i < items.length; i++) {
    // Give item i to the share furthest behind its quota (ties: lowest index).
    let best = 0
    let bestDeficit = -Infinity
    for (let w = 0; w < shares.length; w++) {
      const deficit = ((i + 1) * (shares[w] as number)) / total - (given[w] as number)
      if (deficit > bestDeficit + 1e-12) {
        bestDeficit = deficit
        best = w
      }
    }
    out[best]?.push(i)
    given[best] = (given[best] as number) + 1
  }
  return out
}

/** What every thread's share has in common (its timeouts, clock and priority). */
export type ShareCommon = Pick<ShareInput, 'idleTimeoutMs' | 'deadlineMs' | 'epochNs' | 'priority'>

/**
 * One ShareInput per thread: `concurrency` split near-evenly over `threads`, the
 * warmup and measured requests dealt in proportion, and, open loop, each request's
 * due time on the point's schedule (the warmup's from seed + 1) and each thread's
 * part of the in-flight cap. `measuredIndex[w]`: the plan positions of thread w's
 * measured requests, to put the records back in plan order.
 */
export function dealShares(
  warmup: readonly PlannedRequest[],
  measured: readonly PlannedRequest[],
  concurrency: number,
  threads: number,
  open: (OpenLoopSettings & { seed: number }) | undefined,
  common: ShareCommon,
): { inputs: ShareInput[]; measuredIndex: number[][] } {
  const shares = splitEven(concurrency, threads)
  const warmIdx = dealByShare(warmup, shares)
  const measIdx = dealByShare(measured, shares)
  const measuredDue = open ? arrivalScheduleMs(measured.length, open.rate, open.burstiness, open.seed) : []
  const warmupDue = open ? arrivalScheduleMs(warmup.length, open.rate, open.burstiness, (open.seed + 1) >>> 0) : []
  // The cap is split between threads like the concurrency of a closed loop.
  const caps = open?.maxConcurrency != null ? splitEven(Math.max(threads, open.maxConcurrency), threads) : null
  const inputs: ShareInput[] = shares.map((c, w) => ({
    priority: common.priority,
    concurrency: c,
    ...(open
      ? {
          openLoop: {
            warmupDueMs: (warmIdx[w] ?? []).map((i) => warmupDue[i] as number),
            measuredDueMs: (measIdx[w] ?? []).map((i) => measuredDue[i] as number),
            maxConcurrency: caps === null ? null : (caps[w] as number),
          },
        }
      : {}),
    idleTimeoutMs: common.idleTimeoutMs,
    ...(common.deadlineMs !== undefined ? { deadlineMs: common.deadlineMs } : {}),
    epochNs: common.epochNs,
    warmup: (warmIdx[w] ?? []).map((i) => warmup[i] as PlannedRequest),
    measured: (measIdx[w] ?? []).map((i) => measured[i] as PlannedRequest),
  }))
  return { inputs, measuredIndex: measIdx }
}
