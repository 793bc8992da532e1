/**
 * One server process group: spawned through `/bin/sh -c` in a group of its
 * own (so a Ctrl-C at the terminal reaches servegate, which then stops the
 * server in order, and so the engine's worker processes go with it), watched
 * until it exits, and stopped with SIGTERM to the group, a grace period, then
 * SIGKILL — or with the user's stop command (`docker stop X`). Under a
 * namespace launch (isolation.ts) the group's leader is `unshare`, the stop
 * command runs inside the server's namespace, and the supervisor there says
 * how the command ended.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import type { Readable } from 'node:stream'
import { launchArgv, type Launch } from './isolation.js'
import type { ServerLog } from './server-log.js'

/** How the server process ended: its exit status, or the signal that killed it. */
export interface ServerExit {
  code: number | null
  signal: NodeJS.Signals | null
}

/** "status 3", "signal SIGKILL". */
export function describeExit(exit: ServerExit): string {
  return exit.signal !== null ? `was killed by ${exit.signal}` : `exited with status ${exit.code ?? 'unknown'}`
}

export interface StopOptions {
  /** How long SIGTERM (or the stop command) may take before the group is killed, ms. */
  graceMs: number
  /** Run via `sh -c` instead of sending SIGTERM (container runtimes: `docker stop X`). */
  stopCommand: string | null
  log(line: string): void
}

/** The environment every process of the group starts with (config/child-env.ts childEnv): never the job's whole one. */
export type ChildEnv = Readonly<Record<string, string>>

export class ServerProcess {
  readonly pid: number
  /** Resolves when the group leader exits (never rejects). */
  readonly exited: Promise<ServerExit>
  private exitInfo: ServerExit | null = null
  private stopping: Promise<void> | null = null
  private readonly child: ChildProcess
  private readonly onProcessExit: () => void
  /** The supervisor's reports (namespace launch): `exit …`, `stop …`. */
  private readonly reports = new Reports()

  /** Start `command` (placeholders already filled) with its output into `log`. */
  constructor(
    command: string,
    private readonly log: ServerLog,
    private readonly stop: Pick<StopOptions, 'stopCommand'>,
    private readonly env: ChildEnv,
    private readonly launch: Launch = { kind: 'plain' },
  ) {
    // The command comes from a config a pull request may edit: it gets the allow-listed env only.
    const isolated = launch.kind === 'namespace'
    const { file, args } = launchArgv(launch, command, stop.stopCommand, true)
    this.child = spawn(file, args, { detached: true, stdio: isolated ? ['pipe', 'pipe', 'pipe', 'pipe'] : ['ignore', 'pipe', 'pipe'], env: { ...env } })
    if (this.child.pid === undefined) throw new Error(`could not start ${file}`)
    this.pid = this.child.pid
    log.follow(this.child.stdout!)
    log.follow(this.child.stderr!)
    if (isolated) {
      this.child.stdin!.on('error', () => {})
      this.reports.follow(this.child.stdio[3] as Readable)
    }
    this.exited = new Promise((resolve) => {
      this.child.once('exit', (code, signal) => {
        // Under a supervisor the leader's status is PID 1's (128 + N for a signal): its report says how the command ended.
        const reported = isolated ? this.reports.settled(1000).then(() => this.reports.exit) : Promise.resolve(null)
        void reported.then((r) => {
          this.exitInfo = r ?? { code, signal }
          resolve(this.exitInfo)
        })
      })
    })
    // servegate exits without stopping in order (a second Ctrl-C, a crash): nothing may be left running.
    this.onProcessExit = () => this.killNow()
    process.on('exit', this.onProcessExit)
  }

  /** How it exited, or null while it runs. */
  exit(): ServerExit | null {
    return this.exitInfo
  }

  /**
   * Stop the group: the stop command or SIGTERM, up to `graceMs` for the leader
   * to exit, then SIGKILL to whatever of the group is left. Idempotent.
   */
  async stopGroup(opts: StopOptions): Promise<void> {
    this.stopping ??= this.doStop(opts)
    return this.stopping
  }

  private async doStop(opts: StopOptions): Promise<void> {
    const t0 = Date.now()
    if (this.exitInfo === null) {
      if (opts.stopCommand !== null) {
        opts.log(`Stopping the server with its stop command (up to ${Math.round(opts.graceMs / 1000)} s).`)
        this.log.note(`stop command: ${opts.stopCommand}`)
        if (this.launch.kind === 'namespace') await this.stopInside(opts.graceMs)
        else await runStopCommand(opts.stopCommand, this.log, opts.graceMs, this.env)
      } else {
        opts.log(`Stopping the server (SIGTERM to its process group, up to ${Math.round(opts.graceMs / 1000)} s before SIGKILL).`)
        // A SIGTERM before the supervisor started the command would reach no one (a PID 1 drops it).
        if (this.launch.kind === 'namespace') await Promise.race([this.reports.up, this.exited, delay(opts.graceMs)])
        this.signalGroup('SIGTERM')
      }
      const left = Math.max(0, opts.graceMs - (Date.now() - t0))
      const done = await Promise.race([this.exited.then(() => true), delay(left).then(() => false)])
      if (!done) opts.log(`The server did not exit within ${Math.round(opts.graceMs / 1000)} s: killing its process group (SIGKILL).`)
    }
    // Also after the leader exited: children it left behind in the group (a worker, a `cmd &`) go too.
    this.signalGroup('SIGKILL')
    await Promise.race([this.exited, delay(5000)])
    await this.log.settle(1000)
    process.off('exit', this.onProcessExit)
  }

