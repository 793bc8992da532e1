/**
 * Runs the bundled dist/index.js the way GitHub runs a node24 action: inputs as
 * INPUT_* variables (defaults taken from action.yml), the event in
 * GITHUB_EVENT_PATH, files for the step summary and outputs, and GITHUB_API_URL
 * pointing at a stand-in for GitHub's REST API; the server under test is the
 * simulator in deterministic mode. Skipped only when dist/index.js is absent
 * (run `npm run bundle` first).
 */
import { execFileSync, spawn } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { parse as parseYaml } from 'yaml'
import { startSim, type SimHandle } from '../../src/sim/index.js'
import { startFakeGitHub, type FakeGitHub } from '../github/fake-github.js'

const ROOT = fileURLToPath(new URL('../..', import.meta.url))
// SERVEGATE_DIST_INDEX points the test at another build of the entry (e.g. a scratch bundle).
const DIST = process.env['SERVEGATE_DIST_INDEX'] ?? join(ROOT, 'dist/index.js')
const MARKER = '<!-- servegate:gate -->'

// Tiny and deterministic: 10 requests per point is the validity floor; 2 repeats keep the file under a minute.
const CONFIG = `target: {metric: tpot, percentile: 95, threshold_ms: 50}
sweeps:
  gate:
    shapes: [{input_len: 32, output_len: 12}]
    concurrency: [1, 2]
    prompts_per_concurrency: 10
    warmup: 2
    repeats: 2
`

interface StepRun {
  code: number
  stdout: string
  outputs: Record<string, string>
  summary: string
}

let dir: string
let repo: string
let remote: string
let gh: FakeGitHub
let sim: SimHandle
let slowSim: SimHandle

const cleanEnv = (): Record<string, string> => {
  const env: Record<string, string> = {}
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined && !k.startsWith('INPUT_') && !k.startsWith('GITHUB_')) env[k] = v
  return { ...env, GIT_CONFIG_GLOBAL: '/dev/null', GIT_CONFIG_SYSTEM: '/dev/null', GIT_TERMINAL_PROMPT: '0' }
}
const git = (cwd: string, ...args: string[]) => execFileSync('git', args, { cwd, encoding: 'utf8', env: cleanEnv() }).trim()

/** Every input's default from action.yml, as GitHub passes them (INPUT_ + upper case, dashes kept). */
function defaultInputs(): Record<string, string> {
  const action = parseYaml(readFileSync(join(ROOT, 'action.yml'), 'utf8')) as { inputs: Record<string, { default?: string }> }
  const env: Record<string, string> = {}
  for (const [name, spec] of Object.entries(action.inputs)) env[`INPUT_${name.toUpperCase()}`] = spec.default ?? ''
  return env
}

/** Parse GITHUB_OUTPUT's `name<<DELIM … DELIM` blocks (and plain name=value lines). */
function parseOutputs(text: string): Record<string, string> {
  const out: Record<string, string> = {}
  const lines = text.split('\n')
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!
    const heredoc = /^([^=<]+)<<(.+)$/.exec(line)
    if (heredoc) {
      const value: string[] = []
      for (i++; i < lines.length && lines[i] !== heredoc[2]; i++) value.push(lines[i]!)
      out[heredoc[1]!] = value.join('\n')
    } else if (line.includes('=')) out[line.slice(0, line.indexOf('='))] = line.slice(line.indexOf('=') + 1)
  }
  return out
}

let runNo = 0
/** Run dist/index.js once as a workflow step would. */
async function step(inputs: Record<string, string>, event: { name: string; payload: unknown }, extraEnv: Record<string, string> = {}): Promise<StepRun> {
  runNo++
  const files = { event: join(dir, `event-${runNo}.json`), output: join(dir, `output-${runNo}`), summary: join(dir, `summary-${runNo}.md`) }
  writeFileSync(files.event, JSON.stringify(event.payload))
  writeFileSync(files.output, '')
  writeFileSync(files.summary, '')
  const env: Record<string, string> = {
    ...cleanEnv(),
    ...defaultInputs(),
    'INPUT_GITHUB-TOKEN': 'ghs_faketoken',
    'INPUT_WORKING-DIRECTORY': repo,
    INPUT_CONFIG: 'servegate.yml',
    INPUT_CONFIRM: 'false',
    ...Object.fromEntries(Object.entries(inputs).map(([k, v]) => [`INPUT_${k.toUpperCase()}`, v])),
    GITHUB_ACTIONS: 'true',
    GITHUB_EVENT_NAME: event.name,
    GITHUB_EVENT_PATH: files.event,
    GITHUB_OUTPUT: files.output,
    GITHUB_STEP_SUMMARY: files.summary,
    GITHUB_API_URL: gh.url,
    GITHUB_SERVER_URL: 'https://github.test',
    GITHUB_REPOSITORY: 'acme/infer',
    GITHUB_RUN_ID: String(1000 + runNo),
    GITHUB_SHA: 'f00df00d',
    GITHUB_REF: 'refs/heads/main',
    GITHUB_WORKSPACE: repo,
    RUNNER_ENVIRONMENT: 'self-hosted',
    ...extraEnv,
  }
  const child = spawn(process.execPath, [DIST], { cwd: repo, env, stdio: ['ignore', 'pipe', 'pipe'] })
  let stdout = ''
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()))
  child.stderr.on('data', (d: Buffer) => (stdout += d.toString()))
  const code = await new Promise<number>((res) => child.on('close', (c) => res(c ?? -1)))
  return { code, stdout, outputs: parseOutputs(readFileSync(files.output, 'utf8')), summary: readFileSync(files.summary, 'utf8') }
}

