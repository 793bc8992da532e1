#!/usr/bin/env node
// A thin OpenAI-compatible HTTP front over llama.cpp (node-llama-cpp, CPU build), for servegate's
// real-engine test lane (test/llama/README.md). Every token is llama.cpp's work: the front only
// queues requests onto the context's sequences (llama.cpp batches the sequences that are
// generating), turns tokens into streamed chunks, and counts and times what it sees.
//
//   node front.mjs --model FILE.gguf [--dialect vllm|llama-server|trtllm|sglang] [--prefix-cache]
//                  [--port 0] [--host 127.0.0.1] [--sequences 4] [--context-size 512] [--threads 1]
//                  [--served-model-name NAME]
//
// Common to every dialect: POST /v1/completions and /v1/chat/completions (stream or not;
// stream_options.include_usage, max_tokens, ignore_eos, temperature, seed), and GET /front/trace/ID:
// the front's own clock (CLOCK_MONOTONIC, ns) for one request by its x-request-id: arrival, each
// streamed token's write, the end, its prompt's tokens and how many llama.cpp reused from the cache.
// The dialect (dialects.mjs) gives the rest as that engine has it: how a prompt becomes tokens,
// /tokenize (or none), /apply-template, /v1/models, /version, /health, /metrics, and its errors.
//
// --prefix-cache: a sequence keeps its history when its request ends, a request takes the free
// sequence whose history shares the longest prefix with its prompt where that is at least half of
// it (else the one used longest ago), and llama.cpp evaluates only the rest: the shared prefix's KV cache is reused, not recomputed, as
// SGLang's radix cache and llama-server's cache_prompt do (at least one prompt token is evaluated,
// as both keep one to compute the first token from). Those reused tokens are the cached tokens the
// metrics report. Without it every sequence is cleared after each request: nothing is reused.
//
// Once the model is loaded it prints `llama front: listening on http://HOST:PORT` and serves.
import { readFileSync, statSync } from 'node:fs'
import { createServer } from 'node:http'
import { basename } from 'node:path'
import { parseArgs } from 'node:util'
import { Template } from '@huggingface/jinja'
import { getLlama, LlamaLogLevel } from 'node-llama-cpp'
import { dialect, DIALECTS } from './dialects.mjs'
import { ApiError, readJson, sendJson } from './http.mjs'
import { FrontStats } from './metrics.mjs'

const { values: opt } = parseArgs({
  options: {
    model: { type: 'string' },
    dialect: { type: 'string', default: 'vllm' },
    'prefix-cache': { type: 'boolean', default: false },
    port: { type: 'string', default: '0' },
    host: { type: 'string', default: '127.0.0.1' },
    sequences: { type: 'string', default: '4' },
    'context-size': { type: 'string', default: '512' },
    threads: { type: 'string', default: '1' },
    'served-model-name': { type: 'string' },
  },
})
if (!opt.model) {
  console.error('llama front: --model FILE.gguf is required')
  process.exit(2)
}
if (!DIALECTS.includes(opt.dialect)) {
  console.error(`llama front: --dialect ${opt.dialect}: expected one of ${DIALECTS.join(', ')}`)
  process.exit(2)
}
const SEQUENCES = Number(opt.sequences)
const CONTEXT = Number(opt['context-size'])
const PREFIX_CACHE = opt['prefix-cache']
const MODEL_ID = opt['served-model-name'] ?? basename(opt.model).replace(/\.gguf$/, '')
const TRACE_LIMIT = 4096
const VERSION = JSON.parse(readFileSync(new URL('./node_modules/node-llama-cpp/package.json', import.meta.url), 'utf8')).version

const llama = await getLlama({ gpu: false, build: 'never', usePrebuiltBinaries: true, progressLogs: false, logLevel: LlamaLogLevel.error })
const model = await llama.loadModel({ modelPath: opt.model, gpuLayers: 0 })
const context = await model.createContext({ sequences: SEQUENCES, contextSize: CONTEXT * SEQUENCES, threads: Number(opt.threads), batchSize: 512 })
const meta = model.fileInfo.metadata
const pieces = meta.tokenizer.ggml.tokens
const types = meta.tokenizer.ggml.token_type
const template = meta.tokenizer.chat_template ? new Template(meta.tokenizer.chat_template) : null
const bos = model.tokens.bos
const stats = new FrontStats()

