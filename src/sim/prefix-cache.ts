/**
 * A prefix cache keyed by chained block hashes: block i's key depends on every
 * token up to the end of block i, so only a repeated *prefix* hits. Bounded
 * with least-recently-used eviction.
 */

/** Chained hashes of the full `blockSize`-token blocks of `ids`. */
export function blockHashes(ids: readonly number[], blockSize: number): number[] {
  const full = Math.floor(ids.length / blockSize)
  const out: number[] = new Array(full)
  let h1 = 0x811c9dc5
  let h2 = 0x2545f491
  for (let b = 0; b < full; b++) {
    for (let i = b * blockSize; i < (b + 1) * blockSize; i++) {
      const v = ids[i] as number
      h1 = Math.imul(h1 ^ (v & 0xffff), 0x01000193)
      h1 = Math.imul(h1 ^ (v >>> 16), 0x01000193)
      h2 = Math.imul(h2 ^ v, 0x5bd1e995)
      h2 ^= h2 >>> 13
    }
    // 53-bit key from two 32-bit lanes: collisions are negligible at cache sizes.
    out[b] = (h1 >>> 0) * 0x200000 + ((h2 >>> 0) & 0x1fffff)
  }
  return out
}

export class PrefixCache {
  private readonly blocks = new Map<number, true>()

  constructor(
    readonly blockSize: number,
    private readonly capacityBlocks: number,
  ) {}

  /** Number of leading blocks of `hashes` present (refreshing their recency). */
  lookup(hashes: readonly number[]): number {
    let n = 0
    for (const h of hashes) {
      if (!this.blocks.has(h)) break
      this.blocks.delete(h)
      this.blocks.set(h, true)
      n++
    }
    return n
  }

  /** Remember all of `hashes`, evicting the least recently used beyond capacity. */
  insert(hashes: readonly number[]): void {
    for (const h of hashes) {
      this.blocks.delete(h)
      this.blocks.set(h, true)
    }
    while (this.blocks.size > this.capacityBlocks) {
      const oldest = this.blocks.keys().next().value
      if (oldest === undefined) break
      this.blocks.delete(oldest)
    }
  }

  /**
   * Prompt tokens that need no prefill: the hit blocks, but never the whole
   * prompt (the last token is always computed to produce the first output).
   */
  hitTokens(hitBlocks: number, promptTokens: number): number {
    return Math.min(hitBlocks * this.blockSize, Math.floor((promptTokens - 1) / this.blockSize) * this.blockSize)
  }
}
