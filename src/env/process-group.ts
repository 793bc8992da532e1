/**
 * The process group of a local process, from /proc/<pid>/stat: how the GPU
 * sampler tells the measured server's own processes (servegate starts each
 * serve command in a group of its own, src/serve/server-process.ts) from
 * anything else on its GPUs.
 */
import { readFileSync } from 'node:fs'

/** Reads a pid's process group; null when it cannot be told (gone, another pid namespace, no /proc). */
export type PgidReader = (pid: number) => number | null

/**
 * The process group (field 5) of a /proc/<pid>/stat line. The command name (field 2) is in
 * parentheses and may hold spaces and ')' itself, so the fields are read after the last ')':
 * state, parent pid, process group. Null when the line does not parse.
 */
export function parseStatPgid(stat: string): number | null {
  const close = stat.lastIndexOf(')')
  if (close < 0) return null
  const fields = stat
    .slice(close + 1)
    .trim()
    .split(/\s+/)
  const pgid = Number(fields[2])
  return fields.length >= 3 && Number.isInteger(pgid) && pgid > 0 ? pgid : null
}

/** The default PgidReader: /proc/<pid>/stat of this host. */
export function readProcessGroup(pid: number): number | null {
  try {
    return parseStatPgid(readFileSync(`/proc/${pid}/stat`, 'utf8'))
  } catch {
    return null
  }
}
