/**
 * Start the server a sweep measures: fill `{port}`, spawn the command, stream
 * its output to a log, and wait until it answers — with a progress line while
 * a large model loads, and one clear error (with the log's tail) when it dies
 * first or never becomes ready.
 */
import { createServer } from 'node:net'
import { UsageError } from '../errors.js'
import { fillPort, wantsPort } from './command.js'
import { ServerStartFailed } from './errors.js'
import { probeAgent, probeReady } from './readiness.js'
import { ServerLog } from './server-log.js'
import { childEnv } from '../config/child-env.js'
import { visibleGpus } from '../env/nvidia-smi.js'
import { describeExit, ServerProcess, type ServerExit } from './server-process.js'
import { hostIsolation, type IsolationProbe, type IsolationSetting, type Launch } from './isolation.js'

export interface ServeOptions {
  /** The command as configured, `{port}` not yet filled. */
  command: string
  /** Where the server answers when the command has no `{port}` (its root URL); null with `{port}`. */
  baseUrl: string | null
  readyTimeoutMs: number
  stopTimeoutMs: number
  stopCommand: string | null
  logPath: string
  /** Append to the log instead of replacing it (a resumed sweep). */
  appendLog?: boolean
  /** Sent on /v1/models probes (a server started with --api-key guards it). */
  apiKey: string | null
  /** Values redacted from the log and every message. */
  secrets: readonly string[]
  /** Variables `server.env` passes to the command beside the allow-list (config/child-env.ts). */
  passEnv?: readonly string[]
  /** Variables servegate sets for this server on top of the allow-listed ones (e.g. CUDA_VISIBLE_DEVICES for a side). */
  extraEnv?: Readonly<Record<string, string>>
  /** The environment the allow-list picks from; default process.env. */
  parentEnv?: Readonly<Record<string, string | undefined>>
  log(line: string): void
  signal?: AbortSignal
  /** `server.isolation` (default `auto`: its own PID namespace where the host can make one, isolation.ts). */
  isolation?: IsolationSetting
  /** The host's isolation probe (default: hostIsolation, once per process); tests pass their own. */
  probeIsolation?: () => Promise<IsolationProbe>
  /** Longest wait between probes, ms (default 1000). */
  pollMs?: number
  /** A progress line this often while waiting, ms (default 15000). */
  progressEveryMs?: number
}

/** A running, ready server. */
export interface ServerHandle {
  /** Its root URL (http://127.0.0.1:PORT with `{port}`). */
  url: string
  pid: number
  logPath: string
  /** Resolves when the server process exits. */
  exited: Promise<ServerExit>
  /** How it exited, or null while it runs. */
  exit(): ServerExit | null
  /** The log's last `n` lines (at most 5), redacted and made printable, or one line saying they are withheld (server-log.ts). */
  tail(n?: number): string[]
  /** Wait up to `ms` for the log to take the dead server's last words. */
  settleLog(ms: number): Promise<void>
  /** Stop the group (stop command or SIGTERM, grace, SIGKILL) and close the log. Idempotent. */
  stop(): Promise<void>
  /**
   * The GPUs its command was given (CUDA_VISIBLE_DEVICES of its environment), null when unset:
   * only these count when the GPU sampler looks for other processes. `pid` is also its process
   * group (the command runs in a group of its own), which tells its processes from others.
   */
  gpus?: readonly string[] | null
  /** Seconds from the spawn until it answered ready. */
  readyS?: number
}

/** The wait for readiness was cut by the abort signal (the server is stopped by then). */
export class ServerStartCancelled extends Error {
  override readonly name = 'ServerStartCancelled'
}

/** A free TCP port on the loopback interface. */
export async function freeLoopbackPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer()
    srv.unref()
    srv.once('error', reject)
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address()
      const port = typeof addr === 'object' && addr !== null ? addr.port : 0
      srv.close(() => resolve(port))
    })
  })
}

/** Start the server and wait until it is ready; throws ServerStartFailed (exit 2) or ServerStartCancelled. */
export async function startServer(opts: ServeOptions): Promise<ServerHandle> {
  let url: string
  let command = opts.command
  if (wantsPort(opts.command)) {
    const port = await freeLoopbackPort()
    command = fillPort(opts.command, port)
    url = `http://127.0.0.1:${port}`
  } else if (opts.baseUrl !== null) {
    url = opts.baseUrl
    // A server already answering there would pass for the one we start: measure the wrong thing.
    const agent = probeAgent()
    const before = await probeReady(url, { apiKey: opts.apiKey, timeoutMs: 2000, dispatcher: agent }).finally(() => agent.close())
    if (before.ready) {
      throw new UsageError(
        `something already answers at ${url} (${before.via}) before servegate started the server`,
        'Stop it first, or measure it with --base-url alone (without --serve).',
      )
    }
  } else {
    throw new UsageError(
      'the serve command has no {port} and no base URL is given: servegate cannot know where the server will answer',
      'Put {port} where the command takes its port (--port {port}), or give --base-url.',
    )
  }

  const log = new ServerLog(opts.logPath, opts.secrets, opts.appendLog === true)
  const env = childEnv(opts.parentEnv ?? process.env, opts.passEnv ?? [], opts.extraEnv ?? {})
  const launch = await chooseLaunch(opts)
  // Without a namespace by choice, what the command prints may hold a token in a form redaction cannot see.
  log.withheld = opts.isolation === 'none'
  const proc = new ServerProcess(command, log, { stopCommand: opts.stopCommand }, env, launch)
  const spawnedAt = Date.now()
  const stop = async (): Promise<void> => {
    await proc.stopGroup({ graceMs: opts.stopTimeoutMs, stopCommand: opts.stopCommand, log: opts.log })
    await log.close()
  }
  opts.log(
    `Starting the server (pid ${proc.pid}, its own process group)${launch.kind === 'namespace' ? ' in a PID namespace of its own' : ''} at ${url}; its output goes to ${opts.logPath}. Waiting up to ${formatSeconds(opts.readyTimeoutMs)} for it to be ready.`,
  )
  try {
    await waitUntilReady(url, proc, log, opts)
  } catch (err) {
    await stop()
    throw err
  }
  const readyS = (Date.now() - spawnedAt) / 1000
  return {
    gpus: visibleGpus(env['CUDA_VISIBLE_DEVICES']),
    readyS,
    url,
    pid: proc.pid,
    logPath: opts.logPath,
    exited: proc.exited,
    exit: () => proc.exit(),
    tail: (n) => log.tail(n),
    settleLog: (ms) => log.settle(ms),
    stop,
  }
}

