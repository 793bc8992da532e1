/** A streamed request's measurements as the RequestRecord the metrics stage reads. */
import type { ErrorKind, PlannedRequest, RequestRecord } from '../types.js'
import { textOf, type StreamState } from './stream-events.js'

/** The record of `req`: times in ms from the run's epoch (start) or from the send (everything else). */
export function streamRecord(
  req: PlannedRequest,
  state: StreamState,
  sentNs: bigint,
  endNs: bigint,
  epochNs: bigint,
  error: { kind: ErrorKind; detail: string } | null,
): RequestRecord {
  const n = state.count
  const arrivals = new Array<number>(n)
  for (let i = 0; i < n; i++) arrivals[i] = state.arrivalsMs[i] as number
  return {
    id: req.id,
    startMs: Number(sentNs - epochNs) / 1e6,
    ttftMs: n > 0 ? (arrivals[0] as number) : null,
    chunkArrivalsMs: arrivals,
    e2elMs: n > 0 ? (arrivals[n - 1] as number) : null,
    streamEndMs: Number(endNs - sentNs) / 1e6,
    contentChunks: n,
    usageCompletionTokens: state.usageCompletion,
    usagePromptTokens: state.usagePrompt,
    ...(state.usageCached !== null ? { usageCachedTokens: state.usageCached } : {}),
    promptTokens: req.promptTokens,
    maxTokens: req.maxTokens,
    text: textOf(state),
    sawDone: state.sawDone,
    finishReason: state.finishReason,
    error,
  }
}
