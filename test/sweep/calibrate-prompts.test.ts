import { describe, expect, it } from 'vitest'
import { calibratePoint, calibrateWordCount, describeMisses, type CalibrationMemo } from '../../src/sweep/calibrate-prompts.js'
import type { PlanPoint } from '../../src/plan/plan.js'

// Stand-in tokenizers for a chat prompt of n words (no server): a template of 5 tokens,
// then words that are one token, or split into two, or merge into the word before.
const TEMPLATE = 5
const hash = (a: number, b: number): number => {
  let h = Math.imul(a ^ 0x9e3779b9, 0x85ebca6b) ^ Math.imul(b + 1, 0xc2b2ae35)
  h ^= h >>> 15
  return (Math.imul(h, 0x27d4eb2f) ^ (h >>> 13)) >>> 0
}
/** Tokens of word i of prompt `serial`: 2 (split) for ~1 in `split`, 0 (merged into the previous) for ~1 in `merge`, else 1. */
const wordTokens = (serial: number, i: number, split: number, merge: number): number =>
  i > 0 && hash(serial, i) % merge === 0 ? 0 : hash(serial, i) % split === 0 ? 2 : 1
interface Fake {
  split: number
  merge: number
  /** A last word that merges with the generation prompt: the count is then not monotone in words. */
  trailingMerge: boolean
}
/** Templated counts of prompt `serial` cut to 0 … 999 words. */
function fakeCounts(serial: number, f: Fake): number[] {
  const out: number[] = []
  let c = TEMPLATE
  for (let n = 0; n < 1000; n++) {
    out.push(f.trailingMerge && n > 0 && hash(serial, n + 7919) % 4 === 0 ? c - 1 : c)
    c += wordTokens(serial, n, f.split, f.merge)
  }
  return out
}
const plain = (n: number): number => TEMPLATE + n

const planPoint = (over: Partial<PlanPoint> = {}): PlanPoint => ({
  key: '500x8@c64#r1',
  shape: { inputLen: 500, outputLen: 8 },
  concurrency: 64,
  repeat: 1,
  seed: 7,
  numPrompts: 64 * 3,
  warmupRequests: 64,
  ...over,
})

describe('calibrateWordCount', () => {
  it('removes the template overhead in two tries from input_len words, and in one from a good guess', async () => {
    const calls: number[] = []
    const count = async (n: number) => (calls.push(n), plain(n))
    expect(await calibrateWordCount(100, 100, count)).toEqual({ words: 95, tokens: 100, tries: 2 })
    expect(calls).toEqual([100, 95])
    expect(await calibrateWordCount(100, 95, async (n) => plain(n))).toEqual({ words: 95, tokens: 100, tries: 1 })
  })

  it.each([
    ['mostly one-token words (1 in 10 splits, 1 in 25 merges)', { split: 10, merge: 25, trailingMerge: false }, 0.95],
    ['the same with a non-monotone end', { split: 10, merge: 25, trailingMerge: true }, 0.9],
    ['a harsh tokenizer (1 in 5 splits, 1 in 11 merges)', { split: 5, merge: 11, trailingMerge: true }, 0.8],
  ])('with %s: never over input_len, reports the true count, and is exact whenever it can be in most prompts', async (_name, fake, share) => {
    let possible = 0
    let exact = 0
    for (let serial = 0; serial < 300; serial++) {
      const counts = fakeCounts(serial, fake)
      const r = await calibrateWordCount(500, 500, async (n) => counts[n]!)
      expect(r.tries).toBeLessThanOrEqual(4)
      expect(r.tokens).toBe(counts[r.words])
      expect(r.tokens!).toBeLessThanOrEqual(500)
      // Whether any word count gives exactly 500 tokens for this prompt.
      if (counts.includes(500)) {
        possible++
        if (r.tokens === 500) exact++
      }
    }
    expect(possible).toBeGreaterThan(150)
    expect(exact / possible).toBeGreaterThanOrEqual(share)
  })

  it('settles for the closest count below when no word count gives the target (a two-token word at the boundary)', async () => {
    const count = async (n: number) => (n <= 99 ? n : 99 + 2 * (n - 99))
    expect(await calibrateWordCount(100, 100, count)).toMatchObject({ words: 99, tokens: 99 })
    // Three tokens a word: 100 cannot be reached; 99 (33 words) is the closest below.
    expect(await calibrateWordCount(100, 100, async (n) => 3 * n)).toMatchObject({ words: 33, tokens: 99 })
  })

  it('falls back to an unverified estimate below every try, or to the guess when the server cannot count', async () => {
    expect(await calibrateWordCount(100, 100, async (n) => 3 * n, 1)).toEqual({ words: 1, tokens: null, tries: 1 })
    expect(await calibrateWordCount(100, 120, async (n) => n + 10, 1)).toEqual({ words: 90, tokens: null, tries: 1 })
    expect(await calibrateWordCount(100, 95, async () => null)).toEqual({ words: 95, tokens: null, tries: 0 })
  })
})

describe('calibratePoint', () => {
  it('calibrates every warmup and measured prompt with at most 16 tokenize calls in flight, learning the template first', async () => {
    let inFlight = 0
    let most = 0
    const firstAlone: number[] = []
    const point = planPoint()
    const cal = await calibratePoint(point, async (serial, n) => {
      inFlight++
      most = Math.max(most, inFlight)
      if (serial === 0) firstAlone.push(inFlight)
      await new Promise((r) => setTimeout(r, 1))
      inFlight--
      return plain(n)
    })
    expect(cal.words).toHaveLength(64 + 192)
    expect(cal.words.every((w) => w === 495)).toBe(true)
    expect(most).toBe(16)
    expect(firstAlone.every((n) => n === 1)).toBe(true)
    // Two tries for the first prompt, then one each from the learned overhead.
    expect(cal.calls).toBe(2 + 255)
    expect(cal).toMatchObject({ inexact: 0, unverified: 0 })
    expect(describeMisses(point, cal)).toBeNull()
  })

  it('carries the learned overhead to the next point of the same input_len through the memo', async () => {
    const memo: CalibrationMemo = new Map()
    await calibratePoint(planPoint({ numPrompts: 4, warmupRequests: 0 }), async (_s, n) => plain(n), { memo })
    const again = await calibratePoint(planPoint({ numPrompts: 4, warmupRequests: 0, seed: 8 }), async (_s, n) => plain(n), { memo })
    expect(again.calls).toBe(4)
  })

  it('counts prompts it could not make exact or could not tokenize, and says so in one line', async () => {
    const point = planPoint({ numPrompts: 8, warmupRequests: 0 })
    // Prompt 3: a two-token word where the last token is needed; prompt 5: /tokenize fails.
    const cal = await calibratePoint(point, async (serial, n) => {
      if (serial === 5) return null
      if (serial === 3) return n <= 494 ? plain(n) : plain(494) + 2 * (n - 494)
      return plain(n)
    })
    expect(cal).toMatchObject({ inexact: 1, unverified: 1, maxShortTokens: 1 })
    expect(cal.words[3]).toBe(494)
    expect(describeMisses(point, cal)).toBe(
      '500x8@c64#r1: 2 of 8 chat prompts are not exactly 500 tokens (1 the closest count below, at most 1 short: the tokenizer merges or splits words there; 1 went with an unverified estimate: /tokenize failed, or every count tried was over).',
    )
  })
})
