/**
 * The load client's headroom: how much more token traffic the client of this host could have
 * handled at the sweep's heaviest point before its own timestamps degrade. Pure.
 *
 * The capacity is measured, by the run itself: a load thread's event loop is busy in proportion
 * to the token events it handles (docs/validity.md measured 9–16 µs an event), and the
 * client_saturated rule says the client's timestamps cannot be trusted from an event-loop
 * utilisation of `clientEluMax` (0.5) on. So the events per second the client would handle at
 * that utilisation are the run's events/s × clientEluMax ÷ its utilisation, and the headroom is
 * their ratio: clientEluMax ÷ utilisation. Utilisation is the busiest load thread's, so the
 * figure is the conservative one where threads shared the work unevenly; fixed costs (timers,
 * collection) count as load, so at light load the capacity is understated, never overstated.
 * The other two signs of saturation (event-loop delay, in-flight) are not linear in the load and
 * stay with the validity rule.
 *
 * Under ×1.5 the client is close to the bound where a busier server or a noisier host tips a run
 * into client_saturated, and more load hosts would restore it: N hosts share the events, so N
 * with clientEluMax ÷ (utilisation ÷ N) ≥ 1.5.
 *
 * A merged sharded sweep's run carries the busiest thread of any shard and the events of all of
 * them (metrics/merge-shards.ts): its capacity is then the hosts' together, its headroom the
 * weakest host's, and the hosts that would restore ×1.5 count from the ones it had.
 */
import type { ClientHeadroom, PointResult, RunResult } from '../types.js'
import { DEFAULT_VALIDITY_THRESHOLDS } from './validity-thresholds.js'

/** Headroom below which the report says how many load hosts would restore it. */
export const HEADROOM_TARGET = 1.5

/**
 * Headroom at the run with the most token events a second over the sweep (the heaviest point's
 * heaviest repeat), from the runs whose client measured itself; null when none did (an imported
 * result, or a sweep with no finished run).
 */
export function clientHeadroom(points: readonly PointResult[], eluMax: number = DEFAULT_VALIDITY_THRESHOLDS.clientEluMax, hosts = 1): ClientHeadroom | null {
  let heaviest: { point: PointResult; run: RunResult; events: number; elu: number } | null = null
  for (const point of points) {
    for (const run of point.runs) {
      const c = run.client
      if (c === null || !(c.events_per_second > 0) || !(c.event_loop_utilization > 0)) continue
      if (heaviest === null || c.events_per_second > heaviest.events) heaviest = { point, run, events: c.events_per_second, elu: c.event_loop_utilization }
    }
  }
  if (heaviest === null) return null
  const headroom = eluMax / heaviest.elu
  return {
    input_len: heaviest.point.input_len,
    output_len: heaviest.point.output_len,
    concurrency: heaviest.point.concurrency,
    ...(heaviest.point.request_rate !== undefined ? { request_rate: heaviest.point.request_rate } : {}),
    repeat: heaviest.run.repeat,
    events_per_second: heaviest.events,
    event_loop_utilization: heaviest.elu,
    capacity_events_per_second: heaviest.events * headroom,
    headroom,
    load_hosts_needed: headroom < HEADROOM_TARGET ? Math.ceil((hosts * HEADROOM_TARGET) / headroom) : null,
    ...(hosts > 1 ? { load_hosts: hosts } : {}),
  }
}

/** The report's line: the headroom, where, against what, and what would restore it. */
export function headroomLine(h: ClientHeadroom | null): string {
  if (h === null) return 'Client headroom: not measured (no run recorded its load client).'
  const where = `${h.input_len}×${h.output_len} ${h.request_rate !== undefined ? `rate ${h.request_rate}` : `c=${h.concurrency}`}`
  const k = (n: number): string => (n >= 10_000 ? `${(n / 1000).toFixed(0)}k` : n >= 1000 ? `${(n / 1000).toFixed(1)}k` : n.toFixed(0))
  const who = h.load_hosts !== undefined && h.load_hosts > 1 ? `these ${h.load_hosts} load hosts handle` : 'this client handles'
  const base = `Client headroom: ×${h.headroom.toFixed(1)} at ${where}, its heaviest point (${k(h.events_per_second)} token events/s, against the ${k(h.capacity_events_per_second)} ${who} before its busiest load thread is ${Math.round(h.event_loop_utilization * h.headroom * 100)} % busy, where client_saturated fires)`
  if (h.load_hosts_needed === null) return `${base}.`
  return `${base}: under ×${HEADROOM_TARGET}, so a busier server or host would saturate it; ${h.load_hosts_needed} load hosts sharing the load would restore ×${HEADROOM_TARGET}.`
}
