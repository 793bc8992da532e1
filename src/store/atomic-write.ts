/**
 * Write a file so that readers (and a resumed sweep after Ctrl-C or a killed
 * job) see either the old content or the new, never a truncated mix: write a
 * temp file in the same directory, fsync it, then rename over the target.
 */
import { randomBytes } from 'node:crypto'
import { mkdir, open, rename, rm } from 'node:fs/promises'
import { basename, dirname, join, resolve } from 'node:path'
import { redactSecrets, redactStrings } from '../util/redact.js'

/**
 * Atomically replace `path` with `text` (UTF-8), creating missing parent directories.
 * Every file servegate writes leaves the process here: the text is redacted first
 * (util/redact.ts), so no report, verdict or export carries a secret the process knows.
 */
export async function writeFileAtomic(path: string, text: string): Promise<void> {
  await writeRaw(path, redactSecrets(text))
}

/**
 * Atomically write `value` as pretty JSON with a trailing newline. Its strings are redacted
 * one by one, never the JSON text: a secret that happens to be digits must not turn a number
 * into `***` and the file into invalid JSON.
 */
export async function writeJsonAtomic(path: string, value: unknown): Promise<void> {
  await writeRaw(path, jsonText(value))
}

/** The JSON text writeJsonAtomic writes: strings redacted, 2-space indent, trailing newline. */
export function jsonText(value: unknown): string {
  return `${JSON.stringify(redactStrings(value), null, 2)}\n`
}

async function writeRaw(path: string, text: string): Promise<void> {
  const target = resolve(path)
  const dir = dirname(target)
  await mkdir(dir, { recursive: true })
  // Same directory as the target: rename is only atomic within one filesystem.
  const tmp = join(dir, `.${basename(target)}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`)
  try {
    const fh = await open(tmp, 'wx')
    try {
      await fh.writeFile(text, 'utf8')
      // Data on disk before the rename publishes it: a crash then leaves the old file, not an empty one.
      await fh.sync()
    } finally {
      await fh.close()
    }
    await rename(tmp, target)
  } catch (err) {
    await rm(tmp, { force: true })
    throw err
  }
  await syncDir(dir)
}

/** Persist the rename itself; some platforms cannot open a directory, which is fine to skip. */
async function syncDir(dir: string): Promise<void> {
  let fh
  try {
    fh = await open(dir, 'r')
    await fh.sync()
  } catch {
    // EISDIR/EPERM on Windows and some filesystems: the rename is still atomic, only less durable.
  } finally {
    await fh?.close()
  }
}
