/** Seeded multiplicative noise for step times. */
import type { Rng } from '../util/rng.js'

/**
 * A lognormal factor with mean 1 and coefficient of variation `cv`
 * (cv = 0 gives exactly 1 and consumes no randomness).
 */
export function lognormalFactor(rng: Rng, cv: number): number {
  if (cv <= 0) return 1
  const sigma2 = Math.log(1 + cv * cv)
  return Math.exp(Math.sqrt(sigma2) * rng.normal() - sigma2 / 2)
}
