/**
 * Chat prompt calibration: a chat prompt of N words is not N tokens once the
 * server applies the model's chat template and tokenizer. When the server
 * offers /tokenize for messages (vLLM, SGLang), each chat prompt's word count
 * is adjusted until its templated token count is exactly input_len: tokenize,
 * move the word count by the difference (scaled by the tokens per word seen so
 * far), repeat, at most 4 tries. Words may split into several tokens or merge,
 * so exactness can be impossible; then the closest count ≤ input_len tried is
 * kept and counted as inexact. Prompts keep their unique code: fewer or more
 * words change only the tail.
 */
import { Agent } from 'undici'
import { tokenizeCount, tokenizeMessages, type TokenizeAnswer } from '../client/tokenize.js'
import type { PlanPoint } from '../plan/plan.js'
import { chatMessages, promptCount } from '../plan/prompts.js'
import type { LocalTokenizer } from '../client/local-tokenizer.js'
import type { Api } from '../types.js'

/** How a sweep's prompts come to have input_len tokens (recorded as `config.prompt_calibration`). */
export type PromptCalibration =
  /** Completions: exactly input_len token ids, taken as-is. */
  | 'token_ids'
  /** Chat, each prompt calibrated with the server's /tokenize. */
  | 'tokenize'
  /** Chat without /tokenize: input_len words; input_len_mismatch checks what the server saw. */
  | 'none'

/** Tries per prompt: words are mostly one token, so the first or second try usually lands. */
const MAX_CALIBRATION_TRIES = 4
/** Tokenize requests in flight while a point is calibrated. */
const CALIBRATION_CONCURRENCY = 16

/** Templated token count of the prompt cut to `words` words; null when it could not be asked. */
export type CountTokens = (words: number) => Promise<number | null>

/** One prompt's calibration: its words and their token count (null: never verified). */
export interface CalibratedPrompt {
  words: number
  tokens: number | null
  /** Tokenize calls made. */
  tries: number
}

/**
 * Find the word count whose templated token count is `target`, starting from
 * `guess` words. Exact when `tokens === target`; otherwise the largest count
 * ≤ target among those tried (tokens < target), or, when every try was over,
 * an unverified estimate below them (tokens null).
 */
export async function calibrateWordCount(target: number, guess: number, count: CountTokens, maxTries = MAX_CALIBRATION_TRIES): Promise<CalibratedPrompt> {
  const seen = new Map<number, number>()
  let n = Math.max(1, Math.round(guess))
  for (let t = 0; t < maxTries; t++) {
    const c = await count(n)
    if (c === null) break
    seen.set(n, c)
    if (c === target) return { words: n, tokens: c, tries: seen.size }
    const next = nextGuess(seen, n, target)
    if (next === null) break
    n = next
  }
  return closestBelow(seen, target, guess)
}

/** The next word count to try, or null when no untried count can land between the nearest tries. */
function nextGuess(seen: ReadonlyMap<number, number>, last: number, target: number): number | null {
  let below: [number, number] | null = null
  let above: [number, number] | null = null
  for (const [w, t] of seen) {
    if (t < target && (below === null || w > below[0])) below = [w, t]
    if (t > target && (above === null || w < above[0])) above = [w, t]
  }
  // Tokens per word: from the bracketing tries when both sides are known, else from the last
  // two tries, else ~1 (words.ts words are mostly one token).
  const tries = [...seen.entries()]
  const [a, b] = below !== null && above !== null ? [below, above] : tries.length >= 2 ? [tries.at(-2)!, tries.at(-1)!] : [null, null]
  let slope = a !== null && b !== null && a[0] !== b[0] ? (b[1] - a[1]) / (b[0] - a[0]) : 1
  if (!Number.isFinite(slope) || slope <= 0) slope = 1
  slope = Math.min(4, Math.max(0.25, slope))
  const lastTokens = seen.get(last) as number
  const lo = Math.max(1, below !== null ? below[0] + 1 : 1)
  const hi = above !== null ? above[0] - 1 : Number.MAX_SAFE_INTEGER
  if (lo > hi) return null
  let n = Math.min(hi, Math.max(lo, last + Math.round((target - lastTokens) / slope)))
  if (n === last) n = lastTokens < target ? n + 1 : n - 1
  if (n < lo || n > hi || seen.has(n)) return null
  return n
}

