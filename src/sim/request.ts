/**
 * Parse and check a completions or chat request body the way vLLM does:
 * what the simulator needs to serve it, or an ApiError with vLLM's status.
 */
import { ApiError } from './api-error.js'
import { applyChatTemplate } from './chat-template.js'
import { countTextTokens, textTokenIds, type ChatMessageLike } from './tokenizer.js'

export type SimApi = 'completions' | 'chat'

export interface SimRequest {
  api: SimApi
  model: string
  stream: boolean
  includeUsage: boolean
  /** Most tokens to generate. */
  maxTokens: number
  ignoreEos: boolean
  /** Prompt tokens the engine processes: after the chat template, after truncation. */
  promptTokens: number
  /** Token ids when the prompt was given as ids (completions) or was truncated, else null. */
  promptIds: readonly number[] | null
  /** Prompt text (a chat request's after the template) when not held as ids, else null. */
  promptText: string | null
}

/** Used when a request gives no max_tokens (the OpenAI completions default). */
const DEFAULT_MAX_TOKENS = 16

/**
 * Turn a parsed JSON body into a SimRequest; throws ApiError(400/404) like vLLM.
 * Chat messages go through the chat template (chat-template.ts). With
 * `truncatePrompt` set, only the last that many prompt tokens are kept, as
 * vLLM's `truncate_prompt_tokens` does: the server then serves less than it was sent.
 * With `vocab` set, prompt token ids ≥ vocab are refused as vLLM refuses them.
 */
export function parseSimRequest(
  api: SimApi,
  body: unknown,
  servedModel: string,
  maxModelLen: number,
  truncatePrompt: number | null = null,
  vocab: number | null = null,
): SimRequest {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) {
    throw new ApiError(400, 'Request body must be a JSON object')
  }
  const b = body as Record<string, unknown>
  const model = b.model === undefined || b.model === null ? servedModel : b.model
  if (typeof model !== 'string') throw new ApiError(400, '`model` must be a string', 'model')
  if (model !== servedModel) throw new ApiError(404, `The model \`${model}\` does not exist.`, 'model')

  const stream = optionalBool(b, 'stream') ?? false
  const ignoreEos = optionalBool(b, 'ignore_eos') ?? false
  let includeUsage = false
  if (b.stream_options !== undefined && b.stream_options !== null) {
    if (!stream) throw new ApiError(400, 'Stream options can only be defined when `stream=True`.', 'stream_options')
    if (typeof b.stream_options !== 'object') throw new ApiError(400, '`stream_options` must be an object', 'stream_options')
    includeUsage = optionalBool(b.stream_options as Record<string, unknown>, 'include_usage') ?? false
  }

  let promptTokens: number
  let promptIds: readonly number[] | null = null
  let promptText: string | null = null
  let idsGiven = false
  if (api === 'completions') {
    const p = pickPrompt(b.prompt)
    idsGiven = typeof p !== 'string'
    if (typeof p === 'string') {
      promptText = p
      promptTokens = countTextTokens(p)
    } else {
      promptIds = p
      promptTokens = p.length
    }
  } else {
    if (!Array.isArray(b.messages) || b.messages.length === 0) {
      throw new ApiError(400, '`messages` must be a non-empty array', 'messages')
    }
    for (const m of b.messages) {
      if (m === null || typeof m !== 'object' || typeof (m as ChatMessageLike).role !== 'string') {
        throw new ApiError(400, 'each message must be an object with a string `role`', 'messages')
      }
    }
    // As in vLLM, the template's tokens are prompt tokens: empty contents still make a prompt.
    promptText = applyChatTemplate(b.messages as ChatMessageLike[])
    promptTokens = countTextTokens(promptText)
  }
  if (truncatePrompt !== null && promptTokens > truncatePrompt) {
    promptIds = (promptIds ?? textTokenIds(promptText ?? '')).slice(-truncatePrompt)
    promptText = null
    promptTokens = promptIds.length
  }
  // After truncation, as vLLM validates what the engine would get; text prompts are never out of vocabulary.
  if (vocab !== null && idsGiven && promptIds !== null) checkVocab(promptIds, vocab)
  if (promptTokens === 0) throw new ApiError(400, 'The prompt must not be empty', api === 'chat' ? 'messages' : 'prompt')

  const rawMax = b.max_tokens ?? (api === 'chat' ? b.max_completion_tokens : undefined)
  let maxTokens: number
  if (rawMax === undefined || rawMax === null) maxTokens = Math.max(1, Math.min(DEFAULT_MAX_TOKENS, maxModelLen - promptTokens))
  else if (typeof rawMax !== 'number' || !Number.isInteger(rawMax) || rawMax < 1) {
    throw new ApiError(400, `max_tokens must be at least 1, got ${JSON.stringify(rawMax)}.`, 'max_tokens')
  } else maxTokens = rawMax
  if (promptTokens + maxTokens > maxModelLen) {
    throw new ApiError(
      400,
      `This model's maximum context length is ${maxModelLen} tokens. However, you requested ` +
        `${promptTokens + maxTokens} tokens (${promptTokens} in the messages, ${maxTokens} in the completion). ` +
        'Please reduce the length of the messages or completion.',
      'max_tokens',
    )
  }
  return { api, model, stream, includeUsage, maxTokens, ignoreEos, promptTokens, promptIds, promptText }
}

/**
 * vLLM checks prompt ids against the tokenizer's vocabulary before scheduling (its input
 * processor) and answers a 400 naming the largest id; only explicit ids can be out of range,
 * since text is tokenized by the model's own tokenizer.
 */
function checkVocab(ids: readonly number[], vocab: number): void {
  let max = -1
  for (const id of ids) if (id > max) max = id
  if (max >= vocab) throw new ApiError(400, `Token id ${max} is out of vocabulary`)
}

function optionalBool(o: Record<string, unknown>, key: string): boolean | undefined {
  const v = o[key]
  if (v === undefined || v === null) return undefined
  if (typeof v !== 'boolean') throw new ApiError(400, `\`${key}\` must be a boolean`, key)
  return v
}

/** A completions prompt: a string, token ids, or a list of either (the first is served). */
function pickPrompt(p: unknown): string | number[] {
  if (typeof p === 'string') return p
  if (Array.isArray(p)) {
    if (p.length === 0) throw new ApiError(400, 'The prompt must not be empty', 'prompt')
    if (p.every(isTokenId)) return p as number[]
    const first: unknown = p[0]
    if (typeof first === 'string') return first
    if (Array.isArray(first) && first.every(isTokenId)) return first as number[]
  }
  throw new ApiError(400, '`prompt` must be a string, an array of token ids, or an array of those', 'prompt')
}

function isTokenId(x: unknown): boolean {
  return typeof x === 'number' && Number.isInteger(x) && x >= 0
}
