/** A node:http server on 127.0.0.1:0 for client tests; each test supplies its handler. */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'

export interface FakeServer {
  /** http://127.0.0.1:PORT */
  url: string
  close(): Promise<void>
}

export async function startFakeServer(handler: (req: IncomingMessage, res: ServerResponse, body: string) => void): Promise<FakeServer> {
  const sockets = new Set<import('node:net').Socket>()
  const server = createServer((req, res) => {
    let body = ''
    req.setEncoding('utf8')
    req.on('data', (c: string) => (body += c))
    req.on('end', () => handler(req, res, body))
  })
  server.on('connection', (s) => {
    sockets.add(s)
    s.on('close', () => sockets.delete(s))
  })
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((r) => {
        for (const s of sockets) s.destroy()
        server.close(() => r())
      }),
  }
}

/** Start an SSE answer. */
export function sseHead(res: ServerResponse): void {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' })
}

export function sse(res: ServerResponse, data: unknown): void {
  res.write(`data: ${typeof data === 'string' ? data : JSON.stringify(data)}\n\n`)
}

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms))
