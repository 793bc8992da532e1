import { existsSync, readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { parse } from 'yaml'
import { type Contexts, evaluateIf, evaluateValue, interpolate } from './gh-expr.js'
import { runnerGroup, runnerLabels, volumeMounts, type RunsOn } from './runner.js'

// The example users copy to run servegate on their GPU runner, and the release
// workflow that makes `servegate/servegate@v0` resolve. Job conditions and
// concurrency groups are evaluated against sample event payloads, not grepped.

const ROOT = new URL('../../', import.meta.url)
const EXAMPLE = new URL('examples/servegate-gate.yml', ROOT)
const RELEASE = new URL('.github/workflows/release.yml', ROOT)

interface Step {
  name?: string
  id?: string
  uses?: string
  run?: string
  if?: string
  with?: Record<string, unknown>
  env?: Record<string, string>
}
interface Job {
  name?: string
  if?: string
  'runs-on'?: RunsOn
  needs?: string | string[]
  permissions?: Record<string, string> | string
  environment?: string | { name: string }
  steps?: Step[]
}
interface Workflow {
  on: Record<string, { paths?: string[]; branches?: string[]; tags?: string[]; types?: string[] } | null>
  permissions?: Record<string, string> | string
  concurrency?: { group: string; 'cancel-in-progress'?: unknown }
  jobs: Record<string, Job>
}

const load = (url: URL): Workflow => parse(readFileSync(url, 'utf8')) as Workflow
const selfHosted = (job: Job) => runnerLabels(job['runs-on']).includes('self-hosted')
const steps = (job: Job) => job.steps ?? []
const contentsWrite = (job: Job) => typeof job.permissions === 'object' && job.permissions.contents === 'write'

const REPO = 'acme/serving'
const github = (extra: Record<string, unknown>) => ({ repository: REPO, workflow: 'servegate', run_attempt: '1', run_id: '77', ...extra })

function pr(opts: { number?: number; headRepo?: string | null; draft?: boolean } = {}): Contexts {
  const headRepo = opts.headRepo === undefined ? REPO : opts.headRepo
  return {
    github: github({
      event_name: 'pull_request',
      ref: `refs/pull/${opts.number ?? 7}/merge`,
      event: {
        pull_request: {
          number: opts.number ?? 7,
          draft: opts.draft ?? false,
          head: { repo: headRepo === null ? null : { full_name: headRepo } },
          base: { repo: { full_name: REPO } },
        },
      },
    }),
    inputs: {},
  }
}
const push = (ref = 'refs/heads/main'): Contexts => ({
  github: github({ event_name: 'push', ref, event: { repository: { default_branch: 'main' } } }),
  inputs: {},
})
const dispatch = (mode: string, ref = 'refs/heads/main'): Contexts => ({
  github: github({ event_name: 'workflow_dispatch', ref, event: { repository: { default_branch: 'main' } } }),
  inputs: { mode, sweep: '', 'fail-on': 'never' },
})
const schedule = (): Contexts => ({
  github: github({ event_name: 'schedule', ref: 'refs/heads/main', event: { schedule: '17 3 * * *', repository: { default_branch: 'main' } } }),
  inputs: {},
})
const mergeGroup = (): Contexts => ({
  github: github({
    event_name: 'merge_group',
    ref: 'refs/heads/gh-readonly-queue/main/pr-7-abc',
    event: { merge_group: { base_ref: 'refs/heads/main', head_sha: 'abc' } },
  }),
  inputs: {},
})

/** The jobs that would start for an event, following `needs` (an unmet or skipped need skips a job unless its `if` says otherwise). */
function jobsThatRun(wf: Workflow, ctx: Contexts, outputs: Record<string, Record<string, string>> = {}): string[] {
  const result = new Map<string, 'success' | 'skipped'>()
  const visit = (id: string): 'success' | 'skipped' => {
    const known = result.get(id)
    if (known) return known
    const job = wf.jobs[id]
    if (!job) throw new Error(`no job ${id}`)
    const needs = ([] as string[]).concat(job.needs ?? [])
    const needCtx: Record<string, { result: string; outputs: Record<string, string> }> = {}
    for (const n of needs) {
      const r = visit(n)
      needCtx[n] = { result: r, outputs: r === 'success' ? (outputs[n] ?? {}) : {} }
    }
    const allOk = needs.every((n) => needCtx[n]?.result === 'success')
    const full = { ...ctx, needs: needCtx } as Contexts
    // Without a status function in `if`, GitHub adds success(): a skipped need skips the job.
    const cond = job.if
    const hasStatusFn = cond !== undefined && /\b(always|success|failure|cancelled)\s*\(/.test(cond)
    const runs = (hasStatusFn || allOk) && evaluateIf(cond, full, { status: allOk ? 'success' : 'failure' })
    const r = runs ? 'success' : 'skipped'
    result.set(id, r)
    return r
  }
  return Object.keys(wf.jobs).filter((id) => visit(id) === 'success')
}

describe('examples/servegate-gate.yml', () => {
  const wf = load(EXAMPLE)
  const gpuJobs = Object.entries(wf.jobs).filter(([, j]) => selfHosted(j))

  it('runs a GPU job for a non-draft pull request from a branch of the repository', () => {
    const started = jobsThatRun(wf, pr())
    expect(started.filter((id) => selfHosted(wf.jobs[id] as Job))).not.toEqual([])
  })

  it.each([
    ['a fork', pr({ headRepo: 'mallory/serving' })],
    ['a deleted fork (no head repository)', pr({ headRepo: null })],
    ['a draft', pr({ draft: true })],
  ])('starts no self-hosted job for a pull request from %s', (_, ctx) => {
    const started = jobsThatRun(wf, ctx, { changes: { serving: 'true' } })
    expect(started.filter((id) => selfHosted(wf.jobs[id] as Job))).toEqual([])
  })

  it.each([
    ['a fork', pr({ headRepo: 'mallory/serving' })],
    ['a deleted fork (no head repository)', pr({ headRepo: null })],
  ])('fails a check for a pull request from %s on a GitHub-hosted runner, instead of leaving only skipped (green) jobs', (_, ctx) => {
    const started = jobsThatRun(wf, ctx, { changes: { serving: 'true' } }).map((id) => wf.jobs[id] as Job)
    const refusals = started.filter((j) => !selfHosted(j) && steps(j).some((s) => /\bexit 1\b/.test(s.run ?? '')))
    expect(refusals.length).toBe(1)
    expect(steps(refusals[0] as Job).every((s) => s.uses === undefined)).toBe(true)
  })

  it('guards every self-hosted job that can run for a pull request at job level, on the head repository', () => {
    expect(gpuJobs.length).toBeGreaterThan(0)
    for (const [id, job] of gpuJobs) {
      const runsForPr = jobsThatRun(wf, pr()).includes(id) || job.if === undefined || /pull_request/.test(job.if)
      if (!runsForPr) continue
      expect(job.if, `job ${id}`).toMatch(/github\.event\.pull_request\.head\.repo\.full_name\s*==\s*github\.repository/)
    }
  })

  it('refuses forks a second time in a `mode: check` step that runs before any script, pull or container', () => {
    for (const id of jobsThatRun(wf, pr())) {
      const job = wf.jobs[id] as Job
      if (!selfHosted(job)) continue
      const s = steps(job)
      const check = s.findIndex((x) => x.uses?.startsWith('servegate/servegate@') && x.with?.mode === 'check')
      const firstDocker = s.findIndex((x) => /\bdocker\b/.test(x.run ?? ''))
      expect(check, `job ${id} has a mode: check step`).toBeGreaterThanOrEqual(0)
      expect(firstDocker, `job ${id} starts a container`).toBeGreaterThan(check)
      expect(
        s.slice(0, check).every((x) => x.run === undefined),
        `job ${id}: no script before the check`,
      ).toBe(true)
    }
  })

  it('starts the gate when a draft is marked ready for review', () => {
    expect(wf.on.pull_request?.types).toContain('ready_for_review')
  })

  it('gives each pull request its own concurrency group, apart from pushes', () => {
    const group = wf.concurrency?.group ?? ''
    const g = (ctx: Contexts) => interpolate(group, ctx)
    expect(g(pr({ number: 7 }))).toBe(g(pr({ number: 7 })))
    const groups = [g(pr({ number: 7 })), g(pr({ number: 8 })), g(push()), g(mergeGroup())]
    expect(new Set(groups).size).toBe(groups.length)
    expect(group).toMatch(/github\.event\.pull_request\.number/)
    expect(group).toMatch(/github\.ref/)
  })

  it('cancels a running benchmark only when a newer commit of the same pull request supersedes it', () => {
    const cancel = wf.concurrency?.['cancel-in-progress']
    expect(evaluateValue(cancel, pr())).toBe(true)
    for (const ctx of [push(), mergeGroup(), dispatch('refresh'), dispatch('full')]) expect(evaluateValue(cancel, ctx)).toBe(false)
  })

  it('runs the gate for a pull request that only edits the baseline', () => {
    expect(wf.on.pull_request?.paths).toContain('baselines/**')
  })

  it('has a merge_group trigger, and the merge queue gets a gate when the group changes the serving stack', () => {
    expect(Object.keys(wf.on)).toContain('merge_group')
    const gpu = (ids: string[]) => ids.filter((id) => selfHosted(wf.jobs[id] as Job))
    expect(gpu(jobsThatRun(wf, mergeGroup(), { changes: { serving: 'true' } }))).not.toEqual([])
    expect(gpu(jobsThatRun(wf, mergeGroup(), { changes: { serving: 'false' } }))).toEqual([])
  })

  it('removes a stale container before every docker run', () => {
    for (const [id, job] of Object.entries(wf.jobs)) {
      const script = steps(job)
        .map((s) => s.run ?? '')
        .join('\n')
      const run = script.search(/docker run\b/)
      if (run < 0) continue
      expect(script.slice(0, run), `job ${id}`).toMatch(/docker rm -f\b/)
    }
  })

  it('passes the server flags as an array, never as one unquoted word-split string', () => {
    for (const [id, job] of Object.entries(wf.jobs)) {
      for (const s of steps(job)) {
        const run = s.run ?? ''
        if (!/docker run\b/.test(run)) continue
        expect(run, `job ${id}`).not.toMatch(/\$args\b(?!\[)/)
        expect(run, `job ${id}`).toMatch(/"\$\{args\[@\]\}"/)
        expect(run, `job ${id}`).toMatch(/mapfile -t args|read -ra args/)
      }
    }
  })

  it('writes the serve command to GITHUB_OUTPUT in the delimited form, with a random delimiter', () => {
    for (const job of Object.values(wf.jobs)) {
      for (const s of steps(job)) {
        const run = s.run ?? ''
        if (!/command/.test(run) || !/GITHUB_OUTPUT/.test(run)) continue
        expect(run).not.toMatch(/echo "command=/)
        expect(run).toMatch(/command<<\$/)
        expect(run).toMatch(/\/dev\/urandom|openssl rand|uuidgen/)
      }
    }
  })

  it('fails loudly on an image without a registry digest, and stops waiting when the container exits', () => {
    for (const job of Object.values(wf.jobs)) {
      for (const s of steps(job)) {
        const run = s.run ?? ''
        if (!/docker run\b/.test(run)) continue
        expect(run).toMatch(/RepoDigests/)
        expect(run).toMatch(/if \[ -z "\$digest" \]/)
        expect(run).toMatch(/\.State\.Running/)
      }
    }
  })

  it('names every artifact with the run attempt, so a re-run does not collide', () => {
    let uploads = 0
    for (const job of Object.values(wf.jobs)) {
      for (const s of steps(job)) {
        if (!s.uses?.startsWith('actions/upload-artifact@')) continue
        uploads++
        const name = String(s.with?.name ?? '')
        expect(name).toMatch(/github\.run_attempt/)
        const ctx = { ...pr(), github: { ...(pr().github as object), run_attempt: '2' } } as Contexts
        expect(interpolate(name, ctx)).not.toBe(interpolate(name, pr()))
      }
    }
    expect(uploads).toBeGreaterThan(0)
  })

  it('keeps no git credentials in jobs that do not push', () => {
    for (const [id, job] of Object.entries(wf.jobs)) {
      if (contentsWrite(job)) continue
      for (const s of steps(job).filter((x) => x.uses?.startsWith('actions/checkout@'))) {
        expect(s.with?.['persist-credentials'], `job ${id}`).toBe(false)
      }
    }
  })

  it('grants nothing at workflow level; only the refresh job may write contents, and it is the one that commits', () => {
    const top = wf.permissions
    expect(typeof top === 'object' ? Object.values(top) : [top]).not.toContain('write')
    const writers = Object.entries(wf.jobs).filter(([, j]) => contentsWrite(j))
    expect(writers.length).toBe(1)
    const [, refresh] = writers[0] as [string, Job]
    const sg = steps(refresh).find((s) => s.uses?.startsWith('servegate/servegate@') && s.with?.mode === 'refresh')
    expect(sg?.with?.['refresh-commit']).toBe(true)
  })

  it('sends a hand-run refresh on the default branch to the job that commits (the first-baseline recipe)', () => {
    const started = jobsThatRun(wf, dispatch('refresh'))
    const committing = started.filter((id) => contentsWrite(wf.jobs[id] as Job))
    expect(committing.length).toBe(1)
    for (const id of started) {
      const ss = steps(wf.jobs[id] as Job).filter((s) => s.uses?.startsWith('servegate/servegate@') && s.with?.mode !== 'check')
      for (const s of ss) expect(s.with?.['refresh-commit'], `job ${id}`).not.toBe(false)
    }
    expect(jobsThatRun(wf, push()).filter((id) => contentsWrite(wf.jobs[id] as Job))).toEqual(committing)
    // A full sweep by hand writes nothing.
    expect(jobsThatRun(wf, dispatch('full')).filter((id) => contentsWrite(wf.jobs[id] as Job))).toEqual([])
  })

  it('runs on a schedule, and only the watch job runs then: mode watch on the self-hosted runner with exactly contents: read and issues: write', () => {
    const on = wf.on as Record<string, unknown>
    expect(Array.isArray(on['schedule']) && (on['schedule'] as Array<{ cron?: string }>).every((s) => typeof s.cron === 'string')).toBe(true)
    const started = jobsThatRun(wf, schedule())
    expect(started).toHaveLength(1)
    const job = wf.jobs[started[0]!] as Job
    expect(selfHosted(job)).toBe(true)
    expect(job.permissions).toEqual({ contents: 'read', issues: 'write' })
    const sg = steps(job).filter((s) => s.uses?.startsWith('servegate/servegate@'))
    expect(sg.map((s) => s.with?.mode)).toEqual(['watch'])
    // The watch exists to raise the alarm: fail-on stays at its default.
    expect(sg[0]!.with?.['fail-on']).toBeUndefined()
  })

  it('sends a hand-run watch on main to the watch job alone, and a scheduled watch never shares a concurrency group with a refresh of main', () => {
    const dispatchOptions = (wf.on.workflow_dispatch as unknown as { inputs: { mode: { options: string[] } } }).inputs.mode.options
    expect(dispatchOptions).toContain('watch')
    expect(jobsThatRun(wf, dispatch('watch'))).toEqual(jobsThatRun(wf, schedule()))
    expect(jobsThatRun(wf, dispatch('watch', 'refs/heads/feature'))).toEqual([])
    for (const ctx of [push(), dispatch('refresh'), dispatch('full'), pr()]) {
      expect(jobsThatRun(wf, ctx)).not.toContain(jobsThatRun(wf, schedule())[0])
    }
    const group = wf.concurrency?.group ?? ''
    expect(interpolate(group, schedule())).not.toBe(interpolate(group, push()))
    expect(evaluateValue(wf.concurrency?.['cancel-in-progress'], schedule())).toBe(false)
  })

  it('names a job like the required check ("servegate gate") only where it gates a pull request or the merge queue, in mode gate, failing per the default fail-on', () => {
    const REQUIRED = 'servegate gate'
    const nameOf = (id: string, ctx: Contexts) => interpolate(wf.jobs[id]!.name ?? id, ctx)
    const serving = { changes: { serving: 'true' } }
    const modes = (wf.on.workflow_dispatch as unknown as { inputs: { mode: { options: string[] } } }).inputs.mode.options
    // A run by hand (with fail-on: never, on main or on a pull request's branch), a push, a schedule: never the required name.
    const byHand = modes.flatMap((m) => [dispatch(m), dispatch(m, 'refs/heads/feature')])
    for (const ctx of [...byHand, push(), push('refs/heads/feature'), schedule()]) {
      for (const id of jobsThatRun(wf, ctx, serving)) expect(nameOf(id, ctx), `${JSON.stringify(ctx.inputs)} job ${id}`).not.toBe(REQUIRED)
    }
    expect(nameOf('gate', dispatch('full'))).toBe('servegate full (by hand)')
    for (const ctx of [pr(), mergeGroup()]) {
      const required = jobsThatRun(wf, ctx, serving).filter((id) => nameOf(id, ctx) === REQUIRED)
      expect(required).toHaveLength(1)
      const sg = steps(wf.jobs[required[0]!] as Job).filter((s) => s.uses?.startsWith('servegate/servegate@'))
      expect(sg.map((s) => interpolate(String(s.with?.mode ?? 'gate'), ctx))).toEqual(['check', 'gate'])
      // Empty: the Action's default, every verdict but a pass.
      for (const s of sg) expect(interpolate(String(s.with?.['fail-on'] ?? ''), ctx)).toBe('')
    }
  })

  it('checks out the base ref too, so the gate can read its terms from it', () => {
    for (const id of jobsThatRun(wf, pr())) {
      const job = wf.jobs[id] as Job
      if (!selfHosted(job)) continue
      const co = steps(job).find((s) => s.uses?.startsWith('actions/checkout@'))
      expect(co?.with?.['fetch-depth'], `job ${id}`).toBe(0)
    }
  })
})

describe('.github/workflows/release.yml', () => {
  it('exists: without it no v0 tag is ever published and `@v0` cannot resolve', () => {
    expect(existsSync(RELEASE)).toBe(true)
  })

  it('runs on a pushed version tag, checks dist/ first, and only the publishing job can write', () => {
    const wf = load(RELEASE)
    expect(wf.on.push?.tags).toContain('v*.*.*')
    const top = wf.permissions
    expect(typeof top === 'object' ? Object.values(top) : [top]).not.toContain('write')
    const writers = Object.entries(wf.jobs).filter(([, j]) => contentsWrite(j))
    expect(writers.map(([id]) => id)).toHaveLength(1)
    const [publishId, publish] = writers[0] as [string, Job]
    const needs = ([] as string[]).concat(publish.needs ?? [])
    expect(needs.length, `${publishId} needs the verification`).toBeGreaterThan(0)
    const verified = needs.some((n) => steps(wf.jobs[n] as Job).some((s) => /scripts\/check-dist\.sh|npm run check-dist/.test(s.run ?? '')))
    expect(verified).toBe(true)
  })

  it('creates a GitHub release and force-moves the major tag to the release commit', () => {
    const wf = load(RELEASE)
    const publish = Object.values(wf.jobs).find(contentsWrite) as Job
    const script = steps(publish)
      .map((s) => s.run ?? '')
      .join('\n')
    expect(script).toMatch(/gh release create/)
    expect(script).toMatch(/git push (--force|-f)\b[^\n]*refs\/tags\//)
  })
})

describe('examples/servegate-gate.yml: what protects the self-hosted runner', () => {
  const wf = load(EXAMPLE)
  const gpuJobs = Object.entries(wf.jobs).filter(([, job]) => selfHosted(job))

  it('runs every GPU job in a runner group and an environment', () => {
    expect(gpuJobs.map(([id]) => id).sort()).toEqual(['gate', 'refresh', 'watch'])
    for (const [id, job] of gpuJobs) {
      expect(runnerGroup(job['runs-on']), id).toMatch(/\S/)
      expect(job.environment, id).toBeDefined()
    }
  })

  it("never gives the pull request's image a writable mount of a cache the refresh and watch jobs use", () => {
    const mounts = (id: string) => steps(wf.jobs[id]!).flatMap((s) => volumeMounts(s.run ?? ''))
    const gate = mounts('gate')
    expect(gate.length).toBeGreaterThan(0)
    const shared = new Set([...mounts('refresh'), ...mounts('watch')].map((m) => m.host))
    for (const m of gate) {
      // A host path the trusted jobs also mount is read-only for the PR's image.
      if (shared.has(m.host)) expect(m.mode, `${m.host} in the gate job`).toBe('ro')
      expect(m.mode, `${m.host} in the gate job`).not.toBe('rw')
    }
    expect(gate.some((m) => shared.has(m.host))).toBe(true)
  })

  it('says in the header what the guards cannot cover', () => {
    const text = readFileSync(EXAMPLE, 'utf8')
    expect(text).toMatch(/fork's pull_request run uses the workflow\s+# file as the fork edited it/)
    expect(text).toMatch(/Docker socket/)
  })
})
