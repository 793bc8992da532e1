/**
 * Seeded synthetic prompts for one plan point. Completions prompts are token-id
 * arrays of exactly `input_len` ids (the server takes them as-is, so the
 * prompt length is exact); chat prompts are text of words, `input_len` of them
 * unless the sweep calibrated the count against the server's /tokenize so the
 * templated prompt is exactly `input_len` tokens (sweep/calibrate-prompts.ts).
 * Fewer or more words keep the same prefix, so the unique code stays.
 *
 * Every prompt starts with a unique code (its serial within the point, then the
 * point's seed), so no two prompts of a sweep share even their first 5 tokens:
 * whatever the engine's prefix-cache block size, the first block differs and
 * nothing can be served from another request's cache. Prompts shorter than
 * 5 tokens cannot carry the whole code and may collide.
 */
import type { Api, PlannedRequest } from '../types.js'
import { createRng, deriveSeed } from '../util/rng.js'
import { authHeaders } from '../util/auth.js'
import type { PlanPoint } from './plan.js'
import { WORDS } from './words.js'

/** Where and how to send: the server root (no trailing `/v1`), model id, API flavour, key. */
export interface RequestTarget {
  root: string
  model: string
  api: Api
  apiKey: string | null
  /** Fields joining every request's body (--extra-body; the methodology's own are refused at config time). */
  extraBody?: Readonly<Record<string, unknown>>
}

/** Token ids used for prompts: inside every common vocabulary, above most special/control ids. */
export const TOKEN_ID_MIN = 1000
export const TOKEN_ID_MAX = 30000
const DIGIT_BITS = 14 // 2^14 = 16384 ids per code digit: 1000..17383 stays inside the range

/**
 * Words of each chat prompt of a point, by serial (warmup first, then measured), as
 * calibrated against the server's tokenizer (sweep/calibrate-prompts.ts).
 */
export type PromptWordCounts = readonly number[]

/**
 * The warmup and measured requests of one point; warmup first, all ids and prompts distinct.
 * Chat prompts have `wordCounts[serial]` words when given (calibrated), else input_len words.
 */
export function buildRequests(
  point: PlanPoint,
  target: RequestTarget,
  wordCounts: PromptWordCounts | null = null,
): { warmup: PlannedRequest[]; measured: PlannedRequest[] } {
  const warmup: PlannedRequest[] = []
  const measured: PlannedRequest[] = []
  const words = (serial: number): number => wordCounts?.[serial] ?? point.shape.inputLen
  for (let i = 0; i < point.warmupRequests; i++) warmup.push(buildRequest(point, target, i, `sg-${point.key}-w${i}`, words(i)))
  for (let i = 0; i < point.numPrompts; i++) {
    const serial = point.warmupRequests + i
    measured.push(buildRequest(point, target, serial, `sg-${point.key}-m${i}`, words(serial)))
  }
  return { warmup, measured }
}

/** Number of prompts of a point (warmup and measured): serials run 0 .. promptCount − 1. */
export function promptCount(point: PlanPoint): number {
  return point.warmupRequests + point.numPrompts
}

/** The messages of chat prompt `serial` of a point, cut to `words` words: what buildRequests sends and calibration tokenizes. */
export function chatMessages(pointSeed: number, serial: number, words: number): { role: 'user'; content: string }[] {
  return [{ role: 'user', content: promptWords(pointSeed, serial, words).join(' ') }]
}

/** The endpoint URL for an API flavour under a server root. */
export function endpointUrl(root: string, api: Api): string {
  return `${root.replace(/\/+$/, '')}${api === 'chat' ? '/v1/chat/completions' : '/v1/completions'}`
}

function buildRequest(point: PlanPoint, target: RequestTarget, serial: number, id: string, chatWords: number): PlannedRequest {
  const { inputLen, outputLen } = point.shape
  const common = {
    // Extra fields first: the methodology's own are written over them (config time refuses a clash).
    ...target.extraBody,
    model: target.model,
    max_tokens: outputLen,
    // METHODOLOGY: without ignore_eos output lengths vary and the shape is no longer fixed.
    ignore_eos: true,
    stream: true,
    stream_options: { include_usage: true },
    temperature: 0,
  }
  const body =
    target.api === 'chat'
      ? { ...common, messages: chatMessages(point.seed, serial, chatWords) }
      : { ...common, prompt: promptTokenIds(point.seed, serial, inputLen) }
  const headers: Record<string, string> = { 'content-type': 'application/json', ...authHeaders(target.apiKey) }
  return {
    id,
    url: endpointUrl(target.root, target.api),
    body: JSON.stringify(body),
    headers,
    api: target.api,
    promptTokens: inputLen,
    maxTokens: outputLen,
  }
}

/** Exactly `length` token ids: a unique code (serial, point seed) then seeded filler. */
export function promptTokenIds(pointSeed: number, serial: number, length: number): number[] {
  const mask = (1 << DIGIT_BITS) - 1
  // Serial first (it differs between neighbours), then the 32-bit point seed in three digits.
  const code = [(serial >>> DIGIT_BITS) & mask, serial & mask, pointSeed >>> (2 * DIGIT_BITS), (pointSeed >>> DIGIT_BITS) & mask, pointSeed & mask].map(
    (d) => TOKEN_ID_MIN + d,
  )
  const rng = createRng(deriveSeed(pointSeed, 'prompt', serial))
  const ids = code.slice(0, length)
  while (ids.length < length) ids.push(rng.int(TOKEN_ID_MIN, TOKEN_ID_MAX))
  return ids
}

/** Exactly `length` words: a unique code (serial, point seed as base-256 words) then seeded filler. */
export function promptWords(pointSeed: number, serial: number, length: number): string[] {
  const digits = (v: number): number[] => [(v >>> 24) & 255, (v >>> 16) & 255, (v >>> 8) & 255, v & 255]
  const code = [...digits(serial >>> 0), ...digits(pointSeed >>> 0)].map((d) => WORDS[d]!)
  const rng = createRng(deriveSeed(pointSeed, 'words', serial))
  const words = code.slice(0, length)
  while (words.length < length) words.push(WORDS[rng.int(0, WORDS.length - 1)]!)
  return words
}
