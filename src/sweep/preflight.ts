import { UsageError } from '../errors.js'
import { streamRequest } from '../client/stream-request.js'
import { fetchModelCards, modelIds, tgiVersion } from '../client/endpoints.js'
import { authHeaders } from '../util/auth.js'
import { promptTokenIds, TOKEN_ID_MAX, TOKEN_ID_MIN } from '../plan/prompts.js'
import type { Api, PlannedRequest } from '../types.js'
import { Agent } from 'undici'

/**
 * Total deadline of one probe request (two tokens), ms: far above what a
 * loaded engine takes for it, and short enough that a server streaming
 * forever fails the preflight in under two minutes (three probes), not never.
 */
export const PREFLIGHT_DEADLINE_MS = 30_000

/** Prompt length of a completions probe, tokens: under one prefix-cache block of any common engine, so it caches nothing. */
const PROBE_PROMPT_TOKENS = 8

/** Seed of the probe's prompt: fixed, so every sweep probes alike (a sweep's own prompts start with their point's seed). */
const PROBE_SEED = 0x5e6a7e

/**
 * The probe's completions prompt: token ids synthesised as the sweep's are (src/plan/prompts.ts),
 * its last id the highest a sweep prompt can hold. A server that refuses the sweep's ids (a
 * vocabulary smaller than TOKEN_ID_MAX) then refuses the probe too, instead of failing every
 * request of the sweep while a text probe passed.
 */
function probePromptIds(): number[] {
  const ids = promptTokenIds(PROBE_SEED, 0, PROBE_PROMPT_TOKENS)
  ids[ids.length - 1] = TOKEN_ID_MAX
  return ids
}

/** What a sweep needs to know about the server before it starts. */
export interface ServerInfo {
  model: string
}

/**
 * Fail fast, with one clear line, when the server cannot serve the sweep:
 * unreachable, not OpenAI-compatible, unknown model, a probe shaped like the
 * sweep's requests refused (a client error such as HTTP 400, with the server's
 * own message), or every probe request failing. A probe that fails otherwise
 * is retried so one injected fault does not abort a sweep.
 */
export async function preflight(
  root: string,
  model: string | null,
  api: Api,
  apiKey: string | null,
  deadlineMs = PREFLIGHT_DEADLINE_MS,
  extraBody: Readonly<Record<string, unknown>> = {},
): Promise<ServerInfo> {
  let models: string[]
  try {
    models = modelIds((await fetchModelCards(root, { apiKey })) ?? [])
  } catch (err) {
    throw new UsageError(
      `Cannot list the models of ${root}: ${err instanceof Error ? err.message : String(err)}`,
      '--base-url is the server root, e.g. http://127.0.0.1:8000 (a trailing /v1 is accepted).',
    )
  }
  // TGI answers the OpenAI routes, but not to these rules: refused here, with why, before any probe.
  const tgi = await tgiVersion(root, { apiKey })
  if (tgi !== null) {
    throw new UsageError(
      `The server at ${root} is Hugging Face TGI ${tgi} (its /info names the router text-generation-router), which servegate cannot measure to its rules: TGI takes string prompts only and drops ignore_eos, so no request is held to its output length`,
      'Serve the model with vLLM, SGLang, TensorRT-LLM, llama.cpp (llama-server) or Dynamo; docs/engines.md says what each needs.',
    )
  }
  const chosen = model ?? models[0]
  if (!chosen) throw new UsageError(`${root}/v1/models lists no model`, 'Pass --model ID.')
  if (model && models.length > 0 && !models.includes(model)) {
    throw new UsageError(`Model "${model}" is not served at ${root}; it serves: ${models.join(', ')}`, 'Check --model or server.model.')
  }

  const path = api === 'chat' ? '/v1/chat/completions' : '/v1/completions'
  // The same kind of prompt the sweep sends: text for chat, token ids for completions.
  const promptIds = api === 'chat' ? null : probePromptIds()
  const body = promptIds === null ? { model: chosen, messages: [{ role: 'user', content: 'servegate preflight' }] } : { model: chosen, prompt: promptIds }
  const dispatcher = new Agent({ connections: 1 })
  let lastError = ''
  try {
    for (let attempt = 1; attempt <= 3; attempt++) {
      const req: PlannedRequest = {
        id: `sg-preflight-${attempt}`,
        url: root + path,
        // The sweep's extra body fields too: a server that needs them refuses the probe without them.
        body: JSON.stringify({ ...extraBody, ...body, max_tokens: 2, ignore_eos: true, stream: true, stream_options: { include_usage: true } }),
        headers: authHeaders(apiKey),
        api,
        promptTokens: promptIds?.length ?? 2,
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
      // A client error is the server's answer to this request, not a passing fault: asking again
      // gets the same answer, and every request of the sweep would get it too.
      if (rec.error.kind === 'http_status' && isRefusal(rec.error.detail)) {
        const what =
          promptIds === null
            ? 'a chat probe request'
            : `a probe request shaped like the sweep's (${promptIds.length} prompt token ids in ${TOKEN_ID_MIN}..${TOKEN_ID_MAX})`
        throw new UsageError(
          `The server at ${root}${path} refused ${what}: ${rec.error.detail}`,
          promptIds === null
            ? 'Check the server log; servegate sends stream: true and ignore_eos: true.'
            : `Every request of the sweep would be refused too. servegate's completions prompts are token ids in ${TOKEN_ID_MIN}..${TOKEN_ID_MAX}: a model with a smaller vocabulary needs --api chat (text prompts); else check the server log.`,
        )
      }
    }
  } finally {
    await dispatcher.close()
  }
  throw new UsageError(
    `The server at ${root}${path} failed a probe request three times (${lastError})`,
    'Check the server log; servegate sends stream: true and ignore_eos: true.',
  )
}

/** True for an `HTTP 4xx: …` detail other than 408 and 429, which a server may answer to a request it would serve later. */
function isRefusal(detail: string): boolean {
  const status = Number(/^HTTP (\d{3})\b/.exec(detail)?.[1])
  return status >= 400 && status < 500 && status !== 408 && status !== 429
}
