/**
 * Commit a refreshed baseline file (and push it when asked), with git run as a
 * child process in the workspace. Only the baseline path is committed, so
 * anything else the workflow staged is left alone.
 */
import { execFile } from 'node:child_process'
import { UsageError } from '../errors.js'

export interface GitResult {
  code: number
  stdout: string
  stderr: string
}

/** Runs `git ARGS` in `cwd`; never throws for a non-zero exit (the code says it). */
export type GitRunner = (args: readonly string[], cwd: string) => Promise<GitResult>

/** The real runner: git from PATH, with prompts disabled so a missing credential fails fast. */
export const execGit: GitRunner = (args, cwd) =>
  new Promise((resolve) => {
    execFile('git', [...args], { cwd, env: { ...process.env, GIT_TERMINAL_PROMPT: '0' }, maxBuffer: 16 * 1024 * 1024 }, (err, stdout, stderr) => {
      const code = err === null ? 0 : typeof (err as { code?: unknown }).code === 'number' ? ((err as { code: number }).code) : 1
      resolve({ code, stdout: String(stdout), stderr: err !== null && stderr === '' ? err.message : String(stderr) })
    })
  })

// The identity GitHub shows as github-actions[bot]; used only when the workflow set none.
const BOT_NAME = 'github-actions[bot]'
const BOT_EMAIL = '41898282+github-actions[bot]@users.noreply.github.com'

export interface RefreshCommitOptions {
  /** Repository working directory (the action's working directory). */
  cwd: string
  /** Baseline file, relative to cwd. */
  path: string
  message: string
  push: boolean
  /** GITHUB_REF, used as the push target when it names a branch. */
  ref?: string
}

export interface RefreshCommitResult {
  committed: boolean
  pushed: boolean
  sha: string | null
  /** What happened, for the log. */
  note: string
}

async function must(git: GitRunner, args: readonly string[], cwd: string, what: string): Promise<string> {
  const r = await git(args, cwd)
  if (r.code !== 0) throw new UsageError(`servegate could not ${what}: git ${args.join(' ')} exited ${r.code}: ${r.stderr.trim()}`)
  return r.stdout.trim()
}

/** Stage and commit the baseline file; push to the branch when `push` is set. */
export async function commitBaseline(git: GitRunner, opts: RefreshCommitOptions): Promise<RefreshCommitResult> {
  const { cwd, path } = opts
  await must(git, ['rev-parse', '--show-toplevel'], cwd, `find a git repository at ${cwd} (use actions/checkout before servegate, or set refresh-commit: false)`)
  await must(git, ['add', '--', path], cwd, `stage ${path}`)
  const diff = await git(['diff', '--cached', '--quiet', '--', path], cwd)
  if (diff.code === 0) return { committed: false, pushed: false, sha: null, note: `${path} is unchanged; nothing to commit` }

  const identity: string[] = []
  const name = await git(['config', 'user.name'], cwd)
  const email = await git(['config', 'user.email'], cwd)
  // Only fill in what is missing, per command: the repository's config is left untouched.
  if (name.code !== 0 || name.stdout.trim() === '') identity.push('-c', `user.name=${BOT_NAME}`)
  if (email.code !== 0 || email.stdout.trim() === '') identity.push('-c', `user.email=${BOT_EMAIL}`)
  await must(git, [...identity, 'commit', '--no-verify', '-m', opts.message, '--', path], cwd, `commit ${path}`)
  const sha = await must(git, ['rev-parse', 'HEAD'], cwd, 'read the new commit')
  if (!opts.push) return { committed: true, pushed: false, sha, note: `committed ${path} as ${sha.slice(0, 12)} (not pushed: refresh-push is false)` }

  const branch = await pushTarget(git, cwd, opts.ref)
  const push = ['push', 'origin', `HEAD:refs/heads/${branch}`]
  let r = await git(push, cwd)
  if (r.code !== 0) {
    // Another commit may have landed on the branch meanwhile: replay ours on top once, then retry.
    // --autostash: whatever else the workflow staged is put aside for the replay and restored after it.
    const pull = await git([...identity, 'pull', '--rebase', '--autostash', 'origin', branch], cwd)
    if (pull.code === 0) r = await git(push, cwd)
    else {
      // A conflicted rebase would leave the checkout mid-rebase for every later step: undo it.
      const abort = await git(['rebase', '--abort'], cwd)
      throw new UsageError(
        `servegate committed ${path} as ${sha.slice(0, 12)} but could not push it to ${branch}, and replaying it on the branch's new head failed: ${pull.stderr.trim() || pull.stdout.trim()}` +
          (abort.code === 0 ? ' (the rebase was aborted; the commit is still on the local HEAD)' : ''),
        'Another commit changed the baseline meanwhile: rerun the refresh job, or set refresh-push: false and merge the file in a later step.',
      )
    }
  }
  if (r.code !== 0) {
    throw new UsageError(
      `servegate committed ${path} but could not push it to ${branch}: ${r.stderr.trim()}`,
      'The refresh job needs "permissions: contents: write" and a checkout of the branch; or set refresh-push: false and push in a later step.',
    )
  }
  const pushed = await must(git, ['rev-parse', 'HEAD'], cwd, 'read the pushed commit')
  return { committed: true, pushed: true, sha: pushed, note: `committed ${path} as ${pushed.slice(0, 12)} and pushed it to ${branch}` }
}

/**
 * Before the GPU sweep: fail now, not after an hour of measuring, when the
 * refreshed baseline could not be committed or pushed — no git repository,
 * a detached HEAD with no branch in GITHUB_REF, or no permission to push
 * (`git push --dry-run`). Returns a note for the log.
 */
export async function checkRefreshCommit(git: GitRunner, opts: Pick<RefreshCommitOptions, 'cwd' | 'push' | 'ref'>): Promise<string> {
  const { cwd } = opts
  await must(git, ['rev-parse', '--show-toplevel'], cwd, `find a git repository at ${cwd} (use actions/checkout before servegate, or set refresh-commit: false)`)
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
