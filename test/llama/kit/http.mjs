// The front's HTTP helpers (front.mjs, dialects.mjs): a request's JSON body, JSON and text answers,
// and the error every handler throws for a status other than 500.

/** An error answered with its own HTTP status (anything else thrown is a 500). */
export class ApiError extends Error {
  /** `body` replaces the dialect's own error shape where the engine answers this case in another one. */
  constructor(status, message, body = null) {
    super(message)
    this.status = status
    this.body = body
  }
}

/** The request's body parsed as JSON (at most 8 MiB); ApiError 400 when it is not JSON. */
export async function readJson(req) {
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

/** Answer `obj` as JSON with `status`. */
export function sendJson(res, status, obj) {
  const text = JSON.stringify(obj)
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) })
  res.end(text)
}

/** Answer `text` (of content type `type`) with `status`. */
export function sendText(res, status, text, type = 'text/plain; charset=utf-8') {
  res.writeHead(status, { 'content-type': type, 'content-length': Buffer.byteLength(text) })
  res.end(text)
}
