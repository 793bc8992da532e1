// The front's dialects: what differs between the engines whose HTTP API it speaks in front of
// llama.cpp, and only what the engine itself does (each behaviour names the engine source it
// copies). Generation (/v1/completions, /v1/chat/completions, their streams and usage) is common to
// all four and lives in front.mjs; a dialect says how a prompt becomes tokens, which side endpoints
// exist and what they answer, and how errors look.
//
//   vllm          the front's first shape (the lane's engine.test.ts): vLLM's /tokenize, llama.cpp's
//                 counters at /metrics, {version, engine} at /version.
//   llama-server  llama.cpp's own server (tools/server/server-context.cpp).
//   trtllm        TensorRT-LLM's trtllm-serve (tensorrt_llm/serve/openai_server.py).
//   sglang        SGLang (python/sglang/srt/entrypoints/http_server.py).
import { ApiError, readJson, sendJson, sendText } from './http.mjs'
import { llamacppText, sglangText, trtllmIterationStats, trtllmText } from './metrics.mjs'

/** The engines the front can speak as (--dialect). */
export const DIALECTS = ['vllm', 'llama-server', 'trtllm', 'sglang']

const PROMETHEUS = 'text/plain; version=0.0.4; charset=utf-8'

/**
 * The dialect `name` over `engine` (front.mjs): `promptOf(kind, body)` gives a request's prompt
 * tokens, `routes` maps `METHOD /path` to a handler, `errorBody(status, message)` and
 * `notFound(method, path)` shape errors as the engine does.
 */
export function dialect(name, engine) {
  const make = { vllm, 'llama-server': llamaServer, trtllm, sglang }[name]
  if (make === undefined) throw new Error(`--dialect ${name}: expected one of ${DIALECTS.join(', ')}`)
  return make(engine)
}

/** A completions prompt: token ids as they are (no BOS: vLLM, llama-server, trtllm-serve and SGLang all take ids as sent), or text. */
function completionsPrompt(engine, body, textTokens) {
  const p = body.prompt
  if (typeof p === 'string') return textTokens(p)
  if (Array.isArray(p) && p.length > 0 && p.every((t) => Number.isInteger(t))) {
    const bad = p.find((t) => t < 0 || t >= engine.vocabSize)
    if (bad !== undefined) throw new ApiError(400, `token id ${bad} is outside the vocabulary (0..${engine.vocabSize - 1})`)
    return p
  }
  throw new ApiError(400, '`prompt` must be a string or a non-empty array of token ids')
}

function messagesOf(body) {
  if (!Array.isArray(body.messages) || body.messages.length === 0) throw new ApiError(400, '`messages` must be a non-empty array')
  return body.messages
}

/** OpenAI-style errors: {object: "error", message, type, param, code} (vLLM's, trtllm-serve's and SGLang's ErrorResponse). */
function openaiError(status, message) {
  return { object: 'error', message, type: status === 500 ? 'InternalServerError' : 'BadRequestError', param: null, code: status }
}

/** FastAPI's answer to a path no route serves (trtllm-serve, SGLang). */
const fastapiNotFound = () => new ApiError(404, 'Not Found', { detail: 'Not Found' })

function vllm(engine) {
  const chat = (body) => [engine.bos, ...engine.tokenize(engine.renderChat(messagesOf(body), true), true)]
  const text = (t, addSpecial) => (addSpecial ? [engine.bos, ...engine.tokenize(t, false)] : engine.tokenize(t, false))
  return {
    checkModel: true,
    promptOf: (kind, body) => (kind === 'chat' ? chat(body) : completionsPrompt(engine, body, (t) => text(t, body.add_special_tokens !== false))),
    routes: {
      // vLLM's shape: {prompt, add_special_tokens} or {messages, add_generation_prompt} → {count, max_model_len, tokens}.
      'POST /tokenize': async (req, res) => {
        const body = await readJson(req)
        let tokens
        if (Array.isArray(body.messages))
          tokens = [engine.bos, ...engine.tokenize(engine.renderChat(messagesOf(body), body.add_generation_prompt !== false), true)]
        else if (typeof body.prompt === 'string') tokens = text(body.prompt, body.add_special_tokens !== false)
        else throw new ApiError(400, '`prompt` (a string) or `messages` is required')
        sendJson(res, 200, { count: tokens.length, max_model_len: engine.context, tokens })
      },
      'GET /health': (_req, res) => sendJson(res, 200, {}),
      'GET /version': (_req, res) => sendJson(res, 200, { version: engine.version, engine: 'llama.cpp (node-llama-cpp)' }),
      'GET /v1/models': (_req, res) =>
        sendJson(res, 200, {
          object: 'list',
          data: [{ id: engine.modelId, object: 'model', created: 0, owned_by: 'llama.cpp', max_model_len: engine.context }],
        }),
      'GET /metrics': (_req, res) => sendText(res, 200, llamacppText(engine.stats), PROMETHEUS),
    },
    errorBody: (status, message) => ({ object: 'error', type: status === 500 ? 'InternalServerError' : 'BadRequestError', message, code: status }),
    notFound: (method, path) => new ApiError(404, `Not Found: ${method} ${path}`),
  }
}

