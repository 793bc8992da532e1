/**
 * Open-loop arrival schedules, as `vllm bench serve` draws them: inter-arrival
 * times from a gamma distribution with shape = burstiness and scale =
 * 1 / (rate × burstiness), so the mean gap is 1/rate whatever the burstiness
 * and the coefficient of variation is 1/√burstiness (burstiness 1: exponential
 * gaps, a Poisson process; below 1 burstier, above 1 more even). Rate
 * Infinity sends every request at once. Seeded, so a recorded seed replays
 * the same schedule.
 */
import { createRng, type Rng } from '../util/rng.js'

/**
 * One gamma(shape, scale) draw (Marsaglia and Tsang's squeeze method; for a
 * shape below 1, a draw at shape + 1 times U^(1/shape)). Mean shape × scale.
 */
export function gammaSample(rng: Rng, shape: number, scale: number): number {
  if (!(shape > 0) || !(scale > 0)) throw new Error(`gammaSample: shape and scale must be above 0 (got ${shape}, ${scale})`)
  if (shape < 1) {
    const u = Math.max(rng.next(), Number.MIN_VALUE)
    return gammaSample(rng, shape + 1, scale) * Math.pow(u, 1 / shape)
  }
  const d = shape - 1 / 3
  const c = 1 / Math.sqrt(9 * d)
  for (;;) {
    let x: number
    let v: number
    do {
      x = rng.normal()
      v = 1 + c * x
    } while (v <= 0)
    v = v * v * v
    const u = rng.next()
    if (u < 1 - 0.0331 * x ** 4) return d * v * scale
    if (Math.log(Math.max(u, Number.MIN_VALUE)) < 0.5 * x * x + d * (1 - v + Math.log(v))) return d * v * scale
  }
}

/**
 * When each of `n` requests is due, ms after the schedule's start: the first at
 * 0 (as vLLM, which sends a request and then sleeps one drawn gap), each next
 * one a gamma gap later. Rate Infinity: all at 0.
 */
export function arrivalScheduleMs(n: number, rate: number, burstiness: number, seed: number): number[] {
  if (!(rate > 0)) throw new Error(`arrivalScheduleMs: rate must be above 0 (got ${rate})`)
  if (!(burstiness > 0)) throw new Error(`arrivalScheduleMs: burstiness must be above 0 (got ${burstiness})`)
  const out = new Array<number>(n)
  if (rate === Infinity) return out.fill(0)
  const rng = createRng(seed)
  const scaleMs = 1000 / (rate * burstiness)
  let t = 0
  for (let i = 0; i < n; i++) {
    if (i > 0) t += gammaSample(rng, burstiness, scaleMs)
    out[i] = t
  }
  return out
}
