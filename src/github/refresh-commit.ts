/**
 * Commit a refreshed baseline file (and push it when asked), with git run as a
 * child process in the workspace. Only the baseline path is committed, so
 * anything else the workflow staged is left alone.
 *
 * When the push is rejected because the branch moved (another refresh, or any
 * merge, landed meanwhile), the file is rebuilt on the branch's new head by the
 * caller's `rebuild` (the baseline logic stays with the caller) and committed
 * on top of that head with plumbing — a temporary index, `commit-tree -p` — so
 * the workflow's working tree and index are not disturbed, then pushed again,
 * a few times with a jittered backoff. Published history is never rewritten:
 * no force push, every refresh its own commit.
 */
import { execFile } from 'node:child_process'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { UsageError } from '../errors.js'
import { redactSecrets } from '../util/redact.js'

export interface GitResult {
  code: number
  stdout: string
  stderr: string
}

export interface GitRunOptions {
  /** Extra environment for this command (e.g. GIT_INDEX_FILE for a temporary index). */
  env?: Record<string, string>
}

/** Runs `git ARGS` in `cwd`; never throws for a non-zero exit (the code says it). */
export type GitRunner = (args: readonly string[], cwd: string, opts?: GitRunOptions) => Promise<GitResult>

/** The real runner: git from PATH, with prompts disabled so a missing credential fails fast. */
export const execGit: GitRunner = (args, cwd, opts) =>
  new Promise((resolve) => {
    const env = { ...process.env, ...opts?.env, GIT_TERMINAL_PROMPT: '0' }
    execFile('git', [...args], { cwd, env, maxBuffer: 16 * 1024 * 1024 }, (err, stdout, stderr) => {
      const code = err === null ? 0 : typeof (err as { code?: unknown }).code === 'number' ? (err as { code: number }).code : 1
      resolve({ code, stdout: String(stdout), stderr: err !== null && stderr === '' ? err.message : String(stderr) })
    })
  })

// The identity GitHub shows as github-actions[bot]; used only when the workflow set none.
const BOT_NAME = 'github-actions[bot]'
const BOT_EMAIL = '41898282+github-actions[bot]@users.noreply.github.com'

/** Pushes retried after the branch moved, by default. */
const DEFAULT_PUSH_RETRIES = 5

/** The baseline file rebuilt on the branch's new head, and the commit message that describes it. */
export interface RebuiltFile {
  text: string
  message: string
}

export interface RefreshCommitOptions {
  /** Repository working directory (the action's working directory). */
  cwd: string
  /** Baseline file, relative to cwd. */
  path: string
  message: string
  push: boolean
  /** GITHUB_REF, used as the push target when it names a branch. */
  ref?: string
  /**
   * After a push rejected because the branch moved: this run's file rebuilt on the file as it is
   * on the branch's new head (`remoteText`; null when the head has no such file). Returning
   * `remoteText` itself means the head already holds this refresh: nothing is pushed. Throws
   * (a UsageError saying why) when the head's file cannot take it.
   */
  rebuild: (remoteText: string | null) => RebuiltFile
  /** Pushes retried after a rejection because the branch moved (default 5). */
  retries?: number
  /** Wait before retry `attempt` (1-based), ms; default a jittered exponential backoff from 100 ms (about 3 s over five retries). */
  backoffMs?: (attempt: number) => number
}

export interface RefreshCommitResult {
  committed: boolean
  pushed: boolean
  sha: string | null
  /** What happened, for the log. */
  note: string
}

async function must(git: GitRunner, args: readonly string[], cwd: string, what: string, opts?: GitRunOptions): Promise<string> {
  const r = await git(args, cwd, opts)
  if (r.code !== 0) throw new UsageError(`servegate could not ${what}: git ${args.join(' ')} exited ${r.code}: ${r.stderr.trim()}`)
  return r.stdout.trim()
}

