/** Small HTTP helpers of the simulator: reading a JSON body, sending JSON and errors. */
import type { IncomingMessage, ServerResponse } from 'node:http'
import { ApiError, errorBody } from './api-error.js'

/** Largest request body accepted, bytes (a 128k-token id prompt is ~1 MB). */
const MAX_BODY_BYTES = 32 * 1024 * 1024

/** Read and parse a JSON request body; ApiError(400) when it is not JSON. */
export async function readJsonBody(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = []
  let size = 0
  for await (const c of req as AsyncIterable<Buffer>) {
    size += c.length
    if (size > MAX_BODY_BYTES) throw new ApiError(413, `Request body larger than ${MAX_BODY_BYTES} bytes`)
    chunks.push(c)
  }
  const text = chunks.length === 1 ? (chunks[0] as Buffer).toString('utf8') : Buffer.concat(chunks).toString('utf8')
  try {
    return JSON.parse(text) as unknown
  } catch (err) {
    throw new ApiError(400, `Invalid JSON in request body: ${(err as Error).message}`)
  }
}

/** Send a JSON value with `status`. */
export function sendJson(res: ServerResponse, status: number, value: unknown, headers: Record<string, string> = {}): void {
  const body = typeof value === 'string' ? value : JSON.stringify(value)
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), ...headers })
  res.end(body)
}

/** Send a vLLM-style error body. */
export function sendError(res: ServerResponse, status: number, message: string, param: string | null = null, headers: Record<string, string> = {}): void {
  if (res.headersSent) {
    res.destroy()
    return
  }
  sendJson(res, status, errorBody(status, message, param), headers)
}

/** Send whatever was thrown: ApiErrors with their status, anything else as 500. */
export function sendThrown(res: ServerResponse, err: unknown): void {
  if (err instanceof ApiError) sendError(res, err.status, err.message, err.param)
  else sendError(res, 500, `servegate sim internal error: ${err instanceof Error ? err.message : String(err)}`)
}