// llama.cpp's llama-server, tools/server/server-context.cpp (and server-common.cpp's tokenize_mixed).
function llamaServer(engine) {
  // tokenize_mixed: a string, or an array of strings and ids; the first string alone gets the special tokens.
  const mixed = (content, addSpecial, parseSpecial) => {
    if (typeof content === 'string') return [...(addSpecial ? [engine.bos] : []), ...engine.tokenize(content, parseSpecial)]
    if (!Array.isArray(content)) throw new ApiError(400, '"content" must be a string or an array')
    const out = []
    content.forEach((p, i) => {
      if (typeof p === 'string') out.push(...(i === 0 && addSpecial ? [engine.bos] : []), ...engine.tokenize(p, parseSpecial))
      else if (Number.isInteger(p)) out.push(p)
      else throw new ApiError(400, '"content" items must be strings or token ids')
    })
    return out
  }
  // oaicompat_chat_params_parse renders the model's template (the generation prompt on by default).
  const render = (body) => engine.renderChat(messagesOf(body), body.add_generation_prompt !== false)
  return {
    checkModel: false,
    // handle_completions_impl: tokenize_input_prompts(..., add_special = true, parse_special = true), for the
    // chat's rendered prompt too, so the chat prompt starts with BOS where the model adds one.
    promptOf: (kind, body) => (kind === 'chat' ? mixed(render(body), true, true) : completionsPrompt(engine, body, (t) => mixed(t, true, true))),
    routes: {
      // post_tokenize reads only `content` (add_special false, parse_special true, with_pieces false by
      // default) and answers {"tokens": []} to any other body.
      'POST /tokenize': async (req, res) => {
        const body = await readJson(req)
        if (!('content' in body)) return sendJson(res, 200, { tokens: [] })
        const tokens = mixed(body.content, body.add_special === true, body.parse_special !== false)
        sendJson(res, 200, { tokens: body.with_pieces === true ? tokens.map((id) => ({ id, piece: engine.piece(id) })) : tokens })
      },
      // post_apply_template: the chat completion's prompt, without the inference.
      'POST /apply-template': async (req, res) => sendJson(res, 200, { prompt: render(await readJson(req)) }),
      'GET /health': (_req, res) => sendJson(res, 200, { status: 'ok' }),
      // get_models: owned_by "llamacpp", and the model's meta (no /version: its build is in /props).
      'GET /v1/models': (_req, res) =>
        sendJson(res, 200, {
          models: [{ name: engine.modelId, model: engine.modelId, type: 'model', capabilities: ['completion'], details: { format: 'gguf' } }],
          object: 'list',
          data: [{ id: engine.modelId, object: 'model', created: Math.floor(Date.now() / 1000), owned_by: 'llamacpp', meta: engine.meta }],
        }),
      'GET /metrics': (_req, res) => sendText(res, 200, llamacppText(engine.stats), PROMETHEUS),
    },
    // format_error_response: {"error": {code, message, type}}.
    errorBody: (status, message) => ({
      error: { code: status, message, type: status === 404 ? 'not_found_error' : status === 500 ? 'server_error' : 'invalid_request_error' },
    }),
    notFound: () => new ApiError(404, 'File Not Found'),
  }
}

