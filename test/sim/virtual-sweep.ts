/**
 * Test helper: run the batching scheduler in virtual time (no clock, no HTTP)
 * with C closed-loop users, to check a profile's curve exactly and fast.
 */
import { BatchScheduler, type SchedItem } from '../../src/sim/batch-scheduler.js'
import type { SimProfile } from '../../src/sim/profiles.js'

class Item implements SchedItem {
  generated = 0
  done = false
  stallUntilNs = 0
  blockHashes = null
  arrivalMs: number
  firstMs = -1
  lastMs = -1
  gapsMs: number[] = []
  constructor(
    readonly promptLen: number,
    readonly target: number,
    at: number,
  ) {
    this.arrivalMs = at
  }
  get remaining(): number {
    return this.target - this.generated
  }
}

export interface VirtualPoint {
  concurrency: number
  ttftP50: number
  itlP50: number
  itlP99: number
  tpotP95: number
  outputTokPerS: number
}

const pct = (xs: number[], p: number): number => {
  const s = [...xs].sort((a, b) => a - b)
  return s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)] as number
}

/** Closed loop: C users, each sends `requestsPerUser` requests back to back. */
export function virtualRun(profile: SimProfile, c: number, inputLen: number, outputLen: number, requestsPerUser = 6): VirtualPoint {
  const sched = new BatchScheduler<Item>(profile, 1, null)
  let t = 0
  const live = new Set<Item>()
  const finished: Item[] = []
  const left = new Array(c).fill(requestsPerUser) as number[]
  const owner = new Map<Item, number>()
  const launch = (u: number): void => {
    left[u] = (left[u] as number) - 1
    const it = new Item(inputLen, outputLen, t)
    owner.set(it, u)
    live.add(it)
    sched.enqueue(it)
  }
  for (let u = 0; u < c; u++) launch(u)
  while (live.size > 0) {
    const plan = sched.plan(t)
    if (!plan) throw new Error('scheduler idle with live requests')
    t += plan.costMs
    for (const it of plan.emit) {
      it.generated++
      if (it.firstMs < 0) it.firstMs = t
      else it.gapsMs.push(t - it.lastMs)
      it.lastMs = t
      if (it.remaining === 0) {
        it.done = true
        live.delete(it)
        finished.push(it)
        const u = owner.get(it) as number
        if ((left[u] as number) > 0) launch(u)
      }
    }
  }
  const tpots = finished.map((f) => (f.lastMs - f.firstMs) / (f.generated - 1))
  const gaps = finished.flatMap((f) => f.gapsMs)
  return {
    concurrency: c,
    ttftP50: pct(
      finished.map((f) => f.firstMs - f.arrivalMs),
      50,
    ),
    itlP50: pct(gaps, 50),
    itlP99: pct(gaps, 99),
    tpotP95: pct(tpots, 95),
    outputTokPerS: (finished.length * outputLen) / (t / 1000),
  }
}
