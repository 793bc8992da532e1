/**
 * Whether a merged run's shards kept one schedule (docs/validity.md, `shards_unaligned`). Pure.
 *
 * A merged run describes C streams on the server only while every shard's streams were there. Each
 * shard starts its warmup at its slot's start and its measured requests at the slot's measure
 * instant (plan/shard.ts); what can move them apart is the timer that wakes a shard (a millisecond
 * or two, more on a busy host), a shard that began late because its previous run overran its slot,
 * and the hosts' clocks. So the bound on the spread of the starts and of the measured starts is
 * ALIGN_MS plus what the clocks may hide: on one host (one kernel boot id) nothing; across hosts,
 * the two largest uncertainties of their measured offsets to the time server. A host whose offset
 * was not measured leaves the spread unprovable, and the run unaligned.
 *
 * That bound holds the measured starts. The warmup starts may spread a little more: a warmup that
 * began late still ends before the measure instant (else the measured start shows it), so they may
 * add a tenth of the slot's warmup window.
 *
 * The ends are looser by nature: a closed loop drains as its last requests finish, so shards end
 * up to about one request apart even when perfectly aligned (one client drains the same way). Their
 * bound adds the run's p99 E2EL.
 */
import { WARMUP_SHARE } from '../plan/shard.js'
import type { HostClock, ShardAlignment, ValidityIssue } from '../types.js'

/** The timer's share of the start bound, ms: a shard wakes this close to its instant on a loaded host. */
export const ALIGN_MS = 25

/** One shard's part of a run on the common clock (ms from the run's common epoch). */
export interface PartTimes {
  index: number
  /** Its host: shards with the same key share one clock (the kernel's boot id, else the hostname). */
  hostKey: string
  clock: HostClock
  /** Warmup start (the slot's start as this shard met it). */
  startMs: number
  /** First measured send. */
  measureMs: number
  /** Last measured completion. */
  endMs: number
}

/** The clocks' share of the bound: 0 on one host; the two largest uncertainties across hosts; null when a host's offset is unknown. */
export function clockUncertainty(parts: readonly PartTimes[]): number | null {
  const byHost = new Map<string, number | null>()
  for (const p of parts) {
    const u = p.clock.offset_ms === null ? null : (p.clock.uncertainty_ms ?? null)
    const prev = byHost.get(p.hostKey)
    byHost.set(p.hostKey, prev === undefined ? u : prev === null || u === null ? null : Math.max(prev, u))
  }
  if (byHost.size <= 1) return 0
  const us = [...byHost.values()]
  if (us.some((u) => u === null)) return null
  const sorted = (us as number[]).sort((a, b) => b - a)
  return sorted[0]! + sorted[1]!
}

const spread = (xs: readonly number[]): number => (xs.length === 0 ? 0 : Math.max(...xs) - Math.min(...xs))

/** The run's alignment figures and, when a spread broke its bound (or the clocks could not be compared), the issue. */
export function judgeAlignment(
  parts: readonly PartTimes[],
  e2elP99Ms: number | null,
  slotS: number,
): { alignment: ShardAlignment; issue: ValidityIssue | null } {
  const u = clockUncertainty(parts)
  const bound = ALIGN_MS + (u ?? 0)
  const alignment: ShardAlignment = {
    start_spread_ms: spread(parts.map((p) => p.startMs)),
    measure_spread_ms: spread(parts.map((p) => p.measureMs)),
    end_spread_ms: spread(parts.map((p) => p.endMs)),
    bound_ms: bound,
    start_bound_ms: bound + slotS * 1000 * WARMUP_SHARE * 0.1,
    end_bound_ms: bound + (e2elP99Ms ?? 0),
    clock_uncertainty_ms: u,
  }
  const f = (x: number): string => `${x.toFixed(1)} ms`
  const which = (key: 'startMs' | 'measureMs' | 'endMs'): string => {
    const sorted = [...parts].sort((a, b) => a[key] - b[key])
    return `shard ${sorted[0]!.index} first, shard ${sorted.at(-1)!.index} last`
  }
  const why: string[] = []
  if (u === null) {
    const unmeasured = [...new Set(parts.filter((p) => p.clock.offset_ms === null).map((p) => p.index))]
    why.push(
      `the shards ran on ${new Set(parts.map((p) => p.hostKey)).size} hosts and the clock${unmeasured.length === 1 ? '' : 's'} of shard${unmeasured.length === 1 ? '' : 's'} ${unmeasured.join(', ')} ${unmeasured.length === 1 ? 'was' : 'were'} not compared with a time server (--time-server), so their alignment cannot be shown`,
    )
  }
  if (alignment.start_spread_ms > alignment.start_bound_ms)
    why.push(`their warmups started ${f(alignment.start_spread_ms)} apart (${which('startMs')}; bound ${f(alignment.start_bound_ms)})`)
  if (alignment.measure_spread_ms > bound)
    why.push(`their measured requests started ${f(alignment.measure_spread_ms)} apart (${which('measureMs')}; bound ${f(bound)})`)
  if (alignment.end_spread_ms > alignment.end_bound_ms)
    why.push(`they ended ${f(alignment.end_spread_ms)} apart (${which('endMs')}; bound ${f(alignment.end_bound_ms)}, one p99 E2EL over the start bound)`)
  if (why.length === 0) return { alignment, issue: null }
  return {
    alignment,
    issue: {
      code: 'shards_unaligned',
      detail: `The shards did not keep one schedule: ${why.join('; ')}. For part of the window the server carried fewer than the point's streams.`,
    },
  }
}
