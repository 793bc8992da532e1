import { execFileSync } from 'node:child_process'
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { UsageError } from '../../src/errors.js'
import { commitBaseline, execGit } from '../../src/github/refresh-commit.js'

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
