/** Run test/load/stream-server.mjs in a child process (its own event loop and core), driven over IPC. */
import { fork, type ChildProcess } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import type { ServerRequestLog } from './stream-server.mjs'

export interface ServerStats {
  open: number
  maxOpen: number
  /** ∫ open streams dt since the last reset, ms. */
  openArea: number
  served: number
  sockets: number
}

export interface ServerProcess {
  url: string
  stats(): Promise<ServerStats>
  resetStats(): Promise<void>
  requests(): Promise<ServerRequestLog[]>
  close(): Promise<void>
}

export interface StreamServerConfig {
  ttftMs: number
  itlMs: number
  mode?: 'staggered' | 'stepped'
}

const script = fileURLToPath(new URL('./stream-server.mjs', import.meta.url))

/** Fork the stream server and wait until it listens on 127.0.0.1. */
export async function startServerProcess(cfg: StreamServerConfig): Promise<ServerProcess> {
  const child: ChildProcess = fork(script, [JSON.stringify(cfg)], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'], execArgv: [] })
  const next = <T>(type: string): Promise<T> =>
    new Promise((resolve, reject) => {
      const onMsg = (m: { type: string }): void => {
        if (m.type !== type) return
        child.off('message', onMsg)
        child.off('exit', onExit)
        resolve(m as T)
      }
      const onExit = (code: number | null): void => reject(new Error(`stream server exited (${code})`))
      child.on('message', onMsg)
      child.once('exit', onExit)
    })
  const { port } = await next<{ port: number }>('ready')
  return {
    url: `http://127.0.0.1:${port}`,
    async stats() {
      const p = next<{ stats: ServerStats }>('stats')
      child.send('stats')
      return (await p).stats
    },
    async requests() {
      const p = next<{ requests: ServerRequestLog[] }>('requests')
      child.send('requests')
      return (await p).requests
    },
    async resetStats() {
      const p = next('reset')
      child.send('reset')
      await p
    },
    async close() {
      if (child.exitCode !== null) return
      const exited = new Promise<void>((r) => child.once('exit', () => r()))
      child.send('close')
      await exited
    },
  }
}
