/**
 * Write a file so that readers (and a resumed sweep after Ctrl-C or a killed
 * job) see either the old content or the new, never a truncated mix: write a
 * temp file in the same directory, fsync it, then rename over the target.
 */
import { randomBytes } from 'node:crypto'
import { mkdir, open, rename, rm } from 'node:fs/promises'
import { basename, dirname, join, resolve } from 'node:path'

/** Atomically replace `path` with `text` (UTF-8), creating missing parent directories. */
export async function writeFileAtomic(path: string, text: string): Promise<void> {
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