function closestBelow(seen: ReadonlyMap<number, number>, target: number, guess: number): CalibratedPrompt {
  let best: [number, number] | null = null
  let lowestOver: [number, number] | null = null
  for (const [w, t] of seen) {
    if (t <= target && (best === null || t > best[1] || (t === best[1] && w > best[0]))) best = [w, t]
    if (t > target && (lowestOver === null || w < lowestOver[0])) lowestOver = [w, t]
  }
  if (best !== null) return { words: best[0], tokens: best[1], tries: seen.size }
  // Every word is at least one token, so dropping the excess in words cannot leave too many.
  if (lowestOver !== null) return { words: Math.max(1, lowestOver[0] - (lowestOver[1] - target)), tokens: null, tries: seen.size }
  return { words: Math.max(1, Math.round(guess)), tokens: null, tries: 0 }
}

/** Template overhead learned per input_len (tokens − words of the last exact prompt), so later prompts start close. */
export type CalibrationMemo = Map<number, number>

/** What calibrating one point's prompts gave. */
export interface PointCalibration {
  /** Words of each prompt by serial (warmup first), for buildRequests. */
  words: number[]
  /** Prompts whose templated count is not exactly input_len (each the closest ≤ found). */
  inexact: number
  /** Prompts sent with an unverified estimate (tokenize failed, or every try was over input_len). */
  unverified: number
  /** Largest shortfall below input_len among the inexact prompts, tokens. */
  maxShortTokens: number
  /** Tokenize calls made. */
  calls: number
}

/**
 * Calibrate every prompt of a point (warmup and measured) with `count(serial, words)`,
 * `concurrency` at a time. The first prompt runs alone when `memo` knows nothing of
 * this input_len, so the rest start from the template overhead it found.
 */
export async function calibratePoint(
  point: PlanPoint,
  count: (serial: number, words: number) => Promise<number | null>,
  opts: { memo?: CalibrationMemo; concurrency?: number } = {},
): Promise<PointCalibration> {
  const target = point.shape.inputLen
  const memo = opts.memo ?? new Map<number, number>()
  const total = promptCount(point)
  const out: PointCalibration = { words: new Array<number>(total).fill(target), inexact: 0, unverified: 0, maxShortTokens: 0, calls: 0 }
  const one = async (serial: number): Promise<void> => {
    const r = await calibrateWordCount(target, target - (memo.get(target) ?? 0), (w) => count(serial, w))
    out.words[serial] = r.words
    out.calls += r.tries
    if (r.tokens === target) memo.set(target, r.tokens - r.words)
    else if (r.tokens === null) out.unverified++
    else {
      out.inexact++
      out.maxShortTokens = Math.max(out.maxShortTokens, target - r.tokens)
    }
  }
  let next = 0
  if (!memo.has(target) && total > 0) await one(next++)
  const worker = async (): Promise<void> => {
    while (next < total) await one(next++)
  }
  await Promise.all(Array.from({ length: Math.min(opts.concurrency ?? CALIBRATION_CONCURRENCY, total) }, worker))
  return out
}

/** One line on the prompts of a point that are not exactly input_len tokens, or null when all are. */
export function describeMisses(point: PlanPoint, cal: PointCalibration): string | null {
  if (cal.inexact + cal.unverified === 0) return null
  const why: string[] = []
  if (cal.inexact > 0) why.push(`${cal.inexact} the closest count below, at most ${cal.maxShortTokens} short: the tokenizer merges or splits words there`)
  if (cal.unverified > 0) why.push(`${cal.unverified} went with an unverified estimate: /tokenize failed, or every count tried was over`)
  return `${point.key}: ${cal.inexact + cal.unverified} of ${cal.words.length} chat prompts are not exactly ${point.shape.inputLen} tokens (${why.join('; ')}).`
}

