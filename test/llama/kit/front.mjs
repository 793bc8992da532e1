#!/usr/bin/env node
// A thin OpenAI-compatible HTTP front over llama.cpp (node-llama-cpp, CPU build), for servegate's
// real-engine test lane (test/llama/README.md). Every token is llama.cpp's work: the front only
// queues requests onto the context's sequences (llama.cpp batches the sequences that are
// generating), turns tokens into streamed chunks, and counts.
//
//   node front.mjs --model FILE.gguf [--port 0] [--host 127.0.0.1] [--sequences 4]
//                  [--context-size 512] [--threads 1] [--served-model-name NAME]
//
// Endpoints: POST /v1/completions and /v1/chat/completions (stream or not; stream_options.include_usage,
// max_tokens, ignore_eos, temperature, seed), POST /tokenize (vLLM's shape: {prompt} or {messages,
// add_generation_prompt}), GET /v1/models, /health, /version, /metrics (llama.cpp server's counter
// names), and GET /front/trace/ID: the front's own clock (CLOCK_MONOTONIC, ns) for one request by its
// x-request-id: arrival, each streamed token's write, the end.
// Once the model is loaded it prints `llama front: listening on http://HOST:PORT` and serves.
import { createServer } from 'node:http'
import { basename } from 'node:path'
import { parseArgs } from 'node:util'
import { Template } from '@huggingface/jinja'
import { getLlama, LlamaLogLevel } from 'node-llama-cpp'

const { values: opt } = parseArgs({
  options: {
    model: { type: 'string' },
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
const SEQUENCES = Number(opt.sequences)
const CONTEXT = Number(opt['context-size'])
const MODEL_ID = opt['served-model-name'] ?? basename(opt.model).replace(/\.gguf$/, '')
const TRACE_LIMIT = 4096

const llama = await getLlama({ gpu: false, build: 'never', usePrebuiltBinaries: true, progressLogs: false, logLevel: LlamaLogLevel.error })
const model = await llama.loadModel({ modelPath: opt.model, gpuLayers: 0 })
const context = await model.createContext({ sequences: SEQUENCES, contextSize: CONTEXT * SEQUENCES, threads: Number(opt.threads), batchSize: 512 })
const meta = model.fileInfo.metadata
const VOCAB = meta.tokenizer.ggml.tokens.length
const template = meta.tokenizer.chat_template ? new Template(meta.tokenizer.chat_template) : null
const bos = model.tokens.bos

// What the front knows for /metrics (llama.cpp server's names, so a dashboard reads them alike).
const counters = { promptTokens: 0, generated: 0, processing: 0, deferred: 0, requests: 0 }
/** x-request-id → the front's clock for that request. */
const traces = new Map()

// The sequences: a request takes a free one or waits (first come, first served).
const free = Array.from({ length: SEQUENCES }, () => context.getSequence())
const waiting = []
function acquire() {
  const s = free.pop()
  if (s) return Promise.resolve(s)
  counters.deferred++
  return new Promise((resolve) => waiting.push(resolve))
}
async function release(seq) {
  await seq.clearHistory()
  const next = waiting.shift()
  if (next) {
    counters.deferred--
    next(seq)
  } else free.push(seq)
}

class ApiError extends Error {
  constructor(status, message) {
    super(message)
    this.status = status
  }
}

/** The prompt's tokens as llama.cpp will see them. */
function promptTokens(kind, body) {
  if (kind === 'chat') {
    if (!Array.isArray(body.messages) || body.messages.length === 0) throw new ApiError(400, '`messages` must be a non-empty array')
    return chatTokens(body.messages, true)
  }
  const p = body.prompt
  if (typeof p === 'string') return textTokens(p, body.add_special_tokens !== false)
  if (Array.isArray(p) && p.length > 0 && p.every((t) => Number.isInteger(t))) {
    const bad = p.find((t) => t < 0 || t >= VOCAB)
    if (bad !== undefined) throw new ApiError(400, `token id ${bad} is outside the vocabulary (0..${VOCAB - 1})`)
    return p // token ids are taken as they are (no BOS added), as vLLM does
  }
  throw new ApiError(400, '`prompt` must be a string or a non-empty array of token ids')
}
function textTokens(text, addSpecial) {
  const t = model.tokenize(text, false)
  return addSpecial ? [bos, ...t] : t
}
function chatTokens(messages, addGenerationPrompt) {
  if (!template) throw new ApiError(400, 'the model has no chat template')
  for (const m of messages) {
    if (typeof m?.role !== 'string' || typeof m?.content !== 'string') throw new ApiError(400, 'each message needs a string `role` and `content`')
  }
  const text = template.render({ messages, add_generation_prompt: addGenerationPrompt, bos_token: '<s>', eos_token: '</s>' })
  return [bos, ...model.tokenize(text, true)]
}

async function readJson(req) {
  const chunks = []
  let size = 0
  for await (const c of req) {
    size += c.length
    if (size > 8 << 20) throw new ApiError(413, 'request body over 8 MiB')
    chunks.push(c)
  }
  try {
    return JSON.parse(Buffer.concat(chunks).toString('utf8'))
  } catch {
    throw new ApiError(400, 'the request body is not JSON')
  }
}

function sendJson(res, status, obj) {
  const text = JSON.stringify(obj)
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) })
  res.end(text)
}
function sendError(res, err) {
  const status = err instanceof ApiError ? err.status : 500
  if (res.headersSent) return res.destroy()
  sendJson(res, status, {
    object: 'error',
    type: status === 500 ? 'InternalServerError' : 'BadRequestError',
    message: String(err?.message ?? err),
    code: status,
  })
}

