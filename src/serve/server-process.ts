/**
 * One server process group: spawned through `/bin/sh -c` in a group of its
 * own (so a Ctrl-C at the terminal reaches servegate, which then stops the
 * server in order, and so the engine's worker processes go with it), watched
 * until it exits, and stopped with SIGTERM to the group, a grace period, then
 * SIGKILL — or with the user's stop command (`docker stop X`).
 */
import { spawn, type ChildProcess } from 'node:child_process'
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

  /** Start `command` (placeholders already filled) with its output into `log`. */
  constructor(
    command: string,
    private readonly log: ServerLog,
    private readonly stop: Pick<StopOptions, 'stopCommand'>,
    private readonly env: ChildEnv,
  ) {
    // The command comes from a config a pull request may edit: it gets the allow-listed env only.
    this.child = spawn('/bin/sh', ['-c', command], { detached: true, stdio: ['ignore', 'pipe', 'pipe'], env: { ...env } })
    if (this.child.pid === undefined) throw new Error('could not start /bin/sh')
    this.pid = this.child.pid
    log.follow(this.child.stdout!)
    log.follow(this.child.stderr!)
    this.exited = new Promise((resolve) => {
      this.child.once('exit', (code, signal) => {
        this.exitInfo = { code, signal }
        resolve(this.exitInfo)
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
        await runStopCommand(opts.stopCommand, this.log, opts.graceMs, this.env)
      } else {
        opts.log(`Stopping the server (SIGTERM to its process group, up to ${Math.round(opts.graceMs / 1000)} s before SIGKILL).`)
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

  /** Synchronous last resort at process exit. */
  private killNow(): void {
    if (this.stop.stopCommand !== null) {
      // Detached: it outlives servegate and stops the container the killed client started.
      try {
        spawn('/bin/sh', ['-c', this.stop.stopCommand], { detached: true, stdio: 'ignore', env: { ...this.env } }).unref()
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

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref())
}