/** Where calibration talks to: the server root, model and key. */
export interface CalibrationTarget {
  root: string
  model: string
  apiKey: string | null
}

/**
 * How this sweep's prompts get their length: `token_ids` for completions; for chat,
 * `tokenize` when the server's /tokenize counts a probe chat message, else `none` with the reason.
 */
export async function detectPromptCalibration(api: Api, t: CalibrationTarget): Promise<{ mode: PromptCalibration; reason: string | null }> {
  if (api === 'completions') return { mode: 'token_ids', reason: null }
  const a: TokenizeAnswer = await tokenizeMessages(t.root, t.model, [{ role: 'user', content: 'servegate probe' }], { apiKey: t.apiKey })
  if (a.kind === 'count') return { mode: 'tokenize', reason: null }
  return { mode: 'none', reason: a.reason }
}

/** A counter of a point's chat prompts through the server's /tokenize, over one pooled connection set; close() when done. */
export function tokenizeCounter(t: CalibrationTarget): {
  count(point: PlanPoint, serial: number, words: number): Promise<number | null>
  close(): Promise<void>
} {
  const dispatcher = new Agent({ connections: CALIBRATION_CONCURRENCY })
  return {
    async count(point, serial, words) {
      const a = await tokenizeMessages(t.root, t.model, chatMessages(point.seed, serial, words), { apiKey: t.apiKey, dispatcher })
      return a.kind === 'count' ? a.count : null
    },
    close: () => dispatcher.close(),
  }
}

/** A counter of a point's chat prompts with a tokenizer of the client's own (client/local-tokenizer.ts): no server asked. */
export function localCounter(tokenizer: Pick<LocalTokenizer, 'countChat'>): ReturnType<typeof tokenizeCounter> {
  return {
    count: (point, serial, words) => Promise.resolve(tokenizer.countChat(chatMessages(point.seed, serial, words))),
    close: () => Promise.resolve(),
  }
}

/** Seed of the cross-check's prompts: fixed, so every sweep compares the two tokenizers alike. */
const CROSS_CHECK_SEED = 0x70c1e5

/**
 * Where both exist, the client's tokenizer and the server's /tokenize are compared on the first
 * prompts (chat prompts of 16, 128 and 1024 words for chat; their text for completions): `agrees`,
 * or `disagrees: …` with both counts, or `not run: …` when the server cannot count. Reported,
 * never hidden: a disagreement means one of them is not the model's tokenizer.
 */
export async function crossCheckTokenizer(api: Api, local: LocalTokenizer, t: CalibrationTarget): Promise<string> {
  const sizes = [16, 128, 1024]
  const pairs: Array<[number, number]> = []
  for (const [i, words] of sizes.entries()) {
    const messages = chatMessages(CROSS_CHECK_SEED, i, words)
    if (api === 'chat') {
      const a = await tokenizeMessages(t.root, t.model, messages, { apiKey: t.apiKey })
      if (a.kind !== 'count') return `not run: the server's /tokenize cannot count chat messages (${a.reason})`
      pairs.push([local.countChat(messages), a.count])
    } else {
      const text = messages.map((m) => m.content).join('\n')
      const n = await tokenizeCount(t.root, t.model, text, t.apiKey)
      if (n === null) return "not run: the server's /tokenize cannot count text"
      pairs.push([local.countText(text), n])
    }
  }
  const off = pairs.filter(([a, b]) => a !== b)
  if (off.length === 0) return `agrees (${pairs.map(([a]) => a).join(', ')} tokens on ${sizes.length} prompts)`
  return `disagrees: ${pairs.map(([a, b]) => `${a} vs ${b}`).join(', ')} tokens (the tokenizer's count vs the server's) on prompts of ${sizes.join(', ')} words`
}
