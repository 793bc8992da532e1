/**
 * Latency histogram for one metric of one run (TTFT, ITL, TPOT, E2EL).
 *
 * Storage: hdr-histogram-js Int32Histogram, values recorded as integer
 * microseconds with 5 significant digits.
 * - Resolution: a value is rounded to the nearest µs (±0.0005 ms), then kept in
 *   a bucket of width 1 µs below 262.144 ms, 2 µs below 524 ms, 4 µs below
 *   1.05 s, 8 µs below 2.1 s, then 2^k µs (relative width ≤ 2^-17 ≈ 7.6 ppm).
 *   So ITL/TPOT/TTFT keep 0.01 ms absolute resolution up to 2.1 s, and an E2EL
 *   of 60 s is kept to within ±0.13 ms (bucket 256 µs wide).
 * - Memory: the counts array grows with the largest value, not with the
 *   number of values: 1 MB while every value is under 262 ms, ~5 MB once an
 *   E2EL reaches a minute. A run holds a handful of these at once, briefly.
 *   hdr-histogram-js's PackedHistogram would be ~50× smaller, but its 3.0.1
 *   packed array loses counts once tens of thousands of distinct values are
 *   recorded (40,000 distinct µs values ×10 put p50 at 10.6 ms instead of
 *   21.0 ms); a test below records such data and compares with an exact sort.
 * - Reads: a minute-long value puts 1.3 M slots below it, so an occupancy
 *   bitmap with one bit per 8 slots (512 B for ITL data, 20 KB when values
 *   reach a minute) lets percentile reads, snapshots and merges visit only
 *   occupied blocks.
 *
 * Percentile rule (the same as numpy's default `linear` method, which
 * `vllm bench serve` uses, so figures compare): for n values sorted ascending
 * x[0..n-1] and percentile p, h = (n − 1)·p/100 and
 * value = x[⌊h⌋] + (h − ⌊h⌋)·(x[⌈h⌉] − x[⌊h⌋]). Each x[k] is read from the
 * histogram as the midpoint of its bucket, clamped to the exact recorded
 * min/max, so |reported − exact| ≤ 0.0005 ms + value·2^-18.
 * Mean: exact over the µs-rounded values (a running integer sum), not bucket midpoints.
 */
import { Int32Histogram } from 'hdr-histogram-js'
import type { LatencyStats } from '../types.js'

const SIGNIFICANT_DIGITS = 5
const US_PER_MS = 1000
/** log2 of the slots covered by one occupancy bit. */
const BLOCK_SHIFT = 3

/** A plain, structured-clone-friendly copy of a histogram (e.g. to post from a worker thread). */
export interface HistogramSnapshot {
  /** [value µs (bucket's lowest equivalent value), count] for every non-empty bucket. */
  buckets: Array<[number, number]>
  count: number
  sumUs: number
  minUs: number
  maxUs: number
}

/** Latency histogram in milliseconds; see the file header for resolution and percentile rule. */
export class LatencyHistogram {
  private readonly hist = new Int32Histogram(1, 2, SIGNIFICANT_DIGITS)
  private sumUs = 0
  private minUs = Number.POSITIVE_INFINITY
  private maxUs = Number.NEGATIVE_INFINITY
  /** Bit b set ⇔ counts slots [b·8, b·8+7] may be non-zero. */
  private occupied = new Uint32Array(64)

  constructor() {
    this.hist.autoResize = true
  }

  /** Number of recorded values. */
  get count(): number {
    return this.hist.totalCount
  }

  /** Record one latency in ms (finite, ≥ 0; a negative latency is a clock bug upstream). */
  record(valueMs: number): void {
    if (!Number.isFinite(valueMs) || valueMs < 0) {
      throw new RangeError(`latency must be a finite number of ms ≥ 0, got ${valueMs}`)
    }
    this.recordUs(Math.round(valueMs * US_PER_MS), 1)
  }

  /** Record every value of a list, in ms. */
  recordAll(valuesMs: Iterable<number>): this {
    for (const v of valuesMs) this.record(v)
    return this
  }

  private recordUs(us: number, count: number): void {
    this.hist.recordValueWithCount(us, count)
    this.markOccupied(this.hist.countsArrayIndex(us))
    this.sumUs += us * count
    if (us < this.minUs) this.minUs = us
    if (us > this.maxUs) this.maxUs = us
  }

  /** Add another histogram's values to this one; the result equals recording both sets into one. */
  merge(other: LatencyHistogram): this {
    if (other.count === 0) return this
    // Same layout on both sides, so a slot's lowest value lands in the same slot here.
    other.forEachSlot((i, c) => {
      const us = other.hist.valueFromIndex(i)
      this.hist.recordValueWithCount(us, c)
      this.markOccupied(i)
    })
    this.sumUs += other.sumUs
    this.minUs = Math.min(this.minUs, other.minUs)
    this.maxUs = Math.max(this.maxUs, other.maxUs)
    return this
  }

