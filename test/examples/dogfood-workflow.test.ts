import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { parse } from 'yaml'
import { parseSimFlags } from '../../src/cli/sim.js'
import { gateOptionsOfConfig } from '../../src/cli/compare.js'
import { loadConfigFile } from '../../src/config/load.js'
import { resolveConfig } from '../../src/config/resolve.js'
import type { ConfigFile } from '../../src/config/schema.js'
import { compareToBaseline } from '../../src/gate/compare.js'
import { diffFingerprint } from '../../src/gate/fingerprint.js'
import { readBaseline } from '../../src/store/baseline.js'
import { profileOf } from '../../src/gate/refresh.js'
import type { Baseline, Verdict } from '../../src/gate/types.js'
import { startSim } from '../../src/sim/index.js'
import { runSweep } from '../../src/sweep/run-sweep.js'
import type { ResultFile } from '../../src/types.js'
import { type Contexts, evaluateIf, evaluateValue, interpolate } from './gh-expr.js'

// servegate's own workflow: this repository's action gating every change to
// servegate against the simulator. Job conditions and concurrency groups are
// evaluated against sample event payloads; the config and the baseline it
// names are loaded with servegate's own readers, and a fresh sweep of that
// config must be comparable with the committed baseline.

const ROOT = new URL('../../', import.meta.url)
const WORKFLOW = new URL('.github/workflows/servegate.yml', ROOT)

interface Step {
  name?: string
  uses?: string
  run?: string
  id?: string
  with?: Record<string, unknown>
}
interface Job {
  if?: string
  'runs-on'?: string | string[]
  permissions?: Record<string, string> | string
  concurrency?: { group: string; 'cancel-in-progress'?: unknown }
  steps?: Step[]
}
interface Workflow {
  on: Record<string, unknown>
  permissions?: Record<string, string> | string
  env?: Record<string, string>
  concurrency?: unknown
  jobs: Record<string, Job>
}

const wf = parse(readFileSync(WORKFLOW, 'utf8')) as Workflow
const REPO = 'servegate/servegate'
const github = (extra: Record<string, unknown>) => ({ repository: REPO, workflow: 'servegate', run_id: '9', run_attempt: '1', ...extra })
const ctx = (event: string, ref: string, event_payload: Record<string, unknown> = {}): Contexts => ({
  github: github({ event_name: event, ref, event: { repository: { default_branch: 'main' }, ...event_payload } }),
  env: (wf.env ?? {}) as Contexts[string],
  inputs: {},
})
const pr = (n = 7): Contexts => ctx('pull_request', `refs/pull/${n}/merge`, { pull_request: { number: n, head: { repo: { full_name: REPO } } } })
const push = (ref = 'refs/heads/main', sha = 'abc'): Contexts => ({ ...ctx('push', ref), github: { ...(ctx('push', ref).github as object), sha } })
const schedule = (): Contexts => ctx('schedule', 'refs/heads/main', { schedule: '23 4 * * *' })
const dispatch = (): Contexts => ctx('workflow_dispatch', 'refs/heads/main')

const started = (c: Contexts): string[] => Object.keys(wf.jobs).filter((id) => evaluateIf(wf.jobs[id]!.if, c))
/** Where the gate checks out the base branch's build of the Action, apart from the pull request's checkout. */
const BASE_ACTION = '.servegate-base'
/** The step that runs this repository's Action: on main its own build (`./`), on a pull request the base branch's. */
const action = (job: Job): Step => {
  const s = (job.steps ?? []).filter((x) => x.uses === './' || x.uses === `./${BASE_ACTION}`)
  expect(s).toHaveLength(1)
  return s[0]!
}
const input = (job: Job, name: string, c: Contexts): string => interpolate(String(action(job).with?.[name] ?? ''), c)

