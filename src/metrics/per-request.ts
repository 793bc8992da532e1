/**
 * The per-request figures every summary is built from (docs/methodology.md,
 * "Definitions", matching `vllm bench serve`). Times in ms, client clock.
 */
import type { RequestRecord } from '../types.js'

export interface RequestFigures {
  /** Send → first content chunk, ms; null when no chunk arrived. */
  ttftMs: number | null
  /** Send → last content chunk, ms; null when no chunk arrived. */
  e2elMs: number | null
  /** Gaps between consecutive content chunks, ms (vLLM's per-chunk ITL). */
  itlMs: number[]
  /** Estimated tokens each chunk carried: usage.completion_tokens / contentChunks, else 1. */
  tokensPerChunk: number
  /** usage.completion_tokens when the server reported it, else the client's chunk count. */
  outputTokens: number
  /** usage.prompt_tokens when reported, else the planned prompt length. */
  promptTokens: number
  /** (E2EL − TTFT) / (outputTokens − 1), ms; null for fewer than 2 tokens. */
  tpotMs: number | null
}

/** A request counts as completed when it carries no error. */
export function isCompleted(rec: Pick<RequestRecord, 'error'>): boolean {
  return rec.error === null
}

/** Derive one request's figures from its record. */
export function requestFigures(rec: RequestRecord): RequestFigures {
  const arrivals = rec.chunkArrivalsMs
  const itlMs: number[] = []
  for (let i = 1; i < arrivals.length; i++) itlMs.push((arrivals[i] as number) - (arrivals[i - 1] as number))
  const usage = rec.usageCompletionTokens
  // Speculative decoding and similar send several tokens per chunk; spread
  // the server's count evenly over the chunks the client saw.
  const tokensPerChunk = usage !== null && rec.contentChunks > 0 ? usage / rec.contentChunks : 1
  const outputTokens = usage ?? rec.contentChunks
  const tpotMs = outputTokens > 1 && rec.ttftMs !== null && rec.e2elMs !== null ? (rec.e2elMs - rec.ttftMs) / (outputTokens - 1) : null
  return {
    ttftMs: rec.ttftMs,
    e2elMs: rec.e2elMs,
    itlMs,
    tokensPerChunk,
    outputTokens,
    promptTokens: rec.usagePromptTokens ?? rec.promptTokens,
    tpotMs,
  }
}
