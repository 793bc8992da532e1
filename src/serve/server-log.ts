/**
 * The server's stdout and stderr, line by line, redacted, into a log file; the
 * last lines are kept in memory for error messages. A server prints its own
 * arguments (vLLM logs every non-default one, `--api-key` included), so
 * nothing it writes is stored or shown unredacted.
 */
import { createWriteStream, mkdirSync, type WriteStream } from 'node:fs'
import { dirname } from 'node:path'
import type { Readable } from 'node:stream'
import { redactSecrets } from '../util/redact.js'

/** Lines kept in memory for the tail (the file has them all). */
const KEEP_LINES = 200
/** A line longer than this is cut in the tail (a progress bar redrawn without newlines). */
const MAX_TAIL_LINE = 500

export class ServerLog {
  private readonly file: WriteStream
  private readonly lines: string[] = []
  private readonly partial = new Map<Readable, string>()
  private readonly open = new Set<Readable>()
  private readonly drained: Array<() => void> = []

  constructor(
    readonly path: string,
    private readonly secrets: readonly string[],
    /** Keep what the file holds (a resumed sweep keeps the log that explains why it stopped). */
    append = false,
  ) {
    mkdirSync(dirname(path), { recursive: true })
    this.file = createWriteStream(path, { flags: append ? 'a' : 'w' })
    // A full disk must not take the sweep down: the log is a diagnosis aid.
    this.file.on('error', () => {})
  }

  /** Read `stream` into the log until it ends. */
  follow(stream: Readable): void {
    this.open.add(stream)
    this.partial.set(stream, '')
    stream.setEncoding('utf8')
    stream.on('data', (chunk: string) => {
      const text = this.partial.get(stream)! + chunk
      const parts = text.split(/\r?\n|\r/)
      this.partial.set(stream, parts.pop()!)
      for (const line of parts) this.add(line)
    })
    const end = (): void => {
      if (!this.open.delete(stream)) return
      const rest = this.partial.get(stream)!
      if (rest !== '') this.add(rest)
      if (this.open.size === 0) for (const f of this.drained.splice(0)) f()
    }
    stream.on('end', end)
    stream.on('close', end)
    stream.on('error', end)
  }

  /** Write one line of servegate's own (marked as such) into the log. */
  note(line: string): void {
    this.add(`[servegate] ${line}`)
  }

  /** Resolves when every followed stream has ended, or after `maxMs` (a grandchild may hold a pipe open). */
  async settle(maxMs: number): Promise<void> {
    if (this.open.size === 0) return
    await new Promise<void>((resolve) => {
      const t = setTimeout(resolve, maxMs)
      this.drained.push(() => {
        clearTimeout(t)
        resolve()
      })
    })
  }

  /** The last `n` lines (redacted, long lines cut). */
  tail(n = 20): string[] {
    return this.lines.slice(-n).map((l) => (l.length > MAX_TAIL_LINE ? `${l.slice(0, MAX_TAIL_LINE)} …` : l))
  }

  /** Flush and close the file. */
  async close(): Promise<void> {
    await new Promise<void>((resolve) => this.file.end(resolve))
  }

  private add(raw: string): void {
    const line = redactSecrets(raw, this.secrets)
    this.file.write(`${line}\n`)
    this.lines.push(line)
    if (this.lines.length > KEEP_LINES) this.lines.splice(0, this.lines.length - KEEP_LINES)
  }
}

/** The tail as an indented block for an error message, naming the log file. */
export function formatTail(tail: readonly string[], path: string): string {
  if (tail.length === 0) return `  (the server wrote nothing; log: ${path})`
  return [`  last ${tail.length} line${tail.length === 1 ? '' : 's'} of the server log (${path}):`, ...tail.map((l) => `  | ${l}`)].join('\n')
}
