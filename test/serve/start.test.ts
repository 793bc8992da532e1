import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { createServer, type Server } from 'node:http'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { UsageError } from '../../src/errors.js'
import { ServerStartCancelled, ServerStartFailed, startServer, type ServeOptions } from '../../src/serve/index.js'
import { hostIsolation, judgeProbeOutput } from '../../src/serve/isolation.js'
import { groupGone } from './processes.js'

/** A stand-in server on 127.0.0.1 whose /health (and /v1/models) answers what the test says. */
interface StandIn {
  url: string
  health: number
  models: number
  /** Requests to /health so far. */
  probes: number
  close(): Promise<void>
}

async function standIn(): Promise<StandIn> {
  const state = { health: 503, models: 404, probes: 0 }
  const srv: Server = createServer((req, res) => {
    if (req.url === '/health') state.probes++
    res.statusCode = req.url === '/health' ? state.health : req.url === '/v1/models' ? state.models : 404
    res.end(res.statusCode === 200 ? '{"data":[]}' : '')
  })
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r))
  const port = (srv.address() as { port: number }).port
  return Object.assign(state, {
    url: `http://127.0.0.1:${port}`,
    close: () => new Promise<void>((r) => srv.close(() => r())),
  }) as StandIn
}

/** Answer ready once the command has done its setup and created `marker`: a stand-in ready sooner would stop it half-way. */
function readyAfter(s: StandIn, marker: string): void {
  const t = setInterval(() => {
    if (!existsSync(marker)) return
    clearInterval(t)
    s.health = 200
  }, 20)
}

