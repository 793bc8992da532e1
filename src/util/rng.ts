/**
 * Seeded pseudo-random numbers (mulberry32): fast, reproducible across Node
 * versions, good enough for synthetic prompts and simulated noise. Not for
 * anything security-related.
 */
export interface Rng {
  /** Uniform in [0, 1). */
  next(): number
  /** Integer uniform in [lo, hi] (inclusive). */
  int(lo: number, hi: number): number
  /** Standard normal (Box–Muller). */
  normal(): number
}

/** A generator fully determined by `seed` (any 32-bit integer). */
export function createRng(seed: number): Rng {
  let a = seed >>> 0
  const next = (): number => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
  return {
    next,
    int: (lo, hi) => lo + Math.floor(next() * (hi - lo + 1)),
    normal: () => {
      const u = Math.max(next(), 1e-12)
      const v = next()
      return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * v)
    },
  }
}

/** Derive a child seed from a parent seed and a label, so streams never overlap. */
export function deriveSeed(seed: number, ...parts: Array<string | number>): number {
  // FNV-1a over the parts, mixed with the seed.
  let h = (0x811c9dc5 ^ (seed >>> 0)) >>> 0
  for (const part of parts) {
    const s = String(part)
    for (let i = 0; i < s.length; i++) {
      h ^= s.charCodeAt(i)
      h = Math.imul(h, 0x01000193) >>> 0
    }
    h ^= 0x2f
    h = Math.imul(h, 0x01000193) >>> 0
  }
  return h >>> 0
}

/**
 * deriveSeed(seed, ...parts), or, when `used` already holds that, the first of
 * deriveSeed(seed, ...parts, 1), (…, 2), … that it does not; the result is added
 * to `used`. Deterministic, so a (very unlikely) 32-bit collision is salted away
 * the same way every time.
 */
export function deriveUnusedSeed(used: Set<number>, seed: number, ...parts: Array<string | number>): number {
  let s = deriveSeed(seed, ...parts)
  for (let k = 1; used.has(s); k++) s = deriveSeed(seed, ...parts, k)
  used.add(s)
  return s
}
