/**
 * The server's stdout and stderr, line by line, redacted, into a log file; the
 * last lines are kept in memory for error messages. A server prints its own
 * arguments (vLLM logs every non-default one, `--api-key` included), so
 * nothing it writes is stored or shown unredacted.
 *
 * What a pull request's engine printed is data, not text servegate vouches
 * for: the tail that reaches a message (and from there a comment, a summary, a
 * record or a result file) is its last few lines, each cut short, with
 * control characters and escape sequences removed. Where the command ran
 * without a PID namespace of its own (`server.isolation: none`) the tail is
 * withheld altogether: there it could have read a token from another process
 * and printed it reversed or encoded, which redaction by value cannot see.
 */
import { createWriteStream, mkdirSync, type WriteStream } from 'node:fs'
import { dirname } from 'node:path'
import type { Readable } from 'node:stream'
import { redactSecrets } from '../util/redact.js'

/** Lines kept in memory for the tail (the file has them all). */
const KEEP_LINES = 200
/** The most lines of the log a tail shows: enough for a traceback's last words. */
export const TAIL_LINES = 5
/** A line longer than this is cut in the tail (a progress bar redrawn without newlines, an encoded blob). */
const MAX_TAIL_LINE = 200
/** The tail's one line where the command ran without isolation. */
export const TAIL_WITHHELD =
  "[servegate] the server's output is left out of messages: its command ran without a PID namespace of its own (server.isolation: none), where it could have read tokens that redaction cannot recognise"

export class ServerLog {
  private readonly file: WriteStream
  private readonly lines: string[] = []
  private readonly partial = new Map<Readable, string>()
  private readonly open = new Set<Readable>()
  private readonly drained: Array<() => void> = []
  /** Whether the tail is withheld from messages (the command ran without a PID namespace of its own). */
  withheld = false

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

  /** The last `n` lines (at most TAIL_LINES) as messages may show them (publicTail), or TAIL_WITHHELD. */
  tail(n = TAIL_LINES): string[] {
    if (this.withheld && this.lines.length > 0) return [TAIL_WITHHELD]
    return publicTail(this.lines, n)
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

/** Escape sequences (colours, cursor moves, terminal titles) a line may carry. */
const ESCAPES = /\x1b(?:\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(?:\x07|\x1b\\)?|[@-Z\\-_])/g
/** C0 and C1 controls, and the invisible characters that reorder or hide text (bidi overrides, zero widths). */
const INVISIBLE = /[\x00-\x08\x0b-\x1f\x7f-\x9f\u200b-\u200f\u202a-\u202e\u2060-\u2069\ufeff]/g

/** One log line as a message may show it: printable characters only, at most MAX_TAIL_LINE of them. */
export function printableLine(line: string): string {
  const l = line.replace(ESCAPES, '').replace(INVISIBLE, '').replace(/\t/g, ' ')
  return l.length > MAX_TAIL_LINE ? `${l.slice(0, MAX_TAIL_LINE)} …` : l
}

/** The last `n` lines (at most TAIL_LINES) of `lines`, each printable and cut short. */
export function publicTail(lines: readonly string[], n = TAIL_LINES): string[] {
  return lines.slice(-Math.max(0, Math.min(n, TAIL_LINES))).map(printableLine)
}

/** The tail as an indented block for an error message, naming the log file. */
export function formatTail(tail: readonly string[], path: string): string {
  if (tail.length === 0) return `  (the server wrote nothing; log: ${path})`
  if (tail.length === 1 && tail[0] === TAIL_WITHHELD) return `  ${TAIL_WITHHELD.replace('[servegate] ', '')}; the whole log is in ${path}`
  return [`  last ${tail.length} line${tail.length === 1 ? '' : 's'} of the server log (${path}):`, ...tail.map((l) => `  | ${l}`)].join('\n')
}