describe('startServer', () => {
  let dir: string
  let s: StandIn
  const lines: string[] = []
  const opts = (o: Partial<ServeOptions>): ServeOptions => ({
    command: 'sleep 60',
    baseUrl: s.url,
    readyTimeoutMs: 20_000,
    stopTimeoutMs: 5_000,
    stopCommand: null,
    logPath: join(dir, 'server.log'),
    apiKey: null,
    secrets: [],
    log: (l) => lines.push(l),
    pollMs: 100,
    ...o,
  })
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'servegate-start-'))
    s = await standIn()
    // The host's isolation probe runs once per process, before the first start: not inside the first test's timings.
    await hostIsolation()
  })
  afterAll(async () => {
    await s.close()
    rmSync(dir, { recursive: true, force: true })
  })

  it('waits through a loading server with a progress line, and takes /v1/models where there is no /health', async () => {
    s.health = 503
    lines.length = 0
    setTimeout(() => {
      s.health = 404
      s.models = 200
    }, 700)
    const h = await startServer(opts({ progressEveryMs: 300 }))
    try {
      expect(h.url).toBe(s.url)
      expect(lines.some((l) => /^waiting for the server: [\d.]+ s, last: \/health HTTP 503$/.test(l))).toBe(true)
      expect(lines.at(-1)).toMatch(/^The server is ready \(\/v1\/models answered 200 after [\d.]+ s\)\.$/)
    } finally {
      await h.stop()
    }
    expect(await groupGone(h.pid)).toBe(true)
    expect(h.exit()).toEqual({ code: null, signal: 'SIGTERM' })
  }, 20_000)

  it('probes a starting server every 100 ms for its first seconds, then backs off to pollMs', async () => {
    // A small engine is up in a second or two: with a backoff from the start, one ready at 1.6 s went
    // unseen until the probe at 2.5 s, a second lost at every start of an A/B's engines.
    s.health = 503
    s.probes = 0
    let early = 0
    let quick = 0
    setTimeout(() => (early = s.probes), 2000)
    setTimeout(() => (quick = s.probes), 3200)
    setTimeout(() => (s.health = 200), 5500)
    const h = await startServer(opts({ pollMs: 1000 }))
    try {
      // Doubling from 100 ms probes at 0, 0.1, 0.3, 0.7 and 1.5 s: five in 2 s. Every 100 ms: about twenty.
      expect(early).toBeGreaterThan(8)
      // From 3 s on they double towards every second: about five in the last 2.3 s, where every 100 ms would be 23.
      expect(s.probes - quick).toBeLessThan(12)
    } finally {
      await h.stop()
    }
  }, 20_000)

  it('refuses to start when something already answers at the base URL (it would be measured instead)', async () => {
    s.health = 200
    const err = await startServer(opts({})).catch((e: unknown) => e)
    expect(err).toBeInstanceOf(UsageError)
    expect((err as Error).message).toBe(`something already answers at ${s.url} (/health) before servegate started the server`)
  })

  it('kills the process group when SIGTERM is ignored for longer than the grace period', async () => {
    s.health = 503
    lines.length = 0
    const up = join(dir, 'up-trap')
    readyAfter(s, up)
    // The shell and its sleep both ignore SIGTERM (an ignored signal is inherited).
    const h = await startServer(opts({ command: `trap '' TERM; touch ${up}; sleep 60; echo never`, stopTimeoutMs: 600 }))
    const t0 = Date.now()
    await h.stop()
    const took = Date.now() - t0
    expect(took).toBeGreaterThanOrEqual(550)
    expect(took).toBeLessThan(5000)
    expect(lines).toContain('The server did not exit within 1 s: killing its process group (SIGKILL).')
    expect(h.exit()).toEqual({ code: null, signal: 'SIGKILL' })
    expect(await groupGone(h.pid)).toBe(true)
  }, 20_000)

  it('stops with server.stop_command instead of a signal when one is given', async () => {
    s.health = 503
    lines.length = 0
    const pidFile = join(dir, 'pid')
    readyAfter(s, pidFile)
    const h = await startServer(opts({ command: `echo $$ > ${pidFile}; exec sleep 60`, stopCommand: `echo stopping; kill -INT $(cat ${pidFile})` }))
    expect(existsSync(pidFile)).toBe(true)
    await h.stop()
    expect(lines).toContain('Stopping the server with its stop command (up to 5 s).')
    // SIGINT came from the stop command: servegate sent no SIGTERM.
    expect(h.exit()).toEqual({ code: null, signal: 'SIGINT' })
    expect(readFileSync(join(dir, 'server.log'), 'utf8')).toContain('stopping')
    expect(await groupGone(h.pid)).toBe(true)
  }, 20_000)

  it('gives up waiting when aborted (Ctrl-C while a model loads) and leaves nothing running', async () => {
    s.health = 503
    const ac = new AbortController()
    setTimeout(() => ac.abort('SIGINT'), 300)
    lines.length = 0
    const err = await startServer(opts({ signal: ac.signal })).catch((e: unknown) => e)
    expect(err).toBeInstanceOf(ServerStartCancelled)
    const pid = Number(/pid (\d+)/.exec(lines[0]!)![1])
    expect(await groupGone(pid)).toBe(true)
  }, 20_000)

  it('redacts known secrets from the server log and its tail', async () => {
    s.health = 503
    const up = join(dir, 'up-echo')
    readyAfter(s, up)
    const h = await startServer(
      opts({
        command: `echo "args: api_key=very-secret-1234 model=m"; echo "--hf-token hf_zzzzzzzzzzzzzzzz"; touch ${up}; exec sleep 60`,
        secrets: ['very-secret-1234'],
      }),
    )
    await h.stop()
    const log = readFileSync(join(dir, 'server.log'), 'utf8')
    expect(log).toContain('args: api_key=*** model=m')
    expect(log).toContain('--hf-token ***')
    expect(log).not.toContain('very-secret-1234')
    expect(h.tail(5).join('\n')).not.toContain('hf_zzzz')
  }, 20_000)

  it('starts the command where the process that started it is invisible, or says once that it cannot', async () => {
    s.health = 503
    lines.length = 0
    const seen = join(dir, 'seen')
    const up = join(dir, 'up-seen')
    readyAfter(s, up)
    const h = await startServer(
      opts({ command: `ls /proc > ${seen}; cat /proc/${process.pid}/environ > /dev/null 2>&1 && echo readable >> ${seen}; touch ${up}; exec sleep 60` }),
    )
    await h.stop()
    const pids = readFileSync(seen, 'utf8')
      .split('\n')
      .filter((l) => /^\d+$/.test(l))
      .map(Number)
    if ((await hostIsolation()).ok) {
      expect(lines[0]).toMatch(/^Starting the server \(pid \d+, its own process group\) in a PID namespace of its own at /)
      // The supervisor, the shell and ls: nothing of this test's process tree.
      expect(pids.length).toBeLessThanOrEqual(4)
      expect(pids).not.toContain(process.pid)
      expect(readFileSync(seen, 'utf8')).not.toContain('readable')
    } else {
      expect(lines[0]).toMatch(/^servegate: notice: the server starts without a PID namespace of its own \(.+\); it can see this host's other processes\.$/)
      expect(pids).toContain(process.pid)
    }
    expect(h.exit()).toEqual({ code: null, signal: 'SIGTERM' })
  }, 20_000)

  it('judges a probe isolated only when PID 1 is the supervisor, few processes show and /proc cannot be unmounted', () => {
    const pid1 = 'pid1=/usr/bin/node -e /* servegate-supervisor */ … - sh -c'
    expect(judgeProbeOutput(`pids=3\numount=refused\n${pid1}\n`)).toBeNull()
    expect(judgeProbeOutput(`pids=3\numount=done\n${pid1}\n`)).toBe("the command could unmount its /proc and see the host's processes")
    expect(judgeProbeOutput(`pids=212\numount=refused\n${pid1}\n`)).toBe('the command saw 212 processes, not only its own')
    expect(judgeProbeOutput('pids=3\numount=refused\npid1=/sbin/init \n')).toBe(
      'PID 1 inside is not servegate\'s supervisor ("/sbin/init "): the command would share the host\'s process list',
    )
  })

  it("shows a dead server's last five lines in its error, printable and cut short; the file keeps every line", async () => {
    s.health = 503
    const logPath = join(dir, 'noisy.log')
    const command = `for i in $(seq 1 30); do echo "line $i"; done; printf '\\033[31mred\\033[0m\\tend\\n'; head -c 1000 /dev/zero | tr '\\0' x; echo; exit 1`
    const err = (await startServer(opts({ command, logPath })).catch((e: unknown) => e)) as ServerStartFailed
    expect(err).toBeInstanceOf(ServerStartFailed)
    expect(err.message.split('\n').slice(1)).toEqual([
      `  last 5 lines of the server log (${logPath}):`,
      '  | line 28',
      '  | line 29',
      '  | line 30',
      '  | red end',
      `  | ${'x'.repeat(200)} …`,
    ])
    expect(readFileSync(logPath, 'utf8')).toContain('line 1\n')
  }, 20_000)

  it('withholds the tail from its error where server.isolation is none, pointing at the log file', async () => {
    s.health = 503
    const logPath = join(dir, 'plain.log')
    const err = (await startServer(opts({ command: 'echo nekot-desrever; exit 1', logPath, isolation: 'none' })).catch((e: unknown) => e)) as ServerStartFailed
    expect(err).toBeInstanceOf(ServerStartFailed)
    expect(err.message.split('\n').slice(1)).toEqual([
      `  the server's output is left out of messages: its command ran without a PID namespace of its own (server.isolation: none), where it could have read tokens that redaction cannot recognise; the whole log is in ${logPath}`,
    ])
    expect(readFileSync(logPath, 'utf8')).toBe('nekot-desrever\n')
  }, 20_000)
})
