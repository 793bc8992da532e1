/**
 * Files of the base branch, read with git into a checkout that may be shallow
 * and may not hold the base at all: the revision is fetched when missing, and
 * a file is read with `git show`, never checked out, so the checkout under
 * judgement stays as it is.
 */
import { relative } from 'node:path'
import type { ConfigFile } from '../config/schema.js'
import { UsageError } from '../errors.js'
import type { BaseRef } from './context.js'
import type { ActionDeps } from './deps.js'
import type { GitRunner } from './refresh-commit.js'

/**
 * A revision of the base branch that exists locally: the PR's base commit when
 * the event names it, else `origin/<ref>`; fetched from origin when missing
 * (a shallow checkout fetches one commit). Throws a UsageError when neither can be had.
 */
export async function resolveBaseRev(git: GitRunner, cwd: string, base: BaseRef): Promise<string> {
  const has = async (rev: string): Promise<boolean> => (await git(['cat-file', '-e', `${rev}^{commit}`], cwd)).code === 0
  const shallow = (await git(['rev-parse', '--is-shallow-repository'], cwd)).stdout.trim() === 'true'
  const depth = shallow ? ['--depth=1'] : []
  if (base.sha !== null) {
    if (await has(base.sha)) return base.sha
    const bySha = await git(['fetch', '--no-tags', ...depth, 'origin', base.sha], cwd)
    if (bySha.code === 0 && (await has(base.sha))) return base.sha
  }
  const tracking = `refs/remotes/origin/${base.ref}`
  const byRef = await git(['fetch', '--no-tags', ...depth, 'origin', `+refs/heads/${base.ref}:${tracking}`], cwd)
  if (base.sha !== null && (await has(base.sha))) return base.sha
  if (await has(tracking)) return tracking
  throw new UsageError(
    `servegate cannot read the base branch ${base.ref}${base.sha === null ? '' : ` (${base.sha.slice(0, 12)})`} to take the gate's terms from it: git fetch origin exited ${byRef.code}: ${byRef.stderr.trim()}`,
    'Check out the repository with actions/checkout (its origin must be reachable), or fetch the base branch before servegate runs.',
  )
}

/** A file's text at `rev` (path relative to `cwd`), or null when the file does not exist there. */
export async function showAtRev(git: GitRunner, cwd: string, rev: string, relPath: string): Promise<string | null> {
  const spec = `${rev}:./${relPath.replace(/^\.\//, '')}`
  const r = await git(['show', spec], cwd)
  if (r.code === 0) return r.stdout
  // git says "does not exist in" / "exists on disk, but not in" for a path the revision lacks.
  if (/does not exist|exists on disk, but not in|not in '/.test(r.stderr)) return null
  throw new UsageError(`servegate could not read ${relPath} at ${rev}: git show exited ${r.code}: ${r.stderr.trim()}`)
}

/**
 * The base branch's copy of the config at `configRel`: null when no config is named; a UsageError
 * when the base lacks the file, whose terms would otherwise all fall back to the defaults.
 */
export async function readBaseConfig(
  deps: ActionDeps,
  wd: string,
  rev: string,
  baseLabel: string,
  configRel: string | undefined,
  configPath: string | null,
): Promise<ConfigFile | null> {
  if (configPath === null) return null
  const text = await showAtRev(deps.git, wd, rev, relative(wd, configPath))
  if (text === null) {
    throw new UsageError(
      `the config ${configRel} does not exist on ${baseLabel}: the terms a change is judged by come from the base branch's copy, and servegate will not judge by the checkout's alone.`,
      'Merge the config into the base branch first, or point the input config at a file the base branch holds.',
    )
  }
  return deps.stages.parseConfigText(text, `${configRel} on ${baseLabel}`)
}
