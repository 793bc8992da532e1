/**
 * Deterministic mode: the first chunk `ttft` after a request reaches the
 * engine, then one chunk every `itl`, whatever the load. Chunk k is due at the
 * absolute time arrival + ttft + k·itl (plus any stall), so a late wake-up
 * never delays the chunks after it.
 */
import { Waker, WAKE_SLACK_NS } from './clock.js'
import type { SimEngine } from './engine.js'
import { MinHeap } from './min-heap.js'
import type { EngineGauges } from './prom-metrics.js'
import type { SimSequence } from './sequence.js'
import type { Rng } from '../util/rng.js'
import { lognormalFactor } from './noise.js'
import { NO_DRIFT, type HostDrift } from './drift.js'

export interface DeterministicTiming {
  /** Wall ns from engine arrival to the first chunk (already scaled). */
  ttftNs: number
  /** Wall ns between chunks (already scaled). */
  itlNs: number
  tokensPerChunk: number
  /** Per-chunk jitter CV (0: exact). */
  jitterCv: number
  /** KV capacity used only to report a usage gauge. */
  kvCapacityTokens: number
}

interface Slot {
  seq: SimSequence
  dueNs: number
  /** Prompt + planned output: what this request holds in the notional KV cache. */
  kvTokens: number
}

export class DeterministicEngine implements SimEngine {
  private readonly heap = new MinHeap<Slot>((s) => s.dueNs)
  private readonly waker = new Waker((now) => this.wake(now))
  private active = 0
  private kvTokens = 0

  constructor(
    private readonly t: DeterministicTiming,
    private readonly jitterRng: Rng,
    private readonly drift: HostDrift = NO_DRIFT,
  ) {}

  submit(seq: SimSequence): void {
    const ttftNs = this.t.ttftNs * this.drift.factor(seq.engineArrivalNs)
    const slot = { seq, dueNs: seq.engineArrivalNs + ttftNs, kvTokens: seq.req.promptTokens + seq.plan.target }
    this.active++
    this.kvTokens += slot.kvTokens
    this.heap.push(slot)
    this.waker.request(slot.dueNs)
  }

  gauges(): EngineGauges {
    return { running: this.active, waiting: 0, kvUsage: Math.min(1, this.kvTokens / this.t.kvCapacityTokens) }
  }

  close(): void {
    this.waker.close()
    this.heap.clear()
    this.active = 0
    this.kvTokens = 0
  }

  private wake(now: number): number | null {
    const limit = now + WAKE_SLACK_NS
    for (let top = this.heap.peek(); top !== undefined && top.dueNs <= limit; top = this.heap.peek()) {
      this.heap.pop()
      const seq = top.seq
      // Host drift stretches the gap that starts now (the file or the clock may have moved).
      const itlNs = this.t.itlNs * this.drift.factor(now)
      if (!seq.done) seq.emit(this.t.tokensPerChunk, itlNs)
      if (seq.done) {
        this.active--
        this.kvTokens -= top.kvTokens
        continue
      }
      top.dueNs += itlNs * lognormalFactor(this.jitterRng, this.t.jitterCv)
      if (seq.stallUntilNs > top.dueNs) top.dueNs = seq.stallUntilNs
      this.heap.push(top)
    }
    return this.heap.peek()?.dueNs ?? null
  }
}