/** Probes whose fallback was announced already: one notice per host probe, not one per start of an A/B's engines. */
const announced = new WeakSet<IsolationProbe>()

/**
 * The launch for `opts.isolation`: `none` starts plainly; `auto` isolates where the probe says the host
 * can, and otherwise starts plainly with one notice. The Action refuses before this where a pull request
 * is judged (github/isolation-policy.ts), so this fallback serves the command line and trusted runs.
 */
async function chooseLaunch(opts: ServeOptions): Promise<Launch> {
  if (opts.isolation === 'none') return { kind: 'plain' }
  const probe = await (opts.probeIsolation ?? hostIsolation)()
  if (probe.ok) return probe.launch
  if (!announced.has(probe)) {
    announced.add(probe)
    opts.log(`servegate: notice: the server starts without a PID namespace of its own (${probe.reason}); it can see this host's other processes.`)
  }
  return { kind: 'plain' }
}

/** How long a started server is probed every 100 ms before the probes back off to every pollMs. */
const QUICK_PROBES_MS = 3000

async function waitUntilReady(url: string, proc: ServerProcess, log: ServerLog, opts: ServeOptions): Promise<void> {
  const t0 = Date.now()
  const pollMs = opts.pollMs ?? 1000
  const progressEvery = opts.progressEveryMs ?? 15_000
  let nextProgress = t0 + progressEvery
  let last = 'no answer yet'
  let wait = Math.min(100, pollMs)
  const agent = probeAgent()
  const aborted = new Promise<void>((resolve) => {
    if (opts.signal?.aborted) resolve()
    opts.signal?.addEventListener('abort', () => resolve(), { once: true })
  })
  try {
    for (;;) {
      const exit = proc.exit()
      if (exit !== null) {
        await log.settle(1000)
        throw new ServerStartFailed(
          `the server ${describeExit(exit)} before it was ready (after ${formatSeconds(Date.now() - t0)})`,
          log.tail(),
          opts.logPath,
          'Run the serve command by hand to see why it stops; the whole log is in the file above.',
        )
      }
      if (opts.signal?.aborted) throw new ServerStartCancelled('interrupted while waiting for the server to be ready')
      const elapsed = Date.now() - t0
      if (elapsed >= opts.readyTimeoutMs) {
        throw new ServerStartFailed(
          `the server was not ready after ${formatSeconds(opts.readyTimeoutMs)} (last: ${last}); servegate stopped it`,
          log.tail(),
          opts.logPath,
          'A large model may take longer to load: raise --ready-timeout (config server.ready_timeout, seconds).',
        )
      }
      const probe = await probeReady(url, { apiKey: opts.apiKey, timeoutMs: Math.max(100, Math.min(5000, opts.readyTimeoutMs - elapsed)), dispatcher: agent })
      if (probe.ready) {
        opts.log(`The server is ready (${probe.via} answered 200 after ${formatSeconds(Date.now() - t0)}).`)
        return
      }
      last = probe.last
      if (Date.now() >= nextProgress) {
        opts.log(`waiting for the server: ${formatSeconds(Date.now() - t0)}, last: ${last}`)
        nextProgress += progressEvery
      }
      // Every 100 ms while a small server would come up (QUICK_PROBES_MS), then backing off to every
      // pollMs: a backoff from the start left a server ready at 1.6 s unseen until 2.5 s, and an A/B
      // restarts each side's engine several times. A probe of a closed port costs nothing.
      await Promise.race([delay(Math.min(wait, Math.max(0, opts.readyTimeoutMs - (Date.now() - t0)))), proc.exited, aborted])
      if (Date.now() - t0 >= QUICK_PROBES_MS) wait = Math.min(pollMs, wait * 2)
    }
  } finally {
    await agent.close()
  }
}

function formatSeconds(ms: number): string {
  const s = ms / 1000
  return s < 10 ? `${s.toFixed(1)} s` : `${Math.round(s)} s`
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms))
}
