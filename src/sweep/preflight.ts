import { UsageError } from '../errors.js'
import { streamRequest } from '../client/stream-request.js'
import { fetchJson, MAX_MODELS_BODY_BYTES } from '../client/endpoints.js'
import { authHeaders } from '../util/auth.js'
import type { Api, PlannedRequest } from '../types.js'
import { Agent } from 'undici'

/**
 * Total deadline of one probe request (two tokens), ms: far above what a
 * loaded engine takes for it, and short enough that a server streaming
 * forever fails the preflight in under two minutes (three probes), not never.
 */
export const PREFLIGHT_DEADLINE_MS = 30_000

/** What a sweep needs to know about the server before it starts. */
export interface ServerInfo {
  model: string
}

/**
 * Fail fast, with one clear line, when the server cannot serve the sweep:
 * unreachable, not OpenAI-compatible, unknown model, or every probe request
 * failing. A probe is retried so one injected fault does not abort a sweep.
 */
export async function preflight(root: string, model: string | null, api: Api, apiKey: string | null, deadlineMs = PREFLIGHT_DEADLINE_MS): Promise<ServerInfo> {
  let models: string[]
  try {
    const j = (await fetchJson(`${root}/v1/models`, { headers: authHeaders(apiKey), maxBytes: MAX_MODELS_BODY_BYTES })) as { data?: unknown }
    models = Array.isArray(j.data) ? j.data.flatMap((m: { id?: unknown }) => (typeof m?.id === 'string' ? [m.id] : [])) : []
  } catch (err) {
    throw new UsageError(
      `Cannot list the models of ${root}: ${err instanceof Error ? err.message : String(err)}`,
      '--base-url is the server root, e.g. http://127.0.0.1:8000 (a trailing /v1 is accepted).',
    )
  }
  const chosen = model ?? models[0]
  if (!chosen) throw new UsageError(`${root}/v1/models lists no model`, 'Pass --model ID.')
  if (model && models.length > 0 && !models.includes(model)) {
    throw new UsageError(`Model "${model}" is not served at ${root}; it serves: ${models.join(', ')}`, 'Check --model or server.model.')
  }

  const path = api === 'chat' ? '/v1/chat/completions' : '/v1/completions'
  const body =
    api === 'chat'
      ? { model: chosen, messages: [{ role: 'user', content: 'servegate preflight' }] }
      : { model: chosen, prompt: 'servegate preflight' }
  const dispatcher = new Agent({ connections: 1 })
  let lastError = ''
  try {
    for (let attempt = 1; attempt <= 3; attempt++) {
      const req: PlannedRequest = {
        id: `sg-preflight-${attempt}`,
        url: root + path,
        body: JSON.stringify({ ...body, max_tokens: 2, ignore_eos: true, stream: true, stream_options: { include_usage: true } }),
        headers: authHeaders(apiKey),
        api,
        promptTokens: 2,
        maxTokens: 2,
      }
      const rec = await streamRequest(req, {
        dispatcher,
        now: () => process.hrtime.bigint(),
        epochNs: process.hrtime.bigint(),
        idleTimeoutMs: deadlineMs,
        deadlineMs,
      })
      if (!rec.error) return { model: chosen }
      lastError = `${rec.error.kind}: ${rec.error.detail}`
    }
  } finally {
    await dispatcher.close()
  }
  throw new UsageError(`The server at ${root}${path} failed a probe request three times (${lastError})`, 'Check the server log; servegate sends stream: true and ignore_eos: true.')
}