/** What the dialects see of llama.cpp. */
const engine = {
  modelId: MODEL_ID,
  context: CONTEXT,
  sequences: SEQUENCES,
  vocabSize: pieces.length,
  bos,
  version: VERSION,
  stats,
  meta: {
    vocab_type: 1,
    n_vocab: pieces.length,
    n_ctx_train: meta[meta.general.architecture].context_length,
    n_embd: meta[meta.general.architecture].embedding_length,
    size: statSync(opt.model).size,
  },
  /** llama.cpp's tokens of `text`, no BOS; `parseSpecial`: special tokens' text becomes those tokens. */
  tokenize: (text, parseSpecial) => model.tokenize(text, parseSpecial),
  /** The model's own chat template rendered (Jinja, @huggingface/jinja), as the engines render it. */
  renderChat(messages, addGenerationPrompt) {
    if (!template) throw new ApiError(400, 'the model has no chat template')
    for (const m of messages) {
      if (typeof m?.role !== 'string' || typeof m?.content !== 'string') throw new ApiError(400, 'each message needs a string `role` and `content`')
    }
    return template.render({ messages, add_generation_prompt: addGenerationPrompt, bos_token: pieces[bos], eos_token: pieces[model.tokens.eos] })
  },
  /**
   * A token's piece as llama-server's with_pieces writes it (common_token_to_piece): a text piece with
   * ▁ as a space, a control piece as its text, a byte piece (type 6) as its byte, given as the byte
   * value where it is not UTF-8 on its own.
   */
  piece(id) {
    const byte = types[id] === 6 ? parseInt(/^<0x([0-9A-F]{2})>$/.exec(pieces[id])[1], 16) : null
    if (byte === null) return pieces[id].replace(/\u2581/g, ' ')
    return byte < 0x80 ? String.fromCharCode(byte) : [byte]
  },
}
const speaks = dialect(opt.dialect, engine)

/** x-request-id → the front's clock for that request. */
const traces = new Map()
let requests = 0

// The sequences: a request takes a free one or waits (first come, first served).
const slots = Array.from({ length: SEQUENCES }, () => ({ seq: context.getSequence(), usedAt: 0 }))
const free = [...slots]
const waiting = []
let uses = 0
/**
 * The free sequence for `prompt`. With --prefix-cache, as llama-server picks a slot
 * (server-context.cpp, get_available_slot): the one whose history shares the longest prefix with
 * the prompt if that prefix is at least half the prompt (--slot-prompt-similarity, default 0.5),
 * else the one used longest ago, so a sequence's history is not overwritten by a prompt that merely
 * starts alike. Without it, any.
 */
function pick(prompt) {
  let best = free.length - 1
  if (PREFIX_CACHE) {
    const shared = free.map((s) => s.seq.compareContextTokens(prompt).firstDifferentIndex)
    const similar = shared.reduce((b, n, i) => (n > shared[b] ? i : b), 0)
    if (shared[similar] >= 0.5 * prompt.length) best = similar
    else for (let i = 0; i < free.length; i++) if (free[i].usedAt < free[best].usedAt) best = i
  }
  return free.splice(best, 1)[0]
}
function acquire(prompt) {
  if (free.length > 0) return Promise.resolve(pick(prompt))
  stats.deferred++
  return new Promise((resolve) => waiting.push(resolve))
}
async function release(slot) {
  slot.usedAt = ++uses
  if (!PREFIX_CACHE) await slot.seq.clearHistory()
  const next = waiting.shift()
  if (next) {
    stats.deferred--
    next(slot)
  } else free.push(slot)
}

/** Reuse what the sequence's KV cache holds of `prompt`'s prefix: erase the rest, return how many tokens it keeps. */
async function reuse(seq, prompt) {
  if (!PREFIX_CACHE) return 0
  const cached = Math.min(seq.compareContextTokens(prompt).firstDifferentIndex, prompt.length - 1)
  if (seq.nextTokenIndex > cached) await seq.eraseContextTokenRanges([{ start: cached, end: seq.nextTokenIndex }])
  return cached
}