/** Stage and commit the baseline file; push to the branch when `push` is set, replaying it on the branch's new head when that moved. */
export async function commitBaseline(git: GitRunner, opts: RefreshCommitOptions): Promise<RefreshCommitResult> {
  const { cwd, path } = opts
  await must(
    git,
    ['rev-parse', '--show-toplevel'],
    cwd,
    `find a git repository at ${cwd} (use actions/checkout before servegate, or set refresh-commit: false)`,
  )
  await must(git, ['add', '--', path], cwd, `stage ${path}`)
  const diff = await git(['diff', '--cached', '--quiet', '--', path], cwd)
  if (diff.code === 0) return { committed: false, pushed: false, sha: null, note: `${path} is unchanged; nothing to commit` }

  const identity: string[] = []
  const name = await git(['config', 'user.name'], cwd)
  const email = await git(['config', 'user.email'], cwd)
  // Only fill in what is missing, per command: the repository's config is left untouched.
  if (name.code !== 0 || name.stdout.trim() === '') identity.push('-c', `user.name=${BOT_NAME}`)
  if (email.code !== 0 || email.stdout.trim() === '') identity.push('-c', `user.email=${BOT_EMAIL}`)
  // The message quotes the run (sweep, serve command): a commit is public and forever, so it is redacted.
  await must(git, [...identity, 'commit', '--no-verify', '-m', redactSecrets(opts.message), '--', path], cwd, `commit ${path}`)
  const sha = await must(git, ['rev-parse', 'HEAD'], cwd, 'read the new commit')
  if (!opts.push) return { committed: true, pushed: false, sha, note: `committed ${path} as ${sha.slice(0, 12)} (not pushed: refresh-push is false)` }

  const branch = await pushTarget(git, cwd, opts.ref)
  const first = await git(['push', 'origin', `HEAD:refs/heads/${branch}`], cwd)
  if (first.code === 0) return { committed: true, pushed: true, sha, note: `committed ${path} as ${sha.slice(0, 12)} and pushed it to ${branch}` }
  return replayOnMovedBranch(git, opts, { branch, identity, local: sha, rejection: first })
}

/** Why a push was rejected: the branch moved (retry on its new head), the remote refused it (protection, a hook), or anything else. */
function pushRejection(stderr: string): 'moved' | 'refused' | 'other' {
  if (/\[rejected\][^\n]*\((fetch first|non-fast-forward)\)/.test(stderr)) return 'moved'
  // Two pushes reaching the remote at once: the loser's ref update finds the ref already changed.
  if (/\[remote rejected\][^\n]*\((cannot lock ref|failed to update ref|failed to lock|incorrect old value)/.test(stderr)) return 'moved'
  if (/\[remote rejected\]|GH006|GH013|protected branch/i.test(stderr)) return 'refused'
  return 'other'
}

/** The remote's first explanation of a rejection (e.g. "GH006: Protected branch update failed"), for one line. */
function reasonOf(stderr: string): string {
  const lines = stderr
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l !== '')
  const remote = lines.find((l) => /^remote: (error: )?\S/.test(l) && !/^remote: (Resolving|Counting|Compressing|Total)/.test(l))
  const rejected = lines.find((l) => l.includes('[remote rejected]') || l.includes('[rejected]'))
  return [remote, rejected].filter((l): l is string => l !== undefined).join(' / ') || lines.join(' / ')
}

interface Replay {
  branch: string
  identity: string[]
  /** Our local commit (on the checkout's HEAD), never pushed. */
  local: string
  rejection: GitResult
}

const defaultBackoff = (attempt: number): number => Math.round(100 * 2 ** (attempt - 1) * (0.5 + Math.random()))
const sleep = (ms: number): Promise<void> => new Promise((done) => setTimeout(done, ms))

