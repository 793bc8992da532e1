/** Planned requests for load tests against stream-server.mjs. */
import type { PlannedRequest } from '../../src/types.js'

export function plan(baseUrl: string, n: number, tag: string, maxTokens: number, model = 'm'): PlannedRequest[] {
  return Array.from({ length: n }, (_, i) => ({
    id: `${tag}-${i}`,
    url: `${baseUrl}/v1/completions`,
    body: JSON.stringify({ model, prompt: [1, 2, 3, 4], max_tokens: maxTokens, stream: true, stream_options: { include_usage: true }, ignore_eos: true }),
    headers: {},
    api: 'completions' as const,
    promptTokens: 4,
    maxTokens,
  }))
}
