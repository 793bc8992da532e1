/**
 * Checking an output path before the work that fills it. A sweep that runs for
 * an hour and then cannot write its result has wasted the GPU; a compare whose
 * `--json` cannot be written has lost the verdict. So every command checks its
 * output flags first and stops with one line naming the flag, the path and why.
 */
import { accessSync, constants, statSync, type Stats } from 'node:fs'
import { dirname, resolve } from 'node:path'
import { UsageError } from '../errors.js'

/** How the command's writer treats a missing directory. */
export interface OutputOptions {
  /**
   * true (default): the writer creates missing parent directories (writeFileAtomic does), so a
   * missing directory is fine when it can be created; false: it must exist already.
   */
  createsDirs?: boolean
}

/**
 * Throw a UsageError unless `path` can be written: it is not a directory (nor
 * an existing read-only file), and its directory exists — or, for writers that
 * create directories, can be created — and is writable. `flag` names the option
 * in the one-line message (`--out`, `--json`, `--markdown`, `--into`).
 * Undefined: nothing to check.
 */
export function assertWritableOutput(path: string | undefined, flag: string, opts: OutputOptions = {}): void {
  if (path === undefined) return
  const problem = outputProblem(path, opts)
  if (problem !== null) {
    throw new UsageError(`${flag} ${path}: ${problem}`, 'Choose a file in an existing, writable directory.')
  }
}

/** Why `path` cannot be written, or null when it can (as far as the file system says now). */
export function outputProblem(path: string, opts: OutputOptions = {}): string | null {
  if (path.trim() === '') return 'expected a file path, got an empty string'
  const target = statOrNull(path)
  if (target?.isDirectory()) return 'is a directory, expected a file path'
  const dir = dirname(resolve(path))
  const parent = statOrNull(dir)
  if (parent === null) {
    if (opts.createsDirs === false) return `directory ${dir} does not exist`
    // The writer will create it: find the nearest existing ancestor and ask whether it can.
    let above = dirname(dir)
    let st = statOrNull(above)
    while (st === null && dirname(above) !== above) {
      above = dirname(above)
      st = statOrNull(above)
    }
    if (st === null) return `directory ${dir} does not exist and cannot be created`
    if (!st.isDirectory()) return `directory ${dir} does not exist and cannot be created: ${above} is not a directory`
    if (!canWrite(above)) return `directory ${dir} does not exist and cannot be created: ${above} is not writable`
    return null
  }
  if (!parent.isDirectory()) return `${dir} is not a directory`
  // Atomic writes create a temporary file beside the target and rename it: the directory must be writable.
  if (!canWrite(dir)) return `directory ${dir} is not writable`
  if (target !== null && !canWrite(path)) return 'the file exists and is not writable'
  return null
}

function statOrNull(path: string): Stats | null {
  try {
    return statSync(path)
  } catch {
    return null
  }
}

function canWrite(path: string): boolean {
  try {
    accessSync(path, constants.W_OK)
    return true
  } catch {
    return false
  }
}
