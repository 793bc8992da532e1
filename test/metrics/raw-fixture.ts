import type { RawRun, RequestRecord } from '../../src/types.js'

/** A completed record sent at `startMs` whose content chunks arrive at `chunks` (ms since send). */
export function rec(startMs: number, chunks: number[], over: Partial<RequestRecord> = {}): RequestRecord {
  return {
    id: `r${startMs}`,
    startMs,
    ttftMs: chunks[0] ?? null,
    chunkArrivalsMs: chunks,
    e2elMs: chunks[chunks.length - 1] ?? null,
    streamEndMs: (chunks[chunks.length - 1] ?? 0) + 1,
    contentChunks: chunks.length,
    usageCompletionTokens: chunks.length,
    usagePromptTokens: 10,
    promptTokens: 10,
    maxTokens: chunks.length,
    text: '',
    sawDone: true,
    finishReason: 'length',
    error: null,
    ...over,
  }
}

export function raw(concurrency: number, records: RequestRecord[], startMs: number, endMs: number): RawRun {
  return {
    concurrency,
    records,
    warmupRequests: 4,
    startMs,
    endMs,
    client: {
      workers: 1,
      eventLoopUtilization: 0.3,
      eventLoopDelayP99Ms: 1.5,
      sendLagP50Ms: 0.2,
      sendLagP99Ms: 0.9,
      meanInFlight: concurrency,
      eventsPerSecond: 1234,
    },
    startedAt: '2025-01-01T00:00:00.000Z',
    finishedAt: '2025-01-01T00:00:01.000Z',
  }
}
