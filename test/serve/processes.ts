/** Whether a process group still has live members, from /proc (Linux). */
import { readdirSync, readFileSync } from 'node:fs'

/** Live (not zombie) processes whose process group is `pgid`. */
export function liveMembers(pgid: number): number[] {
  const out: number[] = []
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue
    let stat: string
    try {
      stat = readFileSync(`/proc/${name}/stat`, 'utf8')
    } catch {
      continue // exited while we looked
    }
    // pid (comm) state ppid pgrp …; comm may hold spaces and parentheses: split after the last ')'.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
    if (Number(fields[2]) === pgid && fields[0] !== 'Z' && fields[0] !== 'X') out.push(Number(name))
  }
  return out
}

/**
 * Whether every process of the group `pgid` has exited within `withinMs`. Zombies count as
 * exited: an orphan is reaped by whatever init the host runs, whenever it gets to it.
 */
export async function groupGone(pgid: number, withinMs = 5000): Promise<boolean> {
  const deadline = Date.now() + withinMs
  for (;;) {
    if (liveMembers(pgid).length === 0) return true
    if (Date.now() > deadline) return false
    await new Promise((r) => setTimeout(r, 25))
  }
}
