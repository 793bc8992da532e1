/**
 * The simulator's HTTP surface, routed by method and path: the OpenAI/vLLM
 * endpoints plus GET /sim/trace/:id (ground truth) and DELETE /sim/traces.
 */
import type { IncomingMessage, ServerResponse } from 'node:http'
import { HARNESS_VERSION } from '../version.js'
import { ApiError } from './api-error.js'
import { nowNs } from './clock.js'
import type { SimContext } from './context.js'
import { handleGenerate } from './generate.js'
import { readJsonBody, sendError, sendJson, sendThrown } from './http-util.js'
import { applyChatTemplate } from './chat-template.js'
import { textTokenIds, type ChatMessageLike } from './tokenizer.js'
import { traceToJson } from './trace.js'

/** Engine name reported by GET /version. */
export const SIM_ENGINE_NAME = 'servegate-sim'

const CREATED = Math.floor(Date.now() / 1000)

/** Route one request. Never throws: failures become vLLM-style error responses. */
export function handleRequest(ctx: SimContext, req: IncomingMessage, res: ServerResponse): void {
  const arrivalNs = nowNs()
  const url = req.url ?? '/'
  const q = url.indexOf('?')
  const path = q < 0 ? url : url.slice(0, q)
  const method = req.method ?? 'GET'
  const run = (p: Promise<void>): void => {
    p.catch((err: unknown) => sendThrown(res, err))
  }
  if (method === 'POST') {
    if (path === '/v1/completions') return run(handleGenerate(ctx, 'completions', req, res, arrivalNs))
    if (path === '/v1/chat/completions') return run(handleGenerate(ctx, 'chat', req, res, arrivalNs))
    if (path === '/tokenize' && ctx.opts.tokenize !== 'none')
      return run(ctx.opts.tokenize === 'llama-server' ? llamaTokenize(req, res) : tokenize(ctx, req, res))
    if (path === '/apply-template' && ctx.opts.tokenize === 'llama-server') return run(llamaApplyTemplate(req, res))
  } else if (method === 'GET') {
    if (path === '/health') {
      res.writeHead(200, { 'content-length': 0 })
      res.end()
      return
    }
    if (path === '/version') return sendJson(res, 200, { version: HARNESS_VERSION, engine: SIM_ENGINE_NAME })
    if (path === '/v1/models') return sendJson(res, 200, models(ctx))
    if (path === '/metrics') {
      const text = ctx.metrics.render(ctx.opts.model, ctx.engine.gauges())
      res.writeHead(200, { 'content-type': 'text/plain; version=0.0.4; charset=utf-8' })
      res.end(text)
      return
    }
    if (path.startsWith('/sim/trace/')) {
      const id = decodeURIComponent(path.slice('/sim/trace/'.length))
      const t = ctx.traces.get(id)
      if (!t) return sendError(res, 404, `No trace for request id \`${id}\` (unknown, or dropped beyond the trace limit).`)
      return sendJson(res, 200, traceToJson(t))
    }
  } else if (method === 'DELETE' && path === '/sim/traces') {
    ctx.traces.clear()
    res.writeHead(204)
    res.end()
    return
  }
  const known = ['/v1/completions', '/v1/chat/completions', '/health', '/version', '/v1/models', '/metrics']
  if (ctx.opts.tokenize !== 'none') known.push('/tokenize')
  if (known.includes(path)) return sendError(res, 405, `Method ${method} not allowed on ${path}`)
  sendError(res, 404, `Not Found: ${method} ${path}`)
}

function models(ctx: SimContext): unknown {
  const m = ctx.opts.model
  return {
    object: 'list',
    data: [
      {
        id: m,
        object: 'model',
        created: CREATED,
        owned_by: 'servegate',
        root: m,
        parent: null,
        max_model_len: ctx.maxModelLen,
        revision: ctx.revision,
        permission: [],
      },
    ],
  }
}

/**
 * llama.cpp's `POST /tokenize` (tools/server): it reads `content` (a string) and `add_special`
 * only, and answers `{tokens}`; a body without `content` tokenizes the empty string, so vLLM's
 * `{prompt}` gets `{tokens: []}` with status 200. The simulator's words have no special tokens.
 */
async function llamaTokenize(req: IncomingMessage, res: ServerResponse): Promise<void> {
  const body = await readJsonBody(req)
  const b = (body !== null && typeof body === 'object' && !Array.isArray(body) ? body : {}) as Record<string, unknown>
  const content = typeof b.content === 'string' ? b.content : ''
  sendJson(res, 200, { tokens: content === '' ? [] : textTokenIds(content) })
}

/** llama.cpp's `POST /apply-template`: a chat request's messages under the template, with the generation prompt, as `{prompt}`. */
async function llamaApplyTemplate(req: IncomingMessage, res: ServerResponse): Promise<void> {
  const body = await readJsonBody(req)
  const b = (body !== null && typeof body === 'object' && !Array.isArray(body) ? body : {}) as Record<string, unknown>
  if (!Array.isArray(b.messages)) throw new ApiError(400, "'messages' is required", 'messages')
  sendJson(res, 200, { prompt: applyChatTemplate(b.messages as ChatMessageLike[], true) })
}

async function tokenize(ctx: SimContext, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const body = await readJsonBody(req)
  if (body === null || typeof body !== 'object' || Array.isArray(body)) throw new ApiError(400, 'Request body must be a JSON object')
  const b = body as Record<string, unknown>
  if (b.model !== undefined && b.model !== null && b.model !== ctx.opts.model) {
    throw new ApiError(404, `The model \`${String(b.model)}\` does not exist.`, 'model')
  }
  let tokens: number[]
  if (typeof b.prompt === 'string') tokens = textTokenIds(b.prompt)
  else if (Array.isArray(b.prompt) && b.prompt.every((x) => Number.isInteger(x) && (x as number) >= 0)) tokens = b.prompt as number[]
  else if (Array.isArray(b.messages)) {
    // vLLM's /tokenize applies the chat template to messages, with the generation prompt unless told otherwise.
    const gen = b.add_generation_prompt ?? true
    if (typeof gen !== 'boolean') throw new ApiError(400, '`add_generation_prompt` must be a boolean', 'add_generation_prompt')
    tokens = textTokenIds(applyChatTemplate(b.messages as ChatMessageLike[], gen))
  } else throw new ApiError(400, 'Either `prompt` (string or token ids) or `messages` is required', 'prompt')
  sendJson(res, 200, { count: tokens.length, max_model_len: ctx.maxModelLen, tokens })
}
