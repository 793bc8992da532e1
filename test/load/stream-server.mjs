// A minimal, fast OpenAI-style streaming server for servegate's load tests and
// client-capacity benchmark. Plain JavaScript so it runs in a child process
// with no loader. Every content chunk's text is " <ns>", the server's
// process.hrtime.bigint() taken just before the write: the ground truth rides
// with the data, and CLOCK_MONOTONIC is shared by processes on one machine.
//
// Modes: 'staggered' (each request on its own schedule: first token ttftMs
// after arrival, then one every itlMs) and 'stepped' (one engine-like loop
// writes a token to every running stream each itlMs, so chunks leave in bursts).
import { createServer } from 'node:http'

/**
 * Start the server on 127.0.0.1:port (0: any free port).
 * @param {{ttftMs:number, itlMs:number, mode?:'staggered'|'stepped', port?:number}} cfg
 */
export async function startStreamServer(cfg) {
  const mode = cfg.mode ?? 'staggered'
  let open = 0
  let maxOpen = 0
  let openArea = 0 // ∫ open dt, ms
  let lastChange = performance.now()
  let firstOpen = -1
  let served = 0
  const running = new Set()
  /** Per request: id, opened and closed (performance.now() ms), arrival (hrtime ns, string). */
  const log = []
  const change = (d) => {
    const t = performance.now()
    openArea += open * (t - lastChange)
    lastChange = t
    open += d
    if (open > maxOpen) maxOpen = open
    if (firstOpen < 0) firstOpen = t
  }

  const head = (id, chat) =>
    chat
      ? `{"id":"${id}","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"`
      : `{"id":"${id}","object":"text_completion","choices":[{"index":0,"text":"`

  function emit(s) {
    const last = s.sent + 1 === s.maxTokens
    const ns = process.hrtime.bigint()
    s.res.write(`data: ${s.head} ${ns}${s.chat ? '"}' : '"'},"finish_reason":${last ? '"length"' : 'null'}}]}\n\n`)
    s.sent++
    if (last) {
      s.res.write(
        `data: {"id":"${s.id}","choices":[],"usage":{"prompt_tokens":${s.promptTokens},"completion_tokens":${s.maxTokens},"total_tokens":${s.promptTokens + s.maxTokens}}}\n\ndata: [DONE]\n\n`,
      )
      s.res.end()
      running.delete(s)
      served++
      change(-1)
      return false
    }
    return true
  }

  const server = createServer((req, res) => {
    const arrivalNs = process.hrtime.bigint()
    const chunks = []
    req.on('data', (c) => chunks.push(c))
    req.on('end', () => {
      const arrival = performance.now()
      let body
      try {
        body = JSON.parse(Buffer.concat(chunks).toString('utf8'))
      } catch {
        res.writeHead(400, { 'content-type': 'application/json' })
        res.end('{"error":{"message":"body is not JSON"}}')
        return
      }
      const chat = (req.url ?? '').includes('/chat/')
      const id = String(req.headers['x-request-id'] ?? 'x')
      const maxTokens = Math.max(1, Number(body.max_tokens ?? 16))
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' })
      res.socket?.setNoDelay(true)
      change(1)
      const entry = { id, openMs: arrival, closeMs: -1, arrivalNs: String(arrivalNs) }
      log.push(entry)
      const s = { res, id, chat, head: head(id, chat), maxTokens, sent: 0, promptTokens: Array.isArray(body.prompt) ? body.prompt.length : 1 }
      res.on('close', () => {
        entry.closeMs = performance.now()
        if (running.delete(s)) change(-1)
      })
      if (mode === 'stepped') {
        // Joins the batch at the first step at least ttftMs after arrival.
        s.startAt = arrival + cfg.ttftMs
        running.add(s)
        if (!stepTimer) scheduleStep()
        return
      }
      running.add(s)
      const tick = () => {
        if (!running.has(s)) return
        if (emit(s)) setTimeout(tick, Math.max(0, arrival + cfg.ttftMs + s.sent * cfg.itlMs - performance.now()))
      }
      setTimeout(tick, cfg.ttftMs)
    })
  })

  // Stepped mode: one loop, a fixed step period, every running stream gets a token per step.
  let stepTimer = null
  let nextStep = 0
  function scheduleStep() {
    const t = performance.now()
    if (nextStep < t) nextStep = t
    stepTimer = setTimeout(step, Math.max(0, nextStep - t))
  }
  function step() {
    const t = performance.now()
    for (const s of running) if (s.startAt <= t) emit(s)
    nextStep += cfg.itlMs
    if (running.size > 0) scheduleStep()
    else stepTimer = null
  }

  const sockets = new Set()
  let accepted = 0
  server.on('connection', (sock) => {
    accepted++
    sockets.add(sock)
    sock.on('close', () => sockets.delete(sock))
  })
  server.keepAliveTimeout = 60_000
  await new Promise((r) => server.listen(cfg.port ?? 0, '127.0.0.1', r))
  return {
    port: server.address().port,
    url: `http://127.0.0.1:${server.address().port}`,
    /** Streams open now, the most ever open at once, ∫open dt (ms), requests served, sockets open, connections ever accepted. */
    stats() {
      const t = performance.now()
      return { open, maxOpen, openArea: openArea + open * (t - lastChange), served, sockets: sockets.size, accepted }
    },
    /** Every request so far: id, opened and closed (ms, this process's performance.now()), arrival (hrtime ns as a string). */
    requests() {
      return log.slice()
    },
    resetStats() {
      change(0)
      maxOpen = open
      openArea = 0
    },
    close() {
      for (const sock of sockets) sock.destroy()
      return new Promise((r) => server.close(() => r()))
    },
  }
}

// As a child process (fork): argv[2] is the JSON config; replies over IPC.
if (process.send && process.argv[2]) {
  const handle = await startStreamServer(JSON.parse(process.argv[2]))
  process.on('message', (m) => {
    if (m === 'stats') process.send({ type: 'stats', stats: handle.stats() })
    else if (m === 'requests') process.send({ type: 'requests', requests: handle.requests() })
    else if (m === 'reset') {
      handle.resetStats()
      process.send({ type: 'reset' })
    } else if (m === 'close') handle.close().then(() => process.exit(0))
  })
  process.on('disconnect', () => process.exit(0))
  process.send({ type: 'ready', port: handle.port })
}