const prEvent = (fork = false) => ({
  name: 'pull_request',
  payload: {
    pull_request: {
      number: 7,
      head: { sha: 'f00df00d', repo: { full_name: fork ? 'mallory/infer' : 'acme/infer', fork } },
      base: { repo: { full_name: 'acme/infer', fork: false } },
    },
    repository: { full_name: 'acme/infer', name: 'infer', owner: { login: 'acme' } },
  },
})
const pushEvent = { name: 'push', payload: { repository: { full_name: 'acme/infer', name: 'infer', owner: { login: 'acme' } } } }

describe.skipIf(!existsSync(DIST))('dist/index.js as a GitHub Action step', () => {
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'servegate-dist-'))
    repo = join(dir, 'repo')
    remote = join(dir, 'remote.git')
    git(dir, 'init', '-q', '--bare', '-b', 'main', remote)
    git(dir, 'init', '-q', '-b', 'main', repo)
    writeFileSync(join(repo, 'servegate.yml'), CONFIG)
    writeFileSync(join(repo, '.gitignore'), 'servegate-result*\n')
    git(repo, 'add', '.')
    git(repo, '-c', 'user.name=dev', '-c', 'user.email=dev@example.com', 'commit', '-q', '-m', 'config')
    git(repo, 'remote', 'add', 'origin', remote)
    git(repo, 'push', '-q', 'origin', 'main')
    gh = await startFakeGitHub({ maxPerPage: 2 })
    // Someone else's comments (one even carries the marker) fill the first pages.
    for (let i = 0; i < 3; i++) gh.addComment(7, `review ${i}`, { login: 'alice', type: 'User' })
    gh.addComment(7, `${MARKER} copied`, { login: 'alice', type: 'User' })
    sim = await startSim({ ttftMs: 10, itlMs: 10 })
    slowSim = await startSim({ ttftMs: 10, itlMs: 10, slowdown: 2 })
  })

  afterAll(async () => {
    await Promise.all([gh?.close(), sim?.close(), slowSim?.close()])
    // SERVEGATE_KEEP_TMP=1 keeps the workspace, summaries and outputs for a look.
    if (dir && !process.env['SERVEGATE_KEEP_TMP']) rmSync(dir, { recursive: true, force: true })
  })

  it('refresh run in a git checkout commits and pushes the new baseline', async () => {
    const r = await step({ mode: 'refresh', 'base-url': sim.url }, pushEvent)
    expect(r.code, r.stdout).toBe(0)
    expect(r.outputs['verdict']).toBe('refreshed')
    const baseline = JSON.parse(readFileSync(join(repo, 'baselines/gate.json'), 'utf8')) as { schema: string; refreshes: unknown[] }
    expect(baseline.schema).toBe('servegate.baseline/v1')
    expect(baseline.refreshes).toHaveLength(1)
    expect(git(repo, 'log', '-1', '--format=%an|%s', '--name-only')).toBe('github-actions[bot]|servegate: refresh baseline baselines/gate.json\n\nbaselines/gate.json')
    expect(git(remote, 'rev-parse', 'main')).toBe(r.outputs['commit-sha'])
    expect(gh.calls).toHaveLength(0)
  }, 120_000)

  // The unchanged runs report only (fail-on: never): what they check is the comment, not the
  // gate's noise model, and a shared CI host can make millisecond latencies look worse.
  it('first gate run creates one marked comment; the summary holds the tables and the chart', async () => {
    const r = await step({ mode: 'gate', 'base-url': sim.url, 'fail-on': 'never' }, prEvent())
    expect(r.code, r.stdout).toBe(0)
    expect(['pass', 'inconclusive', 'regression']).toContain(r.outputs['verdict'])
    const mine = gh.comments.filter((c) => c.user.login === 'github-actions[bot]')
    expect(mine).toHaveLength(1)
    expect(mine[0]!.body.startsWith(MARKER)).toBe(true)
    expect(r.outputs['comment-id']).toBe(String(mine[0]!.id))
    expect(r.outputs['result-path']).toBe(join(repo, 'servegate-result.json'))
    expect(existsSync(r.outputs['report-path']!)).toBe(true)
    expect(r.summary).toContain('servegate:')
    expect(r.summary).toMatch(/\| *Concurrency *\|/)
    expect(r.summary).toContain('```mermaid')
    expect(r.summary).toContain('xychart-beta')
    expect(r.summary).toContain('Throughput at p95 TPOT ≤ 50 ms')
    // The token is registered as a secret (so the runner masks it) and never printed otherwise.
    expect(r.stdout).toContain('::add-mask::ghs_faketoken')
    expect(r.stdout.replace('::add-mask::ghs_faketoken', '')).not.toContain('ghs_faketoken')
  }, 120_000)

  it('second gate run edits that same comment instead of adding one', async () => {
    const before = gh.comments.find((c) => c.user.login === 'github-actions[bot]')!
    const r = await step({ mode: 'gate', 'base-url': sim.url, 'fail-on': 'never' }, prEvent())
    expect(r.code, r.stdout).toBe(0)
    expect(gh.comments.filter((c) => c.user.login === 'github-actions[bot]')).toHaveLength(1)
    expect(r.outputs['comment-id']).toBe(String(before.id))
    // Each run edits it twice ("running", then the verdict); only the first run's "running" created it.
    const path = `/repos/acme/infer/issues/comments/${before.id}`
    expect(gh.calls.filter((c) => c.method === 'PATCH').map((c) => c.path)).toEqual([path, path, path])
    expect(gh.calls.filter((c) => c.method === 'POST')).toHaveLength(1)
  }, 120_000)

  it('refuses a fork pull request on a self-hosted runner, explaining why, and says so in the comment', async () => {
    const r = await step({ mode: 'gate', 'base-url': slowSim.url }, prEvent(true))
    expect(r.code).toBe(1)
    expect(r.outputs['verdict']).toBe('refused')
    expect(r.stdout).toMatch(/::error::servegate refuses to benchmark pull request #7: it comes from a fork/)
    expect(r.stdout).toContain('allow-fork: true')
    // The earlier verdict no longer stands for this head: the one comment says the run was refused.
    const mine = gh.comments.filter((c) => c.user.login === 'github-actions[bot]')
    expect(mine).toHaveLength(1)
    expect(mine[0]!.body).toContain('⛔ servegate: refused to run — no verdict')
  }, 60_000)

  it('with allow-fork, runs the fork PR; a slowed engine fails the step with verdict regression', async () => {
    const r = await step({ mode: 'gate', 'base-url': slowSim.url, 'allow-fork': 'true' }, prEvent(true))
    expect(r.code, r.stdout).toBe(1)
    expect(r.outputs['verdict']).toBe('regression')
    expect(JSON.parse(r.outputs['regressions']!)).toEqual(expect.arrayContaining([expect.stringMatching(/^p95 ITL 32×12 c=/)]))
    expect(r.stdout).toMatch(/::error::servegate gate tripped: regression in /)
    expect(r.summary).toContain('❌ servegate: regression')
    const mine = gh.comments.filter((c) => c.user.login === 'github-actions[bot]')
    expect(mine).toHaveLength(1)
    expect(mine[0]!.body).toContain('❌ servegate: regression')
  }, 120_000)

  const post = join(DIST, '..', 'post.js')
  it.skipIf(!existsSync(post))('post.js reports a main step that was killed mid-sweep, in the summary and the one comment', async () => {
    const summary = join(dir, 'post-summary.md')
    writeFileSync(summary, '')
    const partial = join(dir, 'partial.json')
    writeFileSync(partial, readFileSync(join(repo, 'servegate-result.json')))
    const env = {
      ...cleanEnv(),
      ...defaultInputs(),
      'INPUT_GITHUB-TOKEN': 'ghs_faketoken',
      GITHUB_ACTIONS: 'true',
      GITHUB_EVENT_NAME: 'pull_request',
      GITHUB_EVENT_PATH: join(dir, 'event-2.json'),
      GITHUB_STEP_SUMMARY: summary,
      GITHUB_API_URL: gh.url,
      GITHUB_REPOSITORY: 'acme/infer',
      RUNNER_ENVIRONMENT: 'self-hosted',
      // What core.saveState in the main step hands the post step.
      'STATE_servegate-phase': 'started',
      'STATE_servegate-result-path': partial,
      'STATE_servegate-planned-runs': '9',
      'STATE_servegate-pr': '7',
      'STATE_servegate-comment-key': 'gate',
    }
    // Asynchronously: the stand-in GitHub API answers from this process.
    const child = spawn(process.execPath, [post], { cwd: repo, env, stdio: ['ignore', 'pipe', 'pipe'] })
    let out = ''
    child.stdout.on('data', (d: Buffer) => (out += d.toString()))
    child.stderr.on('data', (d: Buffer) => (out += d.toString()))
    const code = await new Promise<number>((res) => child.on('close', (c) => res(c ?? -1)))
    expect(code, out).toBe(1)
    expect(readFileSync(summary, 'utf8')).toContain('cancelled — partial (4 of 9 runs)')
    const mine = gh.comments.filter((c) => c.user.login === 'github-actions[bot]')
    expect(mine).toHaveLength(1)
    expect(mine[0]!.body).toContain('🛑 servegate: cancelled — no verdict')
  }, 60_000)
})