describe('.github/workflows/servegate.yml', () => {
  it.each([
    ['a pull request', 'gate', pr()],
    ['a push to main', 'refresh', push()],
    ['the daily schedule', 'watch', schedule()],
    ['a run by hand', 'watch', dispatch()],
  ] as const)('runs exactly one job for %s, in mode %s, with this repository’s action', (_, mode, c) => {
    const jobs = started(c)
    expect(jobs).toHaveLength(1)
    expect(input(wf.jobs[jobs[0]!]!, 'mode', c)).toBe(mode)
  })

  it('measures nothing for a push to, or a run by hand on, another branch, and is triggered by exactly these four events', () => {
    expect(started(push('refs/heads/feature'))).toEqual([])
    expect(started(ctx('workflow_dispatch', 'refs/heads/feature'))).toEqual([])
    expect(Object.keys(wf.on).sort()).toEqual(['pull_request', 'push', 'schedule', 'workflow_dispatch'])
    expect((wf.on['push'] as { branches: string[] }).branches).toEqual(['main'])
    const crons = (wf.on['schedule'] as Array<{ cron: string }>).map((s) => s.cron.trim().split(/\s+/))
    expect(crons).toHaveLength(1)
    // Once a day: a fixed minute and hour, every day.
    expect(crons[0]).toHaveLength(5)
    expect(crons[0]!.slice(0, 2).every((f) => /^\d+$/.test(f))).toBe(true)
    expect(crons[0]!.slice(2)).toEqual(['*', '*', '*'])
  })

  it('grants nothing at workflow level and each job only what it writes: the comment, the baseline commit, the tracking issue', () => {
    expect(wf.permissions).toEqual({})
    const perms = Object.fromEntries(Object.entries(wf.jobs).map(([id, j]) => [input(j, 'mode', pr()), { id, p: j.permissions }]))
    expect(perms['gate']!.p).toEqual({ contents: 'read', 'pull-requests': 'write' })
    expect(perms['refresh']!.p).toEqual({ contents: 'write' })
    expect(perms['watch']!.p).toEqual({ contents: 'read', issues: 'write' })
    expect(Object.keys(wf.jobs)).toHaveLength(3)
  })

  it('runs on GitHub-hosted runners, checks the repository out before `uses: ./`, and keeps git credentials only where it pushes', () => {
    for (const [id, job] of Object.entries(wf.jobs)) {
      expect(job['runs-on'], id).toBe('ubuntu-latest')
      const steps = job.steps ?? []
      const checkout = steps.findIndex((s) => s.uses?.startsWith('actions/checkout@'))
      expect(checkout, id).toBeGreaterThanOrEqual(0)
      expect(checkout, id).toBeLessThan(steps.indexOf(action(job)))
      // The action runs the committed dist/: nothing is installed or built before it.
      expect(
        steps.some((s) => /\bnpm (ci|install)\b|npm run (bundle|build)/.test(s.run ?? '')),
        id,
      ).toBe(false)
      const pushes = input(job, 'mode', pr()) === 'refresh'
      expect(steps[checkout]!.with?.['persist-credentials'], id).toBe(pushes ? undefined : false)
    }
    const gate = wf.jobs[started(pr())[0]!]!
    expect(gate.steps!.find((s) => s.uses?.startsWith('actions/checkout@'))!.with?.['fetch-depth']).toBe(0)
    const refresh = wf.jobs[started(push())[0]!]!
    expect(action(refresh).with?.['refresh-commit']).toBe(true)
  })

  it("judges a pull request with the base branch's build of the Action, checked out apart at the base commit, never the pull request's", () => {
    const gate = wf.jobs[started(pr())[0]!]!
    const steps = gate.steps ?? []
    const judge = action(gate)
    expect(judge.uses).toBe(`./${BASE_ACTION}`)
    const base = steps.find((s) => s.uses?.startsWith('actions/checkout@') && s.with?.['path'] === BASE_ACTION)
    expect(base?.with).toEqual({ ref: '${{ github.event.pull_request.base.sha }}', path: BASE_ACTION, 'persist-credentials': false })
    expect(steps.indexOf(base!)).toBeLessThan(steps.indexOf(judge))
    // The pull request's own checkout is the workspace root: what the judge measures (its bin/servegate.js sim).
    expect(steps.find((s) => s.uses?.startsWith('actions/checkout@'))!.with?.['path']).toBeUndefined()
    // On main the Action judges its own commit, which is the base there.
    for (const c of [push(), schedule(), dispatch()]) for (const id of started(c)) expect(action(wf.jobs[id]!).uses, id).toBe('./')
  })

  it('runs every action it uses on Node 24', () => {
    // The first major of each that declares runs.using: node24.
    const node24 = { 'actions/checkout': 5, 'actions/setup-node': 5, 'actions/upload-artifact': 6 } as Record<string, number>
    for (const [id, job] of Object.entries(wf.jobs)) {
      for (const s of job.steps ?? []) {
        if (s.uses === undefined || s.uses.startsWith('./')) continue
        const [name, ref] = s.uses.split('@') as [string, string]
        expect(node24[name], `${id}: ${s.uses}`).toBeDefined()
        expect(Number(/^v(\d+)/.exec(ref)?.[1]), `${id}: ${s.uses}`).toBeGreaterThanOrEqual(node24[name]!)
      }
    }
  })

  it('queues refreshes in one group and never cancels one half way; a new commit of a pull request cancels its older gate', () => {
    const refresh = wf.jobs[started(push())[0]!]!
    const group = (j: Job, c: Contexts) => interpolate(j.concurrency!.group, c)
    expect(group(refresh, push('refs/heads/main', 'a1'))).toBe(group(refresh, push('refs/heads/main', 'b2')))
    expect(evaluateValue(refresh.concurrency!['cancel-in-progress'], push())).toBe(false)
    const gate = wf.jobs[started(pr())[0]!]!
    expect(group(gate, pr(7))).toBe(group(gate, pr(7)))
    expect(group(gate, pr(7))).not.toBe(group(gate, pr(8)))
    expect(group(gate, pr(7))).not.toBe(group(refresh, push()))
    expect(evaluateValue(gate.concurrency!['cancel-in-progress'], pr())).toBe(true)
    // No workflow-level group: one would make a pull request's gate wait behind main's refresh.
    expect(wf.concurrency).toBeUndefined()
  })

  it('gives every job the same config, sweep and baseline', () => {
    const seen = new Set(Object.values(wf.jobs).map((j) => ['config', 'sweep', 'baseline'].map((k) => input(j, k, pr())).join(' ')))
    expect([...seen]).toEqual(['.github/servegate/config.yml dogfood baselines/dogfood.json'])
  })
})

