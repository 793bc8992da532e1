/**
 * The continuous-batching scheduler, without a clock: given the queue and the
 * running set, decide what one engine step computes (decode tokens, prefill
 * chunks under the token budget, admissions, preemptions) and what it costs.
 * The engine loop (batching-engine.ts) turns that cost into wall time.
 */
import type { PrefixCache } from './prefix-cache.js'
import type { SimProfile } from './profiles.js'

/** The scheduler's view of a request (SimSequence satisfies it). */
export interface SchedItem {
  readonly promptLen: number
  /** Tokens generated so far. */
  readonly generated: number
  /** Tokens still to generate. */
  readonly remaining: number
  readonly done: boolean
  /** Held by a stall fault until this time (same clock as `plan(nowNs)`). */
  readonly stallUntilNs: number
  /** Chained prompt block hashes, when the prefix cache is on. */
  readonly blockHashes: readonly number[] | null
}

interface Entry<T extends SchedItem> {
  item: T
  /** Tokens to compute before decoding: the prompt, plus output recomputed after a preemption. */
  prefillTarget: number
  prefilled: number
  kvTokens: number
  blocks: number
  /** Admitted at least once (queue time and prefix lookup happen only the first time). */
  admittedBefore: boolean
  /** Its prompt blocks are in the prefix cache. */
  cached: boolean
}

/** What one step does. */
export interface StepPlan<T extends SchedItem> {
  /** Model-time cost before slowdown/noise/jitter, ms. */
  costMs: number
  /** Items that receive tokens at the end of the step. */
  emit: T[]
  /** Items admitted for the first time in this step (queue time ends now). */
  admitted: T[]
  batchSize: number
  prefillTokens: number
}

export interface SchedulerStats {
  preemptions: number
  prefixQueries: number
  prefixHits: number
}

export class BatchScheduler<T extends SchedItem> {
  private waiting: Array<Entry<T>> = []
  private running: Array<Entry<T>> = []
  private usedBlocks = 0
  private readonly capacityBlocks: number
  readonly stats: SchedulerStats = { preemptions: 0, prefixQueries: 0, prefixHits: 0 }

  constructor(
    private readonly profile: SimProfile,
    private readonly tokensPerChunk: number,
    private readonly cache: PrefixCache | null,
  ) {
    this.capacityBlocks = Math.floor(profile.kvCapacityTokens / profile.blockSize)
  }

  enqueue(item: T): void {
    this.waiting.push({ item, prefillTarget: item.promptLen, prefilled: 0, kvTokens: 0, blocks: 0, admittedBefore: false, cached: false })
  }

  get numRunning(): number {
    return this.running.length
  }

  get numWaiting(): number {
    return this.waiting.length
  }

  /** KV cache usage, 0..1. */
  get kvUsage(): number {
    return Math.min(1, this.usedBlocks / this.capacityBlocks)
  }

  /** Earliest end of a stall among running items (for waking an otherwise idle engine). */
  nextStallEnd(): number | null {
    let min: number | null = null
    for (const e of this.running) if (!e.item.done && (min === null || e.item.stallUntilNs < min)) min = e.item.stallUntilNs
    return min
  }

  /** Plan the step starting at `nowNs`; null when there is nothing to compute. */
  plan(nowNs: number): StepPlan<T> | null {
    this.reap()
    const p = this.profile
    const k = this.tokensPerChunk
    this.makeRoomForDecode(nowNs)
    const emit: T[] = []
    const admitted: T[] = []
    let budget = p.maxBatchTokens
    let batch = 0
    let prefillTokens = 0
    const schedulePrefill = (e: Entry<T>): void => {
      const c = Math.min(e.prefillTarget - e.prefilled, budget)
      budget -= c
      prefillTokens += c
      batch++
      e.prefilled += c
      e.kvTokens += c
      if (e.prefilled === e.prefillTarget) {
        if (!e.cached && this.cache && e.item.blockHashes) this.cache.insert(e.item.blockHashes)
        e.cached = true
        this.grow(e, Math.min(k, e.item.remaining))
        emit.push(e.item)
      }
    }
    for (const e of this.running) {
      if (e.prefilled < e.prefillTarget || e.item.stallUntilNs > nowNs || budget <= 0) continue
      budget--
      batch++
      this.grow(e, Math.min(k, e.item.remaining))
      emit.push(e.item)
    }
    for (const e of this.running) {
      if (budget <= 0) break
      if (e.prefilled < e.prefillTarget) schedulePrefill(e)
    }
    while (budget > 0 && this.waiting.length > 0 && this.running.length < p.maxRunning) {
      const e = this.waiting[0] as Entry<T>
      const need = this.blocksFor(e.prefillTarget + 1)
      if (this.usedBlocks + need > this.capacityBlocks) break
      this.waiting.shift()
      if (!e.admittedBefore) {
        e.admittedBefore = true
        admitted.push(e.item)
        if (this.cache && e.item.blockHashes) {
          const hit = this.cache.hitTokens(this.cache.lookup(e.item.blockHashes), e.item.promptLen)
          this.stats.prefixQueries += e.item.promptLen
          this.stats.prefixHits += hit
          e.prefilled = hit
          e.kvTokens = hit
        }
      }
      e.blocks = need
      this.usedBlocks += need
      this.running.push(e)
      schedulePrefill(e)
    }
    if (batch === 0) return null
    const costMs = p.baseStepMs + p.perSeqMs * batch + p.prefillMsPerToken * prefillTokens
    return { costMs, emit, admitted, batchSize: batch, prefillTokens }
  }

  private blocksFor(tokens: number): number {
    return Math.ceil(tokens / this.profile.blockSize)
  }

  private grow(e: Entry<T>, tokens: number): void {
    e.kvTokens += tokens
    const b = this.blocksFor(e.kvTokens)
    if (b > e.blocks) {
      this.usedBlocks += b - e.blocks
      e.blocks = b
    }
  }

  /** Drop finished or abandoned items and free their KV blocks. */
  private reap(): void {
    if (this.running.some((e) => e.item.done)) {
      this.running = this.running.filter((e) => {
        if (!e.item.done) return true
        this.usedBlocks -= e.blocks
        return false
      })
    }
    if (this.waiting.some((e) => e.item.done)) this.waiting = this.waiting.filter((e) => !e.item.done)
  }

  /** Preempt the most recently admitted sequences until every decoding one can grow. */
  private makeRoomForDecode(nowNs: number): void {
    const k = this.tokensPerChunk
    const extra = (e: Entry<T>): number =>
      e.prefilled < e.prefillTarget || e.item.stallUntilNs > nowNs ? 0 : Math.max(0, this.blocksFor(e.kvTokens + Math.min(k, e.item.remaining)) - e.blocks)
    let need = 0
    for (const e of this.running) need += extra(e)
    while (need > 0 && this.usedBlocks + need > this.capacityBlocks && this.running.length > 1) {
      const victim = this.running.pop() as Entry<T>
      need -= extra(victim)
      this.usedBlocks -= victim.blocks
      this.stats.preemptions++
      // Recompute on readmission: the prompt and the output so far are prefilled again.
      this.waiting.unshift({
        item: victim.item,
        prefillTarget: victim.item.promptLen + victim.item.generated,
        prefilled: 0,
        kvTokens: 0,
        blocks: 0,
        admittedBefore: true,
        cached: victim.cached,
      })
    }
  }
}