// TensorRT-LLM's trtllm-serve, tensorrt_llm/serve/openai_server.py (register_routes) and openai_protocol.py.
function trtllm(engine) {
  return {
    checkModel: false,
    promptOf: (kind, body) =>
      kind === 'chat'
        ? // openai_chat: apply_chat_template renders the prompt, tokenized with the request's
          // add_special_tokens, default False ("the chat template takes care of adding the special tokens").
          [...(body.add_special_tokens === true ? [engine.bos] : []), ...engine.tokenize(engine.renderChat(messagesOf(body), true), true)]
        : // CompletionRequest.add_special_tokens defaults to True: a text prompt gets BOS.
          completionsPrompt(engine, body, (t) => [...(body.add_special_tokens !== false ? [engine.bos] : []), ...engine.tokenize(t, true)]),
    // No /tokenize route at all.
    routes: {
      'GET /health': (_req, res) => sendText(res, 200, ''),
      'GET /version': (_req, res) => sendJson(res, 200, { version: engine.version }),
      // get_model: ModelCard(id=...), owned_by defaults to "tensorrt_llm".
      'GET /v1/models': (_req, res) =>
        sendJson(res, 200, {
          object: 'list',
          data: [{ id: engine.modelId, object: 'model', created: Math.floor(Date.now() / 1000), owned_by: 'tensorrt_llm' }],
        }),
      // get_iteration_stats: JSON, not Prometheus text.
      'GET /metrics': (_req, res) => sendJson(res, 200, trtllmIterationStats(engine.stats, engine.sequences)),
      // mount_metrics: the collector's Prometheus text (with return_perf_metrics).
      'GET /prometheus/metrics': (_req, res) => sendText(res, 200, trtllmText(engine.stats), PROMETHEUS),
    },
    errorBody: openaiError,
    notFound: fastapiNotFound,
  }
}

/** SGLang's answer to a request its models do not validate: 400 (its RequestValidationError handler overrides FastAPI's 422). */
function validation(message) {
  return new ApiError(400, message, { object: 'error', message, type: 'Bad Request', param: null, code: 400 })
}

// SGLang, python/sglang/srt/entrypoints/http_server.py and openai/serving_tokenize.py.
function sglang(engine) {
  const text = (t, addSpecial) => [...(addSpecial ? [engine.bos] : []), ...engine.tokenize(t, true)]
  return {
    checkModel: false,
    // validate_json_request: every OpenAI route takes application/json only (a 400 otherwise).
    checkRequest(req) {
      if (req.method !== 'POST') return
      const type = String(req.headers['content-type'] ?? '')
        .split(';')[0]
        .trim()
        .toLowerCase()
      if (type !== 'application/json') throw validation("Unsupported Media Type: Only 'application/json' is allowed")
    },
    promptOf: (kind, body) =>
      kind === 'chat'
        ? // serving_chat.py: tokenizer.apply_chat_template(..., tokenize=True): the template's tokens, no BOS on top.
          engine.tokenize(engine.renderChat(messagesOf(body), true), true)
        : completionsPrompt(engine, body, (t) => text(t, true)),
    routes: {
      // TokenizeRequest {prompt: str | List[str], add_special_tokens = True}: `prompt` only, no messages.
      'POST /tokenize': (req, res) => tokenize(req, res),
      'POST /v1/tokenize': (req, res) => tokenize(req, res),
      'GET /health': (_req, res) => sendText(res, 200, ''),
      // ModelCard: owned_by "sglang", root, max_model_len. No /version route (the version is in /server_info).
      'GET /v1/models': (_req, res) =>
        sendJson(res, 200, {
          object: 'list',
          data: [
            {
              id: engine.modelId,
              object: 'model',
              created: Math.floor(Date.now() / 1000),
              owned_by: 'sglang',
              root: engine.modelId,
              max_model_len: engine.context,
            },
          ],
        }),
      'GET /metrics': (_req, res) => sendText(res, 200, sglangText(engine.stats, engine.modelId), PROMETHEUS),
    },
    errorBody: openaiError,
    notFound: fastapiNotFound,
  }

  async function tokenize(req, res) {
    const body = await readJson(req)
    const add = body.add_special_tokens !== false
    const p = body.prompt
    // A body without `prompt` fails validation: 400 (SGLang's RequestValidationError handler).
    if (typeof p === 'string') {
      const tokens = text(p, add)
      return sendJson(res, 200, { tokens, count: tokens.length, max_model_len: engine.context })
    }
    if (Array.isArray(p) && p.every((x) => typeof x === 'string')) {
      const tokens = p.map((x) => text(x, add))
      return sendJson(res, 200, { tokens, count: tokens.map((t) => t.length), max_model_len: engine.context })
    }
    throw validation('1 validation error for TokenizeRequest\nprompt\n  Field required')
  }
}