async function generate(kind, req, res) {
  const arrival = process.hrtime.bigint()
  const body = await readJson(req)
  if (speaks.checkModel && body.model !== undefined && body.model !== MODEL_ID) throw new ApiError(404, `The model \`${body.model}\` does not exist.`)
  const prompt = speaks.promptOf(kind, body)
  const maxTokens = body.max_tokens ?? body.max_completion_tokens ?? 16
  if (!Number.isInteger(maxTokens) || maxTokens < 1) throw new ApiError(400, '`max_tokens` must be a positive integer')
  if (prompt.length + maxTokens > CONTEXT)
    throw new ApiError(
      400,
      `This model's maximum context length is ${CONTEXT} tokens; the request has ${prompt.length} prompt tokens and max_tokens ${maxTokens}.`,
    )
  const stream = body.stream === true
  const usageInStream = stream && body.stream_options?.include_usage === true
  const ignoreEos = body.ignore_eos === true
  const id = String(req.headers['x-request-id'] ?? `front-${++requests}`)
  const created = Math.floor(Date.now() / 1000)
  const trace = { arrival_ns: String(arrival), prompt_tokens: prompt.length, cached_tokens: 0, token_ns: [], end_ns: null }
  traces.set(id, trace)
  if (traces.size > TRACE_LIMIT) traces.delete(traces.keys().next().value)

  const object = kind === 'chat' ? 'chat.completion.chunk' : 'text_completion'
  const chunk = (piece, finish) =>
    kind === 'chat'
      ? {
          id,
          object,
          created,
          model: MODEL_ID,
          choices: [{ index: 0, delta: piece === null ? {} : { content: piece }, logprobs: null, finish_reason: finish }],
        }
      : { id, object, created, model: MODEL_ID, choices: [{ index: 0, text: piece ?? '', logprobs: null, finish_reason: finish }] }
  const write = (obj) => res.write(`data: ${JSON.stringify(obj)}\n\n`)

  let aborted = false
  res.on('close', () => {
    if (!res.writableFinished) aborted = true
  })
  const slot = await acquire(prompt)
  const scheduled = process.hrtime.bigint()
  stats.processing++
  const out = []
  const tokenNs = []
  let text = ''
  let finish = 'length'
  // How many prompt tokens llama.cpp reused from the sequence's cache, and when it finished the request.
  let cached
  let done
  try {
    if (stream) {
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', 'x-request-id': id })
      if (kind === 'chat')
        write({ id, object, created, model: MODEL_ID, choices: [{ index: 0, delta: { role: 'assistant', content: '' }, logprobs: null, finish_reason: null }] })
    }
    cached = await reuse(slot.seq, prompt)
    trace.cached_tokens = cached
    stats.promptEvaluated += prompt.length - cached
    const options = { temperature: typeof body.temperature === 'number' ? body.temperature : 1, yieldEogToken: ignoreEos }
    if (Number.isInteger(body.seed)) options.seed = body.seed
    for await (const token of slot.seq.evaluate(prompt.slice(cached), options)) {
      if (aborted) break
      out.push(token)
      stats.generatedLive++
      const eog = model.isEogToken(token)
      if (eog && !ignoreEos) {
        finish = 'stop'
        break
      }
      const piece = eog ? '' : model.detokenize([token], false, out.slice(-9, -1))
      text += piece
      if (stream && piece !== '') write(chunk(piece, null))
      const at = process.hrtime.bigint()
      tokenNs.push(at)
      if (stream && piece !== '') trace.token_ns.push(String(at))
      if (out.length >= maxTokens) break
    }
    done = process.hrtime.bigint()
  } finally {
    stats.processing--
    await release(slot)
  }
  if (aborted) return
  // Recorded before the answer ends, so a scrape right after the last request sees it; the request
  // ended when llama.cpp finished it (before its sequence was cleared), as the engines time it.
  stats.record({ arrivalNs: arrival, scheduledNs: scheduled, tokenNs, endNs: done, promptTokens: prompt.length, cachedTokens: cached, finish })
  const usage = { prompt_tokens: prompt.length, completion_tokens: out.length, total_tokens: prompt.length + out.length }
  if (stream) {
    write(chunk(null, finish))
    if (usageInStream) write({ id, object, created, model: MODEL_ID, choices: [], usage })
    res.write('data: [DONE]\n\n')
    res.end()
  } else {
    const choice =
      kind === 'chat' ? { index: 0, message: { role: 'assistant', content: text }, finish_reason: finish } : { index: 0, text, finish_reason: finish }
    sendJson(res, 200, { id, object: kind === 'chat' ? 'chat.completion' : 'text_completion', created, model: MODEL_ID, choices: [choice], usage })
  }
  trace.end_ns = String(process.hrtime.bigint())
}

function sendError(res, err) {
  const status = err instanceof ApiError ? err.status : 500
  if (res.headersSent) return res.destroy()
  sendJson(res, status, err instanceof ApiError && err.body !== null ? err.body : speaks.errorBody(status, String(err?.message ?? err)))
}

const server = createServer((req, res) => {
  const path = (req.url ?? '/').split('?')[0]
  const run = (f) => {
    try {
      speaks.checkRequest?.(req)
      return Promise.resolve(f()).catch((err) => sendError(res, err))
    } catch (err) {
      sendError(res, err)
    }
  }
  if (req.method === 'POST' && path === '/v1/completions') return run(() => generate('completions', req, res))
  if (req.method === 'POST' && path === '/v1/chat/completions') return run(() => generate('chat', req, res))
  const route = speaks.routes[`${req.method} ${path}`]
  if (route) return run(() => route(req, res))
  if (req.method === 'GET' && path.startsWith('/front/trace/')) {
    const t = traces.get(decodeURIComponent(path.slice('/front/trace/'.length)))
    return t ? sendJson(res, 200, t) : sendJson(res, 404, { message: 'no trace for that request id' })
  }
  sendError(res, speaks.notFound(req.method, path))
})
server.keepAliveTimeout = 60_000
server.listen(Number(opt.port), opt.host, () => {
  const a = server.address()
  console.log(
    `llama front: listening on http://${opt.host}:${a.port} (${opt.dialect}, model ${MODEL_ID}, ${SEQUENCES} sequences of ${CONTEXT} tokens, ${opt.threads} thread${PREFIX_CACHE ? ', prefix cache' : ''})`,
  )
})
const stop = () => {
  server.close()
  void context.dispose().finally(() => process.exit(0))
  setTimeout(() => process.exit(0), 2000).unref()
}
process.on('SIGTERM', stop)
process.on('SIGINT', stop)