  /** The stop command run by the supervisor inside the namespace (it can see the server's processes there). */
  private async stopInside(timeoutMs: number): Promise<void> {
    this.child.stdin!.write('stop\n')
    const r = await Promise.race([this.reports.stopped, this.exited.then(() => 'exited' as const), delay(timeoutMs).then(() => null)])
    if (r === null) this.log.note(`the stop command did not finish within ${Math.round(timeoutMs / 1000)} s`)
    else if (r !== 'exited' && r.code !== 0) this.log.note(`the stop command ${describeExit(r)}`)
  }

  /** Synchronous last resort at process exit. */
  private killNow(): void {
    if (this.stop.stopCommand !== null) {
      // Detached: it outlives servegate and stops the container the killed client started (in a namespace
      // of its own: the server's dies with the SIGKILL below).
      try {
        const { file, args } = launchArgv(this.launch, this.stop.stopCommand, null, false)
        spawn(file, args, { detached: true, stdio: 'ignore', env: { ...this.env } }).unref()
      } catch {
        // exiting anyway
      }
    }
    this.signalGroup('SIGKILL')
  }

  private signalGroup(sig: NodeJS.Signals): void {
    try {
      process.kill(-this.pid, sig)
    } catch {
      // ESRCH: the group is gone already.
    }
  }
}

/** Run the stop command, its output into the server log, for at most `timeoutMs`. */
async function runStopCommand(command: string, log: ServerLog, timeoutMs: number, env: ChildEnv): Promise<void> {
  const child = spawn('/bin/sh', ['-c', command], { detached: true, stdio: ['ignore', 'pipe', 'pipe'], env: { ...env } })
  log.follow(child.stdout!)
  log.follow(child.stderr!)
  const exited = new Promise<ServerExit>((resolve) => {
    child.once('exit', (code, signal) => resolve({ code, signal }))
    child.once('error', () => resolve({ code: null, signal: null }))
  })
  const r = await Promise.race([exited, delay(timeoutMs).then(() => null)])
  if (r === null) {
    log.note(`the stop command did not finish within ${Math.round(timeoutMs / 1000)} s`)
    try {
      if (child.pid !== undefined) process.kill(-child.pid, 'SIGKILL')
    } catch {
      // gone
    }
  } else if (r.code !== 0) {
    log.note(`the stop command ${describeExit(r)}`)
  }
}

/** The supervisor's lines on fd 3: `exit code N`, `exit signal SIG`, `stop code N`, `stop signal SIG`. */
class Reports {
  exit: ServerExit | null = null
  /** Resolves when the supervisor has started the command. */
  readonly up: Promise<void>
  readonly stopped: Promise<ServerExit>
  private onUp: () => void = () => {}
  private onStop: (e: ServerExit) => void = () => {}
  private ended = false
  private readonly onEnd: Array<() => void> = []

  constructor() {
    this.up = new Promise((resolve) => (this.onUp = resolve))
    this.stopped = new Promise((resolve) => (this.onStop = resolve))
  }

  follow(r: Readable | null | undefined): void {
    if (r == null) return void this.end()
    let rest = ''
    r.setEncoding('utf8')
    r.on('data', (chunk: string) => {
      const lines = (rest + chunk).split('\n')
      rest = lines.pop()!
      for (const line of lines) this.take(line)
    })
    for (const ev of ['end', 'close', 'error']) r.on(ev, () => this.end())
  }

  /** Resolves when fd 3 has closed (every process of the namespace is gone), or after `ms`. */
  async settled(ms: number): Promise<void> {
    if (this.ended) return
    await new Promise<void>((resolve) => {
      const t = setTimeout(resolve, ms)
      this.onEnd.push(() => {
        clearTimeout(t)
        resolve()
      })
    })
  }

  private take(line: string): void {
    if (line.trim() === 'up') return this.onUp()
    const m = /^(exit|stop) (code|signal) (\S+)$/.exec(line.trim())
    if (m === null) return
    const e: ServerExit = m[2] === 'code' ? { code: Number(m[3]), signal: null } : { code: null, signal: m[3] as NodeJS.Signals }
    if (m[1] === 'exit') this.exit ??= e
    else this.onStop(e)
  }

  private end(): void {
    this.ended = true
    for (const f of this.onEnd.splice(0)) f()
  }
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref())
}