async function replayOnMovedBranch(git: GitRunner, opts: RefreshCommitOptions, r: Replay): Promise<RefreshCommitResult> {
  const { cwd, path } = opts
  const { branch, identity, local } = r
  const retries = opts.retries ?? DEFAULT_PUSH_RETRIES
  const backoff = opts.backoffMs ?? defaultBackoff
  // Nothing is lost when the push fails: the workflow's later steps (an artifact upload) can keep the file.
  const kept = `the refreshed ${path} stays written in the workspace (committed locally as ${local.slice(0, 12)})`
  const fail = (what: string, hint: string): UsageError =>
    new UsageError(`servegate could not push the refreshed baseline to ${branch}: ${what}; ${kept}`, hint)
  const top = await must(git, ['rev-parse', '--show-toplevel'], cwd, 'find the repository root')
  const full = `${await must(git, ['rev-parse', '--show-prefix'], cwd, 'find the working directory in the repository')}${path.replace(/^\.\//, '')}`
  let rejection = r.rejection
  let rejected = 0
  for (let attempt = 1; ; attempt++) {
    const kind = pushRejection(rejection.stderr)
    if (kind === 'refused') {
      throw fail(
        `the remote refused it (branch protection or a pre-receive hook): ${reasonOf(rejection.stderr)}`,
        'Use refresh-commit: false and open a pull request with the file instead (docs/action.md, "Protected branches").',
      )
    }
    if (kind === 'other') {
      throw fail(
        `git push exited ${rejection.code}: ${reasonOf(rejection.stderr)}`,
        'The refresh job needs "permissions: contents: write" and a checkout of the branch; or set refresh-push: false and push in a later step.',
      )
    }
    rejected++
    if (attempt > retries) {
      throw fail(
        `the branch kept moving: ${rejected} pushes rejected as non-fast-forward`,
        'Rerun the refresh job, or set refresh-commit: false and commit the file in a later step.',
      )
    }
    await sleep(backoff(attempt))
    const tracking = `refs/remotes/origin/${branch}`
    const fetched = await git(['fetch', '--no-tags', 'origin', `+refs/heads/${branch}:${tracking}`], cwd)
    if (fetched.code !== 0)
      throw fail(
        `the branch moved and fetching its new head failed: git fetch exited ${fetched.code}: ${reasonOf(fetched.stderr)}`,
        "Check that origin is reachable with the checkout's credentials, then rerun the refresh job.",
      )
    const head = await must(git, ['rev-parse', `${tracking}^{commit}`], cwd, `read the new head of ${branch}`)
    const remoteText = await fileAt(git, top, head, full)
    let rebuilt: RebuiltFile
    try {
      rebuilt = opts.rebuild(remoteText)
    } catch (err) {
      const why =
        err instanceof Error
          ? err.message
              .split('\n')
              .map((l) => l.trim())
              .filter((l) => l !== '')
              .join(' ')
          : String(err)
      throw fail(
        `the branch moved to ${head.slice(0, 12)} and this refresh cannot be replayed on it: ${why}`,
        'Look at the baseline file on the branch, then rerun the refresh job.',
      )
    }
    if (remoteText !== null && rebuilt.text === remoteText) {
      const moved = await bringCheckoutTo(git, { cwd, top, path, full, local, target: head, text: remoteText })
      return {
        committed: false,
        pushed: false,
        sha: head,
        note: `${branch} at ${head.slice(0, 12)} already holds this refresh of ${path}; nothing pushed; ${moved}`,
      }
    }
    const commit = await commitOnto(git, { top, full, parent: head, text: rebuilt.text, message: rebuilt.message, identity })
    rejection = await git(['push', 'origin', `${commit}:refs/heads/${branch}`], cwd)
    if (rejection.code === 0) {
      const moved = await bringCheckoutTo(git, { cwd, top, path, full, local, target: commit, text: rebuilt.text })
      const times = rejected === 1 ? 'once' : `${rejected} times`
      return {
        committed: true,
        pushed: true,
        sha: commit,
        note: `pushed ${path} to ${branch} as ${commit.slice(0, 12)}, replayed on the branch's new head ${head.slice(0, 12)} (the branch moved: push rejected ${times}); ${moved}`,
      }
    }
  }
}

/** The file's text at `rev` (path from the repository root), null when the revision has no such file. */
async function fileAt(git: GitRunner, top: string, rev: string, full: string): Promise<string | null> {
  const exists = await git(['cat-file', '-e', `${rev}:${full}`], top)
  if (exists.code !== 0) return null
  return git(['cat-file', 'blob', `${rev}:${full}`], top).then((r) => {
    if (r.code !== 0) throw new UsageError(`servegate could not read ${full} at ${rev}: git cat-file exited ${r.code}: ${r.stderr.trim()}`)
    return r.stdout
  })
}