  /** Mean in ms, or null when empty. */
  meanMs(): number | null {
    return this.count === 0 ? null : this.sumUs / this.count / US_PER_MS
  }

  /** Value at percentile p (0..100) in ms by the linear rule in the file header; null when empty. */
  percentileMs(p: number): number | null {
    return this.percentilesMs([p])[0] ?? null
  }

  /** Several percentiles in ms with one walk over the buckets; nulls when empty. */
  percentilesMs(ps: readonly number[]): Array<number | null> {
    for (const p of ps) {
      if (!(p >= 0 && p <= 100)) throw new RangeError(`percentile must be within 0..100, got ${p}`)
    }
    const n = this.count
    if (n === 0) return ps.map(() => null)
    // 0-based ranks needed: ⌊h⌋ and ⌈h⌉ of every percentile.
    const hs = ps.map((p) => ((n - 1) * p) / 100)
    const ranks = [...new Set(hs.flatMap((h) => [Math.floor(h), Math.ceil(h)]))].sort((a, b) => a - b)
    const atRank = this.valuesAtRanksUs(ranks)
    return hs.map((h) => {
      const lo = atRank.get(Math.floor(h)) as number
      const hi = atRank.get(Math.ceil(h)) as number
      return (lo + (h - Math.floor(h)) * (hi - lo)) / US_PER_MS
    })
  }

  /** Mean, p50, p95, p99 in ms (all null when empty). */
  toStats(): LatencyStats {
    const [p50, p95, p99] = this.percentilesMs([50, 95, 99])
    return { mean: this.meanMs(), p50: p50 ?? null, p95: p95 ?? null, p99: p99 ?? null }
  }

  /** A lossless plain-object copy (bucket counts + exact sum/min/max). */
  toSnapshot(): HistogramSnapshot {
    const buckets: Array<[number, number]> = []
    this.forEachSlot((i, c) => {
      buckets.push([this.hist.valueFromIndex(i), c])
    })
    return { buckets, count: this.count, sumUs: this.sumUs, minUs: this.minUs, maxUs: this.maxUs }
  }

  /** Rebuild a histogram from `toSnapshot()` output. */
  static fromSnapshot(s: HistogramSnapshot): LatencyHistogram {
    const h = new LatencyHistogram()
    for (const [us, c] of s.buckets) {
      h.hist.recordValueWithCount(us, c)
      h.markOccupied(h.hist.countsArrayIndex(us))
    }
    h.sumUs = s.sumUs
    h.minUs = s.count > 0 ? s.minUs : Number.POSITIVE_INFINITY
    h.maxUs = s.count > 0 ? s.maxUs : Number.NEGATIVE_INFINITY
    return h
  }

  /** Bucket-midpoint value (µs, clamped to the exact min/max) at each 0-based rank, sorted ascending. */
  private valuesAtRanksUs(sortedRanks: readonly number[]): Map<number, number> {
    const out = new Map<number, number>()
    let next = 0
    let cumulative = 0
    const h = this.hist
    this.forEachSlot((i, c) => {
      cumulative += c
      const value = h.valueFromIndex(i)
      const mid = h.lowestEquivalentValue(value) + (h.sizeOfEquivalentValueRange(value) - 1) / 2
      const clamped = Math.min(this.maxUs, Math.max(this.minUs, mid))
      // Ranks 0..cumulative-1 have been covered by the slots visited so far.
      while (next < sortedRanks.length && (sortedRanks[next] as number) < cumulative) {
        out.set(sortedRanks[next] as number, clamped)
        next++
      }
      return next < sortedRanks.length
    })
    return out
  }

  private markOccupied(slot: number): void {
    const block = slot >>> BLOCK_SHIFT
    const word = block >>> 5
    if (word >= this.occupied.length) {
      const grown = new Uint32Array(Math.max(word + 1, this.occupied.length * 2))
      grown.set(this.occupied)
      this.occupied = grown
    }
    this.occupied[word] = (this.occupied[word] as number) | (1 << (block & 31))
  }

  /** Visit every non-empty slot in ascending value order; stop when `visit` returns false. */
  private forEachSlot(visit: (slot: number, count: number) => boolean | void): void {
    const length = this.hist.countsArrayLength
    for (let w = 0; w < this.occupied.length; w++) {
      const bits = this.occupied[w] as number
      if (bits === 0) continue
      for (let b = 0; b < 32; b++) {
        if ((bits & (1 << b)) === 0) continue
        const first = ((w << 5) | b) << BLOCK_SHIFT
        const last = Math.min(first + (1 << BLOCK_SHIFT), length)
        for (let i = first; i < last; i++) {
          const c = this.hist.getCountAtIndex(i)
          if (c > 0 && visit(i, c) === false) return
        }
      }
    }
  }
}

/** Convenience: stats of a plain list of ms values through a LatencyHistogram. */
export function latencyStats(valuesMs: Iterable<number>): LatencyStats {
  return new LatencyHistogram().recordAll(valuesMs).toStats()
}
