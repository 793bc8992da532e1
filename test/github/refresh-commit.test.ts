import { execFileSync } from 'node:child_process'
import { chmodSync, cpSync, existsSync, mkdtempSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest'
import { baselineHistory } from '../../src/gate/history.js'
import { resolveConfig } from '../../src/config/resolve.js'
import { UsageError } from '../../src/errors.js'
import type { Baseline } from '../../src/gate/types.js'
import type { ResultFile } from '../../src/types.js'
import type { ActionDeps } from '../../src/github/deps.js'
import { realStages } from '../../src/github/real-deps.js'
import { commitMessage, refreshBaseline } from '../../src/github/refresh.js'
import { checkRefreshCommit, commitBaseline, execGit, type GitRunner } from '../../src/github/refresh-commit.js'
import { renderHistoryTrendText } from '../../src/report/history-format.js'
import { readBaseline, writeBaseline } from '../../src/store/baseline.js'
import { appendRefresh } from '../../src/gate/refresh.js'
import { pipeDay } from '../gate/fixtures.js'

/** The branch never moves in these tests: a replay would be a bug. */
const unused = (): never => {
  throw new Error('rebuild called although the branch did not move')
}

let dir: string
let repo: string
let remote: string
const git = (cwd: string, ...args: string[]) =>
  execFileSync('git', args, { cwd, encoding: 'utf8', env: { ...process.env, GIT_CONFIG_GLOBAL: '/dev/null', GIT_CONFIG_SYSTEM: '/dev/null' } }).trim()

const FILE = 'baselines/gate.json'

/** pipeDay(day) is deterministic and costly (a whole pipeline's result): each day is built once, and handed out as a copy. */
const built = new Map<number, ResultFile>()
function day(d: number): ResultFile {
  if (!built.has(d)) built.set(d, pipeDay(d))
  return structuredClone(built.get(d)!)
}

/**
 * Built once, copied for each test (a copy is one file copy and one git call; building is eight
 * git calls): `remote.git`, a bare origin whose main holds one empty commit, and `repo`, a
 * checkout of it with the baseline written and another file staged. `seeded.git` is that origin
 * with a baseline of refreshes on days 0, 1 and 2 committed on main by a person.
 */
let template: string

beforeAll(async () => {
  template = mkdtempSync(join(tmpdir(), 'servegate-refresh-template-'))
  const origin = join(template, 'remote.git')
  const checkout = join(template, 'repo')
  git(template, 'init', '-q', '--bare', '-b', 'main', origin)
  git(template, 'init', '-q', '-b', 'main', checkout)
  git(checkout, '-c', 'user.name=t', '-c', 'user.email=t@t', 'commit', '-q', '--allow-empty', '-m', 'init')
  git(checkout, 'remote', 'add', 'origin', origin)
  git(checkout, 'push', '-q', 'origin', 'main')
  mkdirSync(join(checkout, 'baselines'))
  writeFileSync(join(checkout, 'baselines/gate.json'), '{"v":1}\n')
  writeFileSync(join(checkout, 'other.txt'), 'staged but not ours\n')
  git(checkout, 'add', 'other.txt')
  // The seeded origin: main holds a baseline of refreshes on days 0, 1 and 2, committed by a person.
  const seeded = join(template, 'seeded.git')
  const seed = join(template, 'seed')
  git(template, 'clone', '-q', '--bare', origin, seeded)
  git(template, 'clone', '-q', seeded, seed)
  let b: Baseline | null = null
  for (const d of [0, 1, 2]) b = appendRefresh(b, day(d), { name: 'gate' })
  await writeBaseline(join(seed, FILE), b!)
  git(seed, 'add', FILE)
  git(seed, '-c', 'user.name=p', '-c', 'user.email=p@p', 'commit', '-q', '-m', 'first baseline')
  git(seed, 'push', '-q', 'origin', 'main')
}, 30_000)
afterAll(() => {
  if (template) rmSync(template, { recursive: true, force: true })
})

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'servegate-refresh-'))
  remote = join(dir, 'remote.git')
  repo = join(dir, 'repo')
  cpSync(join(template, 'remote.git'), remote, { recursive: true })
  cpSync(join(template, 'repo'), repo, { recursive: true })
  git(repo, 'remote', 'set-url', 'origin', remote)
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
    const r = await commitBaseline(execGit, {
      cwd: repo,
      path: 'baselines/gate.json',
      message: 'servegate: refresh baseline baselines/gate.json',
      push: true,
      ref: 'refs/heads/main',
      rebuild: unused,
    })
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
    await commitBaseline(execGit, { cwd: repo, path: 'baselines/gate.json', message: 'm', push: false, rebuild: unused })
    expect(git(repo, 'log', '-1', '--format=%an <%ae>')).toBe('Release Bot <rb@example.com>')
  }, 20_000)

  it('does nothing when the baseline is unchanged', async () => {
    await commitBaseline(execGit, { cwd: repo, path: 'baselines/gate.json', message: 'm', push: false, rebuild: unused })
    const again = await commitBaseline(execGit, { cwd: repo, path: 'baselines/gate.json', message: 'm', push: false, rebuild: unused })
    expect(again).toMatchObject({ committed: false, pushed: false, sha: null })
  }, 20_000)

  it('fails clearly outside a git repository', async () => {
    const err = await commitBaseline(execGit, { cwd: dir, path: 'x.json', message: 'm', push: false, rebuild: unused }).catch((e: unknown) => e)
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
    expect((err as Error).message).toMatch(
      /^servegate would not be able to push the refreshed baseline to main \(checked before the sweep\): git push --dry-run exited \d+: .*no-such-remote/s,
    )
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

// ---------------------------------------------------------------------------
// Refreshes racing on one repository: clones of the bare remote each run the
// Action's refresh step (real stages, real git) on results built the way a
// sweep builds them.
// ---------------------------------------------------------------------------

const cfg = resolveConfig({ file: null, filePath: null, flags: {}, env: {} })
const dayAt = (day: number): string => `2025-01-${String(day + 1).padStart(2, '0')}T01:00:00.000Z`

/** A clone of the remote at its main, with no identity (like a fresh runner); `shallow`: one commit deep, as actions/checkout makes it. */
function clone(name: string, shallow = false): string {
  const to = join(dir, name)
  if (shallow) git(dir, 'clone', '-q', '--depth=1', `file://${remote}`, to)
  else git(dir, 'clone', '-q', remote, to)
  return to
}

/** main on the remote holds a baseline of refreshes on days 0, 1 and 2, committed by a person (the seeded origin). */
function seedBaseline(): void {
  rmSync(remote, { recursive: true, force: true })
  cpSync(join(template, 'seeded.git'), remote, { recursive: true })
}

interface Refreshed {
  note: string
  outputs: Map<string, string>
  info: string[]
}

/** The Action's refresh step in checkout `wd` for the result of `day`, as on a push to main. */
async function refreshIn(wd: string, refreshDay: number, runner: GitRunner = execGit, sha = git(wd, 'rev-parse', 'HEAD')): Promise<Refreshed> {
  const outputs = new Map<string, string>()
  const info: string[] = []
  const deps: ActionDeps = {
    core: {
      getInput: () => '',
      setOutput: (n, v) => void outputs.set(n, v),
      setFailed: () => undefined,
      setSecret: () => undefined,
      info: (m) => void info.push(m),
      warning: () => undefined,
      error: () => undefined,
      appendSummary: async () => undefined,
      saveState: () => undefined,
      getState: () => '',
    },
    env: { GITHUB_SHA: sha, GITHUB_REF: 'refs/heads/main' },
    cwd: wd,
    event: { name: 'push', payload: {} },
    github: () => {
      throw new Error('a refresh calls no GitHub API')
    },
    stages: realStages,
    git: runner,
    files: { exists: existsSync, writeText: async (p, t) => writeFileSync(p, t) },
  }
  const baselineAbs = join(wd, FILE)
  const existing = await readBaseline(baselineAbs)
  const note = await refreshBaseline(deps, {
    inputs: { refreshCommit: true, refreshPush: true },
    wd,
    baselineRel: FILE,
    baselineAbs,
    name: 'gate',
    existing,
    result: day(refreshDay),
    cfg,
    runUrl: null,
  })
  return { note, outputs, info }
}

const remoteBaseline = (): Baseline => JSON.parse(git(remote, 'show', `main:${FILE}`)) as Baseline
const refreshDays = (b: Baseline): string[] => b.refreshes.map((r) => r.at)

describe('refresh on a busy main: two refreshes racing on one repository', () => {
  it('the second (a shallow checkout, as actions/checkout makes), rejected because the first landed, is replayed on the new head: both refreshes in order, two commits, no force push', async () => {
    seedBaseline()
    const a = clone('a')
    const b = clone('b', true)
    writeFileSync(join(b, 'notes.txt'), 'staged by the workflow\n')
    git(b, 'add', 'notes.txt')

    const first = await refreshIn(a, 3)
    const landedA = git(remote, 'rev-parse', 'main')
    expect(first.outputs.get('commit-sha')).toBe(landedA)

    const second = await refreshIn(b, 4)
    expect(second.note).toMatch(
      /^Baseline: pushed baselines\/gate\.json to main as [0-9a-f]{12}, replayed on the branch's new head [0-9a-f]{12} \(the branch moved: push rejected once\); the checkout is at [0-9a-f]{12}\.$/,
    )

    expect(refreshDays(remoteBaseline())).toEqual([0, 1, 2, 3, 4].map(dayAt))
    // Each refresh its own commit, the second on top of the first: nothing published was rewritten.
    expect(git(remote, 'log', '--format=%s', 'main')).toBe(
      ['servegate: refresh baseline baselines/gate.json', 'servegate: refresh baseline baselines/gate.json', 'first baseline', 'init'].join('\n'),
    )
    expect(git(remote, 'rev-parse', 'main^')).toBe(landedA)
    const landedB = git(remote, 'rev-parse', 'main')
    expect(second.outputs.get('commit-sha')).toBe(landedB)
    expect(git(remote, 'show', '--name-only', '--format=%an', 'main')).toBe('github-actions[bot]\n\nbaselines/gate.json')
    // The replayed commit's message carries the trend of the merged baseline (five refreshes).
    const body = git(remote, 'log', '-1', '--format=%B', 'main')
    expect(body).toMatch(/^servegate: refresh baseline baselines\/gate\.json\n\nSweep "default" measured/)
    expect(body).toContain("Trend of the gated metrics over the baseline's 5 refreshes, oldest first:")
    expect(body).toMatch(/\n {2}p95 ITL 64×16 c=1 +\S{5} {2}[\d.]+ ms → [\d.]+ ms\n/)
    // The checkout moved to what main holds, the file with it; what the workflow staged is still staged.
    expect(git(b, 'rev-parse', 'HEAD')).toBe(landedB)
    expect(git(b, 'status', '--porcelain')).toBe('A  notes.txt')
    expect(refreshDays(JSON.parse(readFileSync(join(b, FILE), 'utf8')) as Baseline)).toEqual([0, 1, 2, 3, 4].map(dayAt))
  }, 60_000)

  it("leaves the checkout where it was, with the pushed file written, when the workflow's own staged change is in the way", async () => {
    seedBaseline()
    const b = clone('b')
    writeFileSync(join(b, 'notes.txt'), 'ours\n')
    git(b, 'add', 'notes.txt')
    const other = clone('other')
    writeFileSync(join(other, 'notes.txt'), 'theirs\n')
    git(other, 'add', 'notes.txt')
    git(other, '-c', 'user.name=o', '-c', 'user.email=o@o', 'commit', '-q', '-m', 'notes')
    git(other, 'push', '-q', 'origin', 'main')
    const local = await refreshIn(b, 3)
    expect(local.note).toMatch(/; the checkout stays at [0-9a-f]{12}, with baselines\/gate\.json as pushed\.$/)
    expect(refreshDays(remoteBaseline())).toEqual([0, 1, 2, 3].map(dayAt))
    expect(readFileSync(join(b, FILE), 'utf8')).toBe(git(remote, 'show', `main:${FILE}`) + '\n')
    expect(git(b, 'diff', '--cached', '--name-only')).toBe('notes.txt')
    expect(readFileSync(join(b, 'notes.txt'), 'utf8')).toBe('ours\n')
  }, 60_000)

  it('two refreshes pushed at the same moment both land, each its own commit (or one says why it did not)', async () => {
    seedBaseline()
    const a = clone('a')
    const b = clone('b')
    const settled = await Promise.allSettled([refreshIn(a, 3), refreshIn(b, 4)])
    const landed = [3, 4].filter((_, i) => settled[i]!.status === 'fulfilled')
    for (const s of settled) {
      if (s.status === 'rejected') {
        expect(s.reason).toBeInstanceOf(UsageError)
        expect((s.reason as Error).message).toMatch(
          /^servegate could not push the refreshed baseline to main: .*; the refreshed baselines\/gate\.json stays written in the workspace/,
        )
      }
    }
    // Five retries with a jittered backoff: two racers always both get through.
    expect(landed).toEqual([3, 4])
    // Both built on the same head: whichever pushed second was replayed on the first.
    const notes = settled.flatMap((s) => (s.status === 'fulfilled' ? [s.value.note] : []))
    expect(notes.filter((n) => /replayed on the branch's new head/.test(n))).toHaveLength(1)
    const days = refreshDays(remoteBaseline())
    expect(days.slice(0, 3)).toEqual([0, 1, 2].map(dayAt))
    expect([...days.slice(3)].sort()).toEqual([3, 4].map(dayAt))
    expect(git(remote, 'rev-list', '--count', 'main')).toBe('4')
  }, 60_000)

  it('a branch that keeps moving past the retries fails with one line that keeps the refresh in the workspace', async () => {
    seedBaseline()
    const a = clone('a')
    const busy = clone('busy')
    let moves = 0
    // Before each of our pushes, another commit lands on main.
    const racing: GitRunner = async (args, cwd, opts) => {
      if (args[0] === 'push' && args[1] === 'origin') {
        writeFileSync(join(busy, 'busy.txt'), `move ${++moves}\n`)
        git(busy, 'add', 'busy.txt')
        git(busy, '-c', 'user.name=o', '-c', 'user.email=o@o', 'commit', '-q', '-m', `busy ${moves}`)
        git(busy, 'push', '-q', 'origin', 'main')
      }
      return execGit(args, cwd, opts)
    }
    // The backoff between retries is jittered by Math.random; at 0 every wait is its shortest
    // (50, 100, 200, 400, 800 ms instead of about 3 s in all): the retries themselves are what is tested.
    const random = vi.spyOn(Math, 'random').mockReturnValue(0)
    const err = await refreshIn(a, 3, racing)
      .catch((e: unknown) => e)
      .finally(() => random.mockRestore())
    expect(err).toBeInstanceOf(UsageError)
    expect((err as Error).message).toMatch(
      /^servegate could not push the refreshed baseline to main: the branch kept moving: 6 pushes rejected as non-fast-forward; the refreshed baselines\/gate\.json stays written in the workspace \(committed locally as [0-9a-f]{12}\)$/,
    )
    expect((err as UsageError).hint).toMatch(/Rerun the refresh job/)
    expect(moves).toBe(6)
    // Not lost: the file in the workspace holds this refresh; main never got it.
    expect(refreshDays(JSON.parse(readFileSync(join(a, FILE), 'utf8')) as Baseline).at(-1)).toBe(dayAt(3))
    expect(refreshDays(remoteBaseline())).toEqual([0, 1, 2].map(dayAt))
  }, 90_000)

  it('a push the remote refuses (a pre-receive hook, like branch protection) names the pull-request path', async () => {
    seedBaseline()
    const a = clone('a')
    const hook = join(remote, 'hooks', 'pre-receive')
    writeFileSync(hook, '#!/bin/sh\necho "error: GH006: Protected branch update failed for refs/heads/main." >&2\nexit 1\n')
    chmodSync(hook, 0o755)
    const err = await refreshIn(a, 3).catch((e: unknown) => e)
    expect(err).toBeInstanceOf(UsageError)
    expect((err as Error).message).toMatch(
      /^servegate could not push the refreshed baseline to main: the remote refused it \(branch protection or a pre-receive hook\): remote: error: GH006: Protected branch update failed for refs\/heads\/main\. \/ ! \[remote rejected\] +HEAD -> main \(pre-receive hook declined\); the refreshed baselines\/gate\.json stays written/,
    )
    expect((err as UsageError).hint).toContain('refresh-commit: false')
    expect(refreshDays(remoteBaseline())).toEqual([0, 1, 2].map(dayAt))
  }, 60_000)

  it("says so when the branch's new head holds a file that is not a servegate baseline", async () => {
    seedBaseline()
    const a = clone('a')
    const other = clone('other')
    writeFileSync(join(other, FILE), '{"v":"theirs"}\n')
    git(other, '-c', 'user.name=o', '-c', 'user.email=o@o', 'commit', '-q', '-am', 'theirs')
    git(other, 'push', '-q', 'origin', 'main')
    const err = await refreshIn(a, 3).catch((e: unknown) => e)
    expect(err).toBeInstanceOf(UsageError)
    expect((err as Error).message).toMatch(
      /^servegate could not push the refreshed baseline to main: the branch moved to [0-9a-f]{12} and this refresh cannot be replayed on it: baselines\/gate\.json on the branch's new head is not a servegate baseline: schema is undefined, expected "servegate\.baseline\/v1"; the refreshed baselines\/gate\.json stays written in the workspace/,
    )
    expect(git(remote, 'log', '-1', '--format=%s', 'main')).toBe('theirs')
    expect(git(a, 'status', '--porcelain')).toBe('')
    expect(refreshDays(JSON.parse(readFileSync(join(a, FILE), 'utf8')) as Baseline).at(-1)).toBe(dayAt(3))
  }, 60_000)

  it('does not append a refresh twice when the new head already holds it (a push that landed, then a rerun)', async () => {
    seedBaseline()
    const a = clone('a')
    const rerun = clone('rerun')
    const sha = git(a, 'rev-parse', 'HEAD')
    await refreshIn(a, 3, execGit, sha)
    // Then something else lands on main, so the rerun's push is rejected and replayed.
    const other = clone('other')
    git(other, '-c', 'user.name=o', '-c', 'user.email=o@o', 'commit', '-q', '--allow-empty', '-m', 'elsewhere')
    git(other, 'push', '-q', 'origin', 'main')
    const landed = git(remote, 'rev-parse', 'main')
    const again = await refreshIn(rerun, 3, execGit, sha)
    expect(again.note).toMatch(
      /^Baseline: main at [0-9a-f]{12} already holds this refresh of baselines\/gate\.json; nothing pushed; the checkout is at [0-9a-f]{12}\.$/,
    )
    expect(git(remote, 'rev-parse', 'main')).toBe(landed)
    expect(refreshDays(remoteBaseline())).toEqual([0, 1, 2, 3].map(dayAt))
    expect(git(rerun, 'rev-parse', 'HEAD')).toBe(landed)
    expect(git(rerun, 'status', '--porcelain')).toBe('')
  }, 60_000)
})

describe('the refresh commit message carries the baseline trend', () => {
  const VLLM = 'vllm serve org/model --port 8000'
  const NEW_VLLM = 'vllm serve org/model --port 8000 --enable-chunked-prefill'

  it('per gated metric a trend line and first → newest value, then the change point with the command change', () => {
    let b: Baseline | null = null
    for (let day = 0; day < 8; day++) {
      const changed = day >= 5
      b = appendRefresh(
        b,
        pipeDay(day, changed ? 1.1 : 1, {
          env: (e) => {
            e.finished_at = `2026-11-${String(day + 1).padStart(2, '0')}T01:00:00.000Z`
            e.serve_command = changed ? NEW_VLLM : VLLM
          },
        }),
        { name: 'gate' },
      )
    }
    const h = baselineHistory(b!)
    const msg = commitMessage(FILE, 'gate', day(7), null, renderHistoryTrendText(h))
    const [head, trend] = msg.split('\n\nTrend')
    expect(head).toMatch(/^servegate: refresh baseline baselines\/gate\.json\n\nSweep "gate" measured with servegate 0\.1\.0\.\nEngine: /)
    const lines = `Trend${trend}`.split('\n')
    expect(lines[0]).toBe("Trend of the gated metrics over the baseline's 8 refreshes, oldest first:")
    const itl = lines.find((l) => l.includes('p95 ITL 64×16 c=1 '))!
    const [first, newest] = itl.match(/[\d.]+ ms/g)!.map((v) => Number.parseFloat(v))
    expect(newest! / first!).toBeGreaterThan(1.05)
    expect(itl).toMatch(/ [▁▂▃]{5}[▆▇█]{3} /)
    expect(lines).toContain(`Change points (${h.method}):`)
    expect(lines).toContainEqual(
      expect.stringMatching(
        new RegExp(`^ {2}- p95 ITL 64×16 c=1: change at refresh 6 \\(2026-11-06 01:00\\): \\+\\d+\\.\\d % \\(worse\\); serve command ${VLLM} → ${NEW_VLLM}$`),
      ),
    )
  })

  it('says there is no change point when every metric stayed within its noise', () => {
    let b: Baseline | null = null
    for (let d = 0; d < 4; d++) b = appendRefresh(b, day(d), { name: 'gate' })
    const text = renderHistoryTrendText(baselineHistory(b!))
    expect(text.split('\n').at(-1)).toBe('No change point: every metric stayed within its noise.')
  })
})
