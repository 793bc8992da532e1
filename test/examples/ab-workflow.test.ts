import { execFileSync } from 'node:child_process'
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { parse } from 'yaml'
import { parseOutputs } from '../action/dist-harness.js'
import { type Contexts, evaluateIf } from './gh-expr.js'
import { runnerGroup, runnerLabels, type RunsOn } from './runner.js'

// The A/B example users copy for pull requests that change the engine: its guards are evaluated
// against sample events, and its script that reads both serve commands is run in a real checkout.

interface Step {
  name?: string
  id?: string
  uses?: string
  run?: string
  with?: Record<string, unknown>
  env?: Record<string, string>
}
interface Job {
  if?: string
  'runs-on'?: RunsOn
  permissions?: Record<string, string> | string
  steps?: Step[]
}
const wf = parse(readFileSync(new URL('../../examples/servegate-ab.yml', import.meta.url), 'utf8')) as { jobs: Record<string, Job> }
const REPO = 'acme/serving'
const selfHosted = (job: Job) => runnerLabels(job['runs-on']).includes('self-hosted')

function pr(opts: { headRepo?: string | null; draft?: boolean } = {}): Contexts {
  const headRepo = opts.headRepo === undefined ? REPO : opts.headRepo
  return {
    github: {
      repository: REPO,
      event_name: 'pull_request',
      base_ref: 'main',
      event: {
        pull_request: {
          number: 7,
          draft: opts.draft ?? false,
          head: { repo: headRepo === null ? null : { full_name: headRepo } },
          base: { repo: { full_name: REPO } },
        },
      },
    },
  }
}
const started = (ctx: Contexts) =>
  Object.entries(wf.jobs)
    .filter(([, j]) => evaluateIf(j.if, ctx))
    .map(([id]) => id)

describe('examples/servegate-ab.yml', () => {
  it('runs the A/B job on the GPU runner for a ready pull request from a branch of the repository', () => {
    expect(started(pr())).toEqual(['ab'])
    expect(selfHosted(wf.jobs['ab']!)).toBe(true)
    expect(wf.jobs['ab']!.permissions).toEqual({ contents: 'read', 'pull-requests': 'write' })
  })

  it.each([
    ['a fork', pr({ headRepo: 'mallory/serving' }), ['fork-guard']],
    ['a deleted fork', pr({ headRepo: null }), ['fork-guard']],
    ['a draft', pr({ draft: true }), []],
  ])('starts no self-hosted job for a pull request from %s', (_, ctx, jobs) => {
    expect(started(ctx)).toEqual(jobs)
  })

  it("hands servegate the base branch's serve command as A and the pull request's as B, in mode ab", () => {
    const sg = wf.jobs['ab']!.steps!.find((s) => s.uses?.startsWith('servegate/servegate'))!
    expect(sg.with).toMatchObject({ mode: 'ab', 'a-serve': '${{ env.A_SERVE }}', 'b-serve': '${{ env.B_SERVE }}' })
  })

  const dirs: string[] = []
  afterAll(() => {
    for (const d of dirs) rmSync(d, { recursive: true, force: true })
  })

  it('reads A from origin/<base> and B from the checkout into the job environment', () => {
    const dir = mkdtempSync(join(tmpdir(), 'servegate-ab-example-'))
    dirs.push(dir)
    const env = { ...process.env, GIT_CONFIG_GLOBAL: '/dev/null', GIT_CONFIG_SYSTEM: '/dev/null' }
    const git = (cwd: string, ...args: string[]) =>
      execFileSync('git', ['-c', 'user.name=dev', '-c', 'user.email=dev@example.com', ...args], { cwd, env, encoding: 'utf8' })
    const remote = join(dir, 'remote.git')
    const work = join(dir, 'work')
    git(dir, 'init', '-q', '--bare', '-b', 'main', remote)
    git(dir, 'init', '-q', '-b', 'main', work)
    mkdirSync(join(work, 'serving'))
    writeFileSync(join(work, 'serving/command'), '# the engine\ndocker run --rm -p 127.0.0.1:{port}:8000 vllm/vllm-openai@sha256:aaa --model m\n')
    git(work, 'add', '.')
    git(work, 'commit', '-q', '-m', 'base')
    git(work, 'remote', 'add', 'origin', remote)
    git(work, 'push', '-q', 'origin', 'main')
    git(work, 'checkout', '-q', '-b', 'bump')
    writeFileSync(join(work, 'serving/command'), "docker run --rm -p 127.0.0.1:{port}:8000 vllm/vllm-openai@sha256:bbb --model m --kv-cache-dtype 'fp8'\n")
    git(work, 'commit', '-q', '-am', 'bump the engine')
    const step = wf.jobs['ab']!.steps!.find((s) => s.run?.includes('serving/command'))!
    const envFile = join(dir, 'github-env')
    writeFileSync(envFile, '')
    execFileSync('bash', ['-e', '-c', step.run!], { cwd: work, env: { ...env, BASE_REF: 'main', GITHUB_ENV: envFile }, encoding: 'utf8' })
    const vars = parseOutputs(readFileSync(envFile, 'utf8'))
    expect(vars['A_SERVE']).toBe('docker run --rm -p 127.0.0.1:{port}:8000 vllm/vllm-openai@sha256:aaa --model m')
    expect(vars['B_SERVE']).toBe("docker run --rm -p 127.0.0.1:{port}:8000 vllm/vllm-openai@sha256:bbb --model m --kv-cache-dtype 'fp8'")
  })

  it('runs its GPU job in a runner group and an environment', () => {
    const gpu = Object.entries(wf.jobs).filter(([, job]) => selfHosted(job))
    expect(gpu.length).toBeGreaterThan(0)
    for (const [id, job] of gpu) {
      expect(runnerGroup(job['runs-on']), id).toMatch(/\S/)
      expect((job as { environment?: unknown }).environment, id).toBeDefined()
    }
  })
})
