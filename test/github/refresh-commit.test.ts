import { execFileSync } from 'node:child_process'
import { existsSync, mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { UsageError } from '../../src/errors.js'
import { checkRefreshCommit, commitBaseline, execGit } from '../../src/github/refresh-commit.js'

let dir: string
let repo: string
let remote: string
const git = (cwd: string, ...args: string[]) => execFileSync('git', args, { cwd, encoding: 'utf8', env: { ...process.env, GIT_CONFIG_GLOBAL: '/dev/null', GIT_CONFIG_SYSTEM: '/dev/null' } }).trim()

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'servegate-refresh-'))
  remote = join(dir, 'remote.git')
  repo = join(dir, 'repo')
  git(dir, 'init', '-q', '--bare', '-b', 'main', remote)
  git(dir, 'init', '-q', '-b', 'main', repo)
  git(repo, '-c', 'user.name=t', '-c', 'user.email=t@t', 'commit', '-q', '--allow-empty', '-m', 'init')
  git(repo, 'remote', 'add', 'origin', remote)
  git(repo, 'push', '-q', 'origin', 'main')
  mkdirSync(join(repo, 'baselines'))
  writeFileSync(join(repo, 'baselines/gate.json'), '{"v":1}\n')
  writeFileSync(join(repo, 'other.txt'), 'staged but not ours\n')
  git(repo, 'add', 'other.txt')
  // No identity in the repository, the global or the system config: like a fresh runner.
  process.env['GIT_CONFIG_GLOBAL'] = '/dev/null'
  process.env['GIT_CONFIG_SYSTEM'] = '/dev/null'
})
afterEach(() => {
  delete process.env['GIT_CONFIG_GLOBAL']
  delete process.env['GIT_CONFIG_SYSTEM']
  rmSync(dir, { recursive: true, force: true })
})

describe('commitBaseline', () => {
  it('commits only the baseline as github-actions[bot] and pushes it to the branch', async () => {
    const r = await commitBaseline(execGit, { cwd: repo, path: 'baselines/gate.json', message: 'servegate: refresh baseline baselines/gate.json', push: true, ref: 'refs/heads/main' })
    expect(r).toMatchObject({ committed: true, pushed: true })
    expect(git(repo, 'show', '--name-only', '--format=%an <%ae>|%s', 'HEAD')).toBe(
      'github-actions[bot] <41898282+github-actions[bot]@users.noreply.github.com>|servegate: refresh baseline baselines/gate.json\n\nbaselines/gate.json',
    )
    expect(git(remote, 'rev-parse', 'main')).toBe(r.sha)
    expect(git(repo, 'diff', '--cached', '--name-only')).toBe('other.txt')
    // The bot identity was given per command: the repository's config still has none.
    expect(() => git(repo, 'config', '--get', 'user.name')).toThrow()
  }, 20_000)

  it('keeps an identity the workflow configured', async () => {
    git(repo, 'config', 'user.name', 'Release Bot')
    git(repo, 'config', 'user.email', 'rb@example.com')
    await commitBaseline(execGit, { cwd: repo, path: 'baselines/gate.json', message: 'm', push: false })
    expect(git(repo, 'log', '-1', '--format=%an <%ae>')).toBe('Release Bot <rb@example.com>')
  }, 20_000)

  it('does nothing when the baseline is unchanged', async () => {
    await commitBaseline(execGit, { cwd: repo, path: 'baselines/gate.json', message: 'm', push: false })
    const again = await commitBaseline(execGit, { cwd: repo, path: 'baselines/gate.json', message: 'm', push: false })
    expect(again).toMatchObject({ committed: false, pushed: false, sha: null })
  }, 20_000)

  it('fails clearly outside a git repository', async () => {
    const err = await commitBaseline(execGit, { cwd: dir, path: 'x.json', message: 'm', push: false }).catch((e: unknown) => e)
    expect(err).toBeInstanceOf(UsageError)
    expect((err as Error).message).toMatch(/could not find a git repository .*actions\/checkout/)
  }, 20_000)
})