async function generate(kind, req, res) {
  const arrival = process.hrtime.bigint()
  const body = await readJson(req)
  if (body.model !== undefined && body.model !== MODEL_ID) throw new ApiError(404, `The model \`${body.model}\` does not exist.`)
  const prompt = promptTokens(kind, body)
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
  const id = String(req.headers['x-request-id'] ?? `front-${++counters.requests}`)
  const created = Math.floor(Date.now() / 1000)
  const trace = { arrival_ns: String(arrival), prompt_tokens: prompt.length, token_ns: [], end_ns: null }
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
  const seq = await acquire()
  counters.processing++
  const out = []
  let text = ''
  let finish = 'length'
  try {
    if (stream) {
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', 'x-request-id': id })
      if (kind === 'chat')
        write({ id, object, created, model: MODEL_ID, choices: [{ index: 0, delta: { role: 'assistant', content: '' }, logprobs: null, finish_reason: null }] })
    }
    counters.promptTokens += prompt.length
    const options = { temperature: typeof body.temperature === 'number' ? body.temperature : 1, yieldEogToken: ignoreEos }
    if (Number.isInteger(body.seed)) options.seed = body.seed
    for await (const token of seq.evaluate(prompt, options)) {
      if (aborted) break
      out.push(token)
      counters.generated++
      const eog = model.isEogToken(token)
      if (eog && !ignoreEos) {
        finish = 'stop'
        break
      }
      const piece = eog ? '' : model.detokenize([token], false, out.slice(-9, -1))
      text += piece
      if (stream && piece !== '') {
        write(chunk(piece, null))
        trace.token_ns.push(String(process.hrtime.bigint()))
      }
      if (out.length >= maxTokens) break
    }
  } finally {
    counters.processing--
    await release(seq)
  }
  if (aborted) return
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

async function tokenize(req, res) {
  const body = await readJson(req)
  let tokens
  if (Array.isArray(body.messages)) tokens = chatTokens(body.messages, body.add_generation_prompt !== false)
  else if (typeof body.prompt === 'string') tokens = textTokens(body.prompt, body.add_special_tokens !== false)
  else throw new ApiError(400, '`prompt` (a string) or `messages` is required')
  sendJson(res, 200, { count: tokens.length, max_model_len: CONTEXT, tokens })
}

function metrics() {
  const m = [
    ['llamacpp:prompt_tokens_total', 'counter', 'Prompt tokens processed.', counters.promptTokens],
    ['llamacpp:tokens_predicted_total', 'counter', 'Generated tokens.', counters.generated],
    ['llamacpp:requests_processing', 'gauge', 'Requests holding a sequence.', counters.processing],
    ['llamacpp:requests_deferred', 'gauge', 'Requests waiting for a sequence.', counters.deferred],
  ]
  return m.map(([name, type, help, v]) => `# HELP ${name} ${help}\n# TYPE ${name} ${type}\n${name} ${v}\n`).join('')
}

const server = createServer((req, res) => {
  const path = (req.url ?? '/').split('?')[0]
  const run = (p) => p.catch((err) => sendError(res, err))
  if (req.method === 'POST' && path === '/v1/completions') return run(generate('completions', req, res))
  if (req.method === 'POST' && path === '/v1/chat/completions') return run(generate('chat', req, res))
  if (req.method === 'POST' && path === '/tokenize') return run(tokenize(req, res))
  if (req.method === 'GET' && path === '/health') return sendJson(res, 200, {})
  if (req.method === 'GET' && path === '/version') return sendJson(res, 200, { version: '3.21.1', engine: 'llama.cpp (node-llama-cpp)' })
  if (req.method === 'GET' && path === '/v1/models')
    return sendJson(res, 200, { object: 'list', data: [{ id: MODEL_ID, object: 'model', created: 0, owned_by: 'llama.cpp', max_model_len: CONTEXT }] })
  if (req.method === 'GET' && path === '/metrics') {
    res.writeHead(200, { 'content-type': 'text/plain; version=0.0.4' })
    return res.end(metrics())
  }
  if (req.method === 'GET' && path.startsWith('/front/trace/')) {
    const t = traces.get(decodeURIComponent(path.slice('/front/trace/'.length)))
    return t ? sendJson(res, 200, t) : sendError(res, new ApiError(404, 'no trace for that request id'))
  }
  sendError(res, new ApiError(404, `Not Found: ${req.method} ${path}`))
})
server.keepAliveTimeout = 60_000
server.listen(Number(opt.port), opt.host, () => {
  const a = server.address()
  console.log(`llama front: listening on http://${opt.host}:${a.port} (model ${MODEL_ID}, ${SEQUENCES} sequences of ${CONTEXT} tokens, ${opt.threads} thread)`)
})
const stop = () => {
  server.close()
  void context.dispose().finally(() => process.exit(0))
  setTimeout(() => process.exit(0), 2000).unref()
}
process.on('SIGTERM', stop)
process.on('SIGINT', stop)