describe('the dogfood config and its committed baseline', () => {
  const configPath = new URL('.github/servegate/config.yml', ROOT).pathname
  const baselinePath = new URL('baselines/dogfood.json', ROOT).pathname
  let file: ConfigFile
  let baseline: Baseline
  let dir: string
  let fresh: ResultFile
  let verdict: Verdict

  beforeAll(async () => {
    file = await loadConfigFile(configPath)
    baseline = await readBaseline(baselinePath)
    // A fresh sweep of the config against the same simulator ten times faster (time scale 0.1):
    // the measurement settings are the config's, only the timing differs.
    dir = mkdtempSync(join(tmpdir(), 'servegate-dogfood-'))
    const sim = await startSim({ ...parseSimFlags(simFlags(file.server!.command!)), port: 0, timeScale: 0.1 })
    try {
      const { command: _command, ...server } = file.server!
      void _command
      const cfg = resolveConfig({ file: { ...file, server }, filePath: configPath, flags: { baseUrl: sim.url, out: join(dir, 'fresh.json') }, env: {} })
      fresh = (await runSweep(cfg, { log: () => {} })).result
    } finally {
      await sim.close()
    }
    // The config's gate settings, as `servegate compare --config` and the Action apply them.
    verdict = compareToBaseline(baseline, fresh, await gateOptionsOfConfig(configPath))
  }, 60_000)

  afterAll(() => {
    if (dir) rmSync(dir, { recursive: true, force: true })
  })

  it('exist where the workflow says', () => {
    expect(existsSync(configPath)).toBe(true)
    expect(existsSync(baselinePath)).toBe(true)
    expect(existsSync(new URL('bin/servegate.js', ROOT))).toBe(true)
  })

  it('start the simulator in deterministic mode with the committed CLI, and gate with 10 % tolerances', () => {
    const cmd = file.server!.command!
    expect(cmd).toMatch(/^node bin\/servegate\.js sim --port \{port\} /)
    const o = parseSimFlags(simFlags(cmd))
    expect(o.ttftMs).toBeGreaterThan(0)
    expect(o.itlMs).toBeGreaterThanOrEqual(20)
    expect(o.timeScale).toBeUndefined()
    expect(file.gate?.tolerance_pct).toEqual({ itl: 10, throughput: 10 })
    expect(Object.keys(file.sweeps ?? {})).toContain('dogfood')
  })

  it('hold a baseline of several refreshes measured with that sweep and that serve command, every gated figure present', () => {
    expect(baseline.name).toBe('dogfood')
    expect(baseline.refreshes.length).toBeGreaterThanOrEqual(5)
    const sweep = file.sweeps!['dogfood']!
    const concurrency = sweep.concurrency!
    expect(baseline.profile).toEqual({ shapes: sweep.shapes, concurrency: [...concurrency].sort((a, b) => a - b) })
    expect(baseline.target).toEqual({ metric: file.target!.metric, percentile: file.target!.percentile, threshold_ms: file.target!.threshold_ms })
    expect(baseline.tolerances).toMatchObject({ itl_p95: 0.1, tput_at_target: 0.1 })
    for (const r of baseline.refreshes) {
      expect(r.env.serve_command).toBe(file.server!.command)
      expect(r.env.model.id).toBe('servegate/sim-model')
      for (const c of concurrency) expect(r.runs[`itl_p95@64x16@c${c}`]!.length, `refresh ${r.at} c=${c}`).toBeGreaterThanOrEqual(2)
      expect(r.runs['tput_at_target@64x16']!.length).toBeGreaterThanOrEqual(2)
    }
  })

  it('compare with a fresh sweep of the config: the same measurement settings, so never not_comparable', () => {
    expect(profileOf(fresh)).toEqual(baseline.profile)
    expect(diffFingerprint(baseline.refreshes.at(-1)!.fingerprint!, fresh.fingerprint!)).toEqual([])
    // Not `incomplete` either, on a quiet host; on a busy one the fresh runs may be client_saturated,
    // which leaves rows without a valid run: a verdict about the host, not the settings.
    expect(['not_comparable', 'broken'], verdict.reasons.join('\n')).not.toContain(verdict.verdict)
    expect(verdict.reasons.join('\n')).not.toMatch(/measurement settings|fewer runs|of the baseline's \d+ runs per refresh/)
  })
})

/** The simulator flags of `node bin/servegate.js sim …` as commander hands them to parseSimFlags. */
function simFlags(command: string): Record<string, string> {
  const args = command.split(/\s+/)
  const out: Record<string, string> = {}
  for (let i = args.indexOf('sim') + 1; i < args.length; i += 2) {
    const flag = args[i]!.replace(/^--/, '').replace(/-(\w)/g, (_, c: string) => c.toUpperCase())
    if (flag !== 'port') out[flag] = args[i + 1]!
  }
  return out
}
