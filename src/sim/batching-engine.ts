/**
 * Batching mode: one engine loop. Each step's cost comes from the scheduler
 * (batch size, prefill tokens) times slowdown, host drift, noise and jitter, scaled to
 * wall time; at the step's end every scheduled sequence gets its tokens.
 * Steps follow each other on an absolute model clock, so a late wake-up is
 * caught up rather than stretching every later step.
 */
import { nowNs, Waker, WAKE_SLACK_NS } from './clock.js'
import { BatchScheduler, type StepPlan } from './batch-scheduler.js'
import type { SimEngine } from './engine.js'
import { lognormalFactor } from './noise.js'
import type { PrefixCache } from './prefix-cache.js'
import type { SimProfile } from './profiles.js'
import type { EngineGauges, SimMetrics } from './prom-metrics.js'
import type { SimSequence } from './sequence.js'
import type { Rng } from '../util/rng.js'
import { NO_DRIFT, type HostDrift } from './drift.js'

export interface BatchingSettings {
  profile: SimProfile
  tokensPerChunk: number
  timeScale: number
  slowdown: number
  noiseCv: number
  jitterCv: number
}

/**
 * Beyond this lag behind the model clock the loop rebases instead of catching up.
 * Catching up absorbs timer granularity (~1 ms), so step means stay exact; a
 * longer stall (a starved CPU) delays later steps, as a slower GPU would, and
 * never bursts several steps back to back: a real engine does not emit two
 * steps 0 ms apart, and such bursts showed up as an ITL p50 far below the step
 * time in a CPU-starved 256-stream sweep.
 */
const MAX_CATCH_UP_NS = 2_000_000

export class BatchingEngine implements SimEngine {
  private readonly sched: BatchScheduler<SimSequence>
  private readonly waker = new Waker((now) => this.wake(now))
  private stepEndNs = -1
  /** Wall ns of the step in progress: the ITL of every stream it emits to. */
  private stepNs = 0
  private stepEmit: SimSequence[] = []
  private kickPending = false
  private closed = false
  private modelMs = 0
  private noiseWindow = -1
  private noise = 1

  constructor(
    private readonly s: BatchingSettings,
    private readonly metrics: SimMetrics,
    cache: PrefixCache | null,
    private readonly noiseRng: Rng,
    private readonly jitterRng: Rng,
    private readonly drift: HostDrift = NO_DRIFT,
  ) {
    this.sched = new BatchScheduler<SimSequence>(s.profile, s.tokensPerChunk, cache)
    this.noise = lognormalFactor(noiseRng, s.noiseCv)
  }

  submit(seq: SimSequence): void {
    this.sched.enqueue(seq)
    // Start on the next check phase so requests arriving together share the first step.
    if (this.stepEndNs < 0 && !this.kickPending) {
      this.kickPending = true
      setImmediate(this.kick)
    }
  }

  gauges(): EngineGauges {
    return { running: this.sched.numRunning, waiting: this.sched.numWaiting, kvUsage: this.sched.kvUsage }
  }

  close(): void {
    this.closed = true
    this.waker.close()
  }

  private readonly kick = (): void => {
    this.kickPending = false
    if (this.closed || this.stepEndNs >= 0) return
    const next = this.wake(Number.NaN)
    if (next !== null) this.waker.request(next)
  }

  /** Runs due steps; `now` NaN means "called by kick": start a step now. */
  private wake(nowArg: number): number | null {
    let now = Number.isNaN(nowArg) ? nowNs() : nowArg
    if (this.stepEndNs < 0) {
      this.startStep(now)
    }
    for (let guard = 0; guard < 10_000 && this.stepEndNs >= 0; guard++) {
      if (this.stepEndNs > now + WAKE_SLACK_NS) return this.stepEndNs
      this.finishStep()
      let next = this.stepEndNs
      now = nowNs()
      if (now - next > MAX_CATCH_UP_NS) next = now
      this.startStep(next)
    }
    return this.stepEndNs >= 0 ? this.stepEndNs : this.sched.nextStallEnd()
  }

  private finishStep(): void {
    const k = this.s.tokensPerChunk
    const emit = this.stepEmit
    for (let i = 0; i < emit.length; i++) (emit[i] as SimSequence).emit(k, this.stepNs)
    this.stepEmit = []
  }

  private startStep(startNs: number): void {
    const plan = this.sched.plan(startNs)
    this.syncStats()
    if (plan === null) {
      this.stepEndNs = -1
      return
    }
    this.stepNs = this.stepWallNs(plan, startNs)
    this.stepEndNs = startNs + this.stepNs
    this.stepEmit = plan.emit
    for (const seq of plan.admitted) this.metrics.queue.observe(Math.max(0, startNs - seq.engineArrivalNs) / 1e9)
  }

  private stepWallNs(plan: StepPlan<SimSequence>, startNs: number): number {
    const w = this.s.profile.noiseWindowMs
    if (w !== null) {
      const idx = Math.floor(this.modelMs / w)
      if (idx !== this.noiseWindow) {
        this.noiseWindow = idx
        if (idx > 0) this.noise = lognormalFactor(this.noiseRng, this.s.noiseCv)
      }
    }
    const ms = plan.costMs * this.s.slowdown * this.drift.factor(startNs) * this.noise * lognormalFactor(this.jitterRng, this.s.jitterCv)
    this.modelMs += ms
    return ms * this.s.timeScale * 1e6
  }

  private syncStats(): void {
    const st = this.sched.stats
    this.metrics.preemptions = st.preemptions
    this.metrics.prefixQueries = st.prefixQueries
    this.metrics.prefixHits = st.prefixHits
  }
}
