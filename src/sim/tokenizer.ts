/**
 * The simulator's tokenizer: a token is a whitespace-delimited word. Every
 * generated token is emitted as one word with a leading space (" tok17"), so
 * re-tokenising the generated text with POST /tokenize gives the exact count.
 */

const WORD_CACHE_SIZE = 4096
const WORDS: string[] = Array.from({ length: WORD_CACHE_SIZE }, (_, i) => ` tok${i}`)

/** Text of generated token number `i` (0-based), with its leading space. */
function tokenWord(i: number): string {
  return i < WORD_CACHE_SIZE ? (WORDS[i] as string) : ` tok${i}`
}

/** Text of `count` generated tokens starting at token number `start`. */
export function tokensText(start: number, count: number): string {
  if (count === 1) return tokenWord(start)
  let s = ''
  for (let i = 0; i < count; i++) s += tokenWord(start + i)
  return s
}

/** Number of tokens in `text` (words separated by whitespace). */
export function countTextTokens(text: string): number {
  let n = 0
  let inWord = false
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    const space = c === 32 || (c >= 9 && c <= 13) || c === 0xa0 || c === 0x3000 || (c >= 0x2000 && c <= 0x200a)
    if (space) inWord = false
    else if (!inWord) {
      inWord = true
      n++
    }
  }
  return n
}

/** Token ids of `text`: "tokN" maps to N, any other word to a stable hash id ≥ 1,000,000. */
export function textTokenIds(text: string): number[] {
  const words = text.split(/\s+/).filter((w) => w.length > 0)
  return words.map((w) => {
    const m = /^tok(\d{1,9})$/.exec(w)
    if (m) return Number(m[1])
    let h = 0x811c9dc5
    for (let i = 0; i < w.length; i++) {
      h ^= w.charCodeAt(i)
      h = Math.imul(h, 0x01000193) >>> 0
    }
    return 1_000_000 + (h % 1_000_000_000)
  })
}

/** A chat message as the API accepts it: string content or an array of text parts. */
export interface ChatMessageLike {
  role?: unknown
  content?: unknown
}
