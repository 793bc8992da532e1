/** servegate's own version and git commit, for the environment record. */
import { readFileSync, realpathSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import type { ExecFn } from './exec.js'

/** Directory of servegate's package.json, found upward from this module; null when it cannot be found (e.g. bundled). */
export function findHarnessRoot(start?: string): string | null {
  let dir: string
  try {
    dir = start ?? dirname(fileURLToPath(import.meta.url))
  } catch {
    return null
  }
  for (let i = 0; i < 8; i++) {
    try {
      const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { name?: unknown }
      if (pkg.name === 'servegate') return dir
    } catch {
      // not here; keep walking up
    }
    const parent = dirname(dir)
    if (parent === dir) break
    dir = parent
  }
  return null
}

/** servegate's version from its package.json, or 'unknown'. */
export function harnessVersion(root: string | null): string {
  if (!root) return 'unknown'
  try {
    const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { version?: unknown }
    return typeof pkg.version === 'string' ? pkg.version : 'unknown'
  } catch {
    return 'unknown'
  }
}

/**
 * The commit servegate runs from, or 'unknown' — also when servegate sits
 * inside another repository (e.g. node_modules of a project), whose commit is not ours.
 */
export async function harnessGitCommit(exec: ExecFn, root: string | null): Promise<string> {
  if (!root) return 'unknown'
  const res = await exec('git', ['rev-parse', '--show-toplevel', 'HEAD'], { cwd: root })
  if (!res) return 'unknown'
  const [top, sha] = res.stdout.trim().split(/\r?\n/)
  if (!top || !sha || !/^[0-9a-f]{40,64}$/.test(sha.trim())) return 'unknown'
  const real = (p: string): string => {
    try {
      return realpathSync(p)
    } catch {
      return p
    }
  }
  return real(top.trim()) === real(root) ? sha.trim() : 'unknown'
}