/** A commit whose parent is `parent` and whose tree is `parent`'s with `full` set to `text`; built in a temporary index, so the checkout is not touched. */
async function commitOnto(
  git: GitRunner,
  c: { top: string; full: string; parent: string; text: string; message: string; identity: string[] },
): Promise<string> {
  const tmp = await mkdtemp(join(tmpdir(), 'servegate-commit-'))
  try {
    const file = join(tmp, 'baseline')
    await writeFile(file, c.text, 'utf8')
    // --path: the repository's attributes (eol, filters) apply as they would to the file itself.
    const blob = await must(git, ['hash-object', '-w', `--path=${c.full}`, '--', file], c.top, 'store the rebuilt baseline')
    const index = { env: { GIT_INDEX_FILE: join(tmp, 'index') } }
    await must(git, ['read-tree', c.parent], c.top, "read the branch's new head", index)
    const listed = await git(['ls-tree', c.parent, '--', c.full], c.top)
    const mode = /^(100644|100755) blob /.exec(listed.stdout)?.[1] ?? '100644'
    await must(git, ['update-index', '--add', '--cacheinfo', `${mode},${blob},${c.full}`], c.top, 'stage the rebuilt baseline', index)
    const tree = await must(git, ['write-tree'], c.top, 'write the tree of the rebuilt baseline', index)
    return await must(git, [...c.identity, 'commit-tree', tree, '-p', c.parent, '-m', redactSecrets(c.message)], c.top, 'commit the rebuilt baseline')
  } finally {
    await rm(tmp, { recursive: true, force: true })
  }
}

/**
 * Move the checkout from our local commit to `target` (what the branch now holds) when the commit we
 * built on is an ancestor of it — our local commit was never pushed, so replacing it rewrites nothing
 * anyone has — keeping whatever else the workflow staged. Otherwise leave HEAD and write the file.
 */
async function bringCheckoutTo(
  git: GitRunner,
  m: { cwd: string; top: string; path: string; full: string; local: string; target: string; text: string },
): Promise<string> {
  const base = await git(['rev-parse', '--verify', '-q', `${m.local}^`], m.top)
  const forward = base.code === 0 && (await git(['merge-base', '--is-ancestor', base.stdout.trim(), m.target], m.top)).code === 0
  if (forward) {
    // Two-tree read-tree: the checkout's way of moving; it refuses (changing nothing) when a local change is in the way.
    const moved = await git(['read-tree', '-m', '-u', m.local, m.target], m.top)
    if (moved.code === 0) {
      const ref = await git(['update-ref', '-m', 'servegate: the refresh landed on the branch', 'HEAD', m.target, m.local], m.top)
      if (ref.code === 0) return `the checkout is at ${m.target.slice(0, 12)}`
    }
  }
  await writeFile(join(m.top, m.full), m.text, 'utf8')
  return `the checkout stays at ${m.local.slice(0, 12)}, with ${m.path} as pushed`
}

/**
 * Before the GPU sweep: fail now, not after an hour of measuring, when the
 * refreshed baseline could not be committed or pushed — no git repository,
 * a detached HEAD with no branch in GITHUB_REF, or no permission to push
 * (`git push --dry-run`). Returns a note for the log.
 */
export async function checkRefreshCommit(git: GitRunner, opts: Pick<RefreshCommitOptions, 'cwd' | 'push' | 'ref'>): Promise<string> {
  const { cwd } = opts
  await must(
    git,
    ['rev-parse', '--show-toplevel'],
    cwd,
    `find a git repository at ${cwd} (use actions/checkout before servegate, or set refresh-commit: false)`,
  )
  if (!opts.push) return 'the working directory is a git repository (refresh-push is false: nothing will be pushed)'
  const branch = await pushTarget(git, cwd, opts.ref)
  const r = await git(['push', '--dry-run', 'origin', `HEAD:refs/heads/${branch}`], cwd)
  // Rejected as non-fast-forward means the server let us in: the real push replays on the new head.
  if (r.code !== 0 && !/\[rejected\].*\((fetch first|non-fast-forward)\)/.test(r.stderr)) {
    throw new UsageError(
      `servegate would not be able to push the refreshed baseline to ${branch} (checked before the sweep): git push --dry-run exited ${r.code}: ${r.stderr.trim()}`,
      'The refresh job needs "permissions: contents: write" and a checkout of the branch; or set refresh-push: false and push in a later step.',
    )
  }
  return `the refreshed baseline can be pushed to ${branch}`
}

async function pushTarget(git: GitRunner, cwd: string, ref: string | undefined): Promise<string> {
  if (ref?.startsWith('refs/heads/')) return ref.slice('refs/heads/'.length)
  const r = await git(['symbolic-ref', '--short', '-q', 'HEAD'], cwd)
  if (r.code === 0 && r.stdout.trim() !== '') return r.stdout.trim()
  throw new UsageError(
    `servegate cannot push the refreshed baseline: HEAD is detached and GITHUB_REF (${ref ?? 'unset'}) names no branch.`,
    'Run the refresh job on a branch (e.g. on push to main), or set refresh-push: false.',
  )
}
