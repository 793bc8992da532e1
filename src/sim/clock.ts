/**
 * The simulator's clock: monotonic nanoseconds as plain numbers (exact
 * integers for 104 days), read with `performance.now()` so a per-token reading
 * allocates no BigInt, and a single-timer waker that fires at absolute times.
 * Both `performance.now()` and `process.hrtime.bigint()` read the same
 * monotonic clock; ORIGIN_NS maps one onto the other.
 */
import { performance } from 'node:perf_hooks'

function calibrate(): bigint {
  // Bracket one performance.now() between two hrtime readings; the midpoint is within ~100 ns.
  let best: bigint | null = null
  let bestWidth = Number.POSITIVE_INFINITY
  for (let i = 0; i < 5; i++) {
    const a = process.hrtime.bigint()
    const p = performance.now()
    const b = process.hrtime.bigint()
    const width = Number(b - a)
    if (width < bestWidth) {
      bestWidth = width
      best = (a + b) / 2n - BigInt(Math.round(p * 1e6))
    }
  }
  return best as bigint
}

const ORIGIN_NS = calibrate()

/** Monotonic nanoseconds (process-relative; `toHrtimeNs` converts). */
export function nowNs(): number {
  return Math.round(performance.now() * 1e6)
}

/** Convert a `nowNs()` reading back to the `process.hrtime.bigint()` scale. */
export function toHrtimeNs(ns: number): bigint {
  return ORIGIN_NS + BigInt(Math.round(ns))
}

/**
 * Node timers run on a millisecond loop clock and can fire up to ~1.5 ms
 * early or late against hrtime. Work due within this slack of "now" runs at
 * once: re-arming for a sub-millisecond remainder would overshoot by more.
 */
export const WAKE_SLACK_NS = 300_000

/**
 * One `setTimeout` armed for the earliest absolute time anyone asked for.
 * The owner's `onWake(now)` does all due work and returns the next due time
 * (or null when idle). Scheduling by absolute time keeps long runs free of
 * drift: a late wake never pushes later deadlines back.
 */
export class Waker {
  private timer: NodeJS.Timeout | null = null
  private armedAtNs = Number.POSITIVE_INFINITY
  private closed = false

  constructor(private readonly onWake: (nowNs: number) => number | null) {}

  /** Make sure a wake happens at or before `dueNs` (nowNs scale). */
  request(dueNs: number): void {
    if (this.closed || dueNs >= this.armedAtNs) return
    if (this.timer) clearTimeout(this.timer)
    this.armedAtNs = dueNs
    const delayMs = (dueNs - nowNs()) / 1e6
    this.timer = setTimeout(this.fire, delayMs > 0 ? delayMs : 0)
  }

  /** Stop for good (server shutdown). */
  close(): void {
    this.closed = true
    if (this.timer) clearTimeout(this.timer)
    this.timer = null
  }

  private readonly fire = (): void => {
    this.timer = null
    this.armedAtNs = Number.POSITIVE_INFINITY
    if (this.closed) return
    const next = this.onWake(nowNs())
    if (next !== null && !this.closed) this.request(next)
  }
}