describe('checkRefreshCommit (before the sweep)', () => {
  it('passes on a branch checkout that can push, naming the branch', async () => {
    expect(await checkRefreshCommit(execGit, { cwd: repo, push: true, ref: 'refs/heads/main' })).toBe('the refreshed baseline can be pushed to main')
    // A dry run: nothing reached the remote.
    expect(git(remote, 'log', '--format=%s', 'main')).toBe('init')
  }, 20_000)

  it('refuses a directory that is not a git repository', async () => {
    const err = await checkRefreshCommit(execGit, { cwd: dir, push: false }).catch((e: unknown) => e)
    expect(err).toBeInstanceOf(UsageError)
    expect((err as Error).message).toMatch(/could not find a git repository .*refresh-commit: false/)
  }, 20_000)

  it('refuses a detached HEAD when GITHUB_REF names no branch', async () => {
    git(repo, 'checkout', '-q', '--detach')
    const err = await checkRefreshCommit(execGit, { cwd: repo, push: true, ref: 'refs/pull/7/merge' }).catch((e: unknown) => e)
    expect((err as Error).message).toBe('servegate cannot push the refreshed baseline: HEAD is detached and GITHUB_REF (refs/pull/7/merge) names no branch.')
    // Not pushing: a detached checkout is fine.
    expect(await checkRefreshCommit(execGit, { cwd: repo, push: false })).toMatch(/refresh-push is false/)
  }, 20_000)

  it('accepts a detached HEAD when GITHUB_REF names the branch', async () => {
    git(repo, 'checkout', '-q', '--detach')
    expect(await checkRefreshCommit(execGit, { cwd: repo, push: true, ref: 'refs/heads/main' })).toMatch(/pushed to main/)
  }, 20_000)

  it('refuses when the push would be refused, before any GPU time is spent', async () => {
    git(repo, 'remote', 'set-url', '--push', 'origin', join(dir, 'no-such-remote.git'))
    const err = await checkRefreshCommit(execGit, { cwd: repo, push: true, ref: 'refs/heads/main' }).catch((e: unknown) => e)
    expect(err).toBeInstanceOf(UsageError)
    expect((err as Error).message).toMatch(/^servegate would not be able to push the refreshed baseline to main \(checked before the sweep\): git push --dry-run exited \d+: .*no-such-remote/s)
    expect((err as UsageError).hint).toContain('contents: write')
  }, 20_000)

  it('passes when the branch moved on (the real push replays the commit on top)', async () => {
    const other = join(dir, 'other')
    git(dir, 'clone', '-q', remote, other)
    git(other, '-c', 'user.name=o', '-c', 'user.email=o@o', 'commit', '-q', '--allow-empty', '-m', 'elsewhere')
    git(other, 'push', '-q', 'origin', 'main')
    expect(await checkRefreshCommit(execGit, { cwd: repo, push: true, ref: 'refs/heads/main' })).toMatch(/pushed to main/)
  }, 20_000)
})

describe('commitBaseline when the branch changed the same file meanwhile', () => {
  it('aborts the failed rebase, leaving the checkout usable, and says so', async () => {
    await commitBaseline(execGit, { cwd: repo, path: 'baselines/gate.json', message: 'v1', push: true, ref: 'refs/heads/main' })
    const other = join(dir, 'other')
    git(dir, 'clone', '-q', remote, other)
    writeFileSync(join(other, 'baselines/gate.json'), '{"v":"theirs"}\n')
    git(other, '-c', 'user.name=o', '-c', 'user.email=o@o', 'commit', '-q', '-am', 'theirs')
    git(other, 'push', '-q', 'origin', 'main')
    writeFileSync(join(repo, 'baselines/gate.json'), '{"v":"ours"}\n')
    const err = await commitBaseline(execGit, { cwd: repo, path: 'baselines/gate.json', message: 'ours', push: true, ref: 'refs/heads/main' }).catch((e: unknown) => e)
    expect(err).toBeInstanceOf(UsageError)
    expect((err as Error).message).toMatch(/could not push it to main, and replaying it on the branch's new head failed: .*\(the rebase was aborted; the commit is still on the local HEAD\)/s)
    expect(existsSync(join(repo, '.git/rebase-merge')) || existsSync(join(repo, '.git/rebase-apply'))).toBe(false)
    expect(git(repo, 'log', '-1', '--format=%s')).toBe('ours')
    // What the workflow had staged is back where it was.
    expect(git(repo, 'diff', '--cached', '--name-only')).toBe('other.txt')
    expect(git(remote, 'log', '-1', '--format=%s', 'main')).toBe('theirs')
  }, 30_000)
})
