/**
 * Acceptance: a pull request cannot pass its own gate by loosening it. The
 * base branch of a real git repository holds the config and a baseline of
 * real simulator refreshes; the PR loosens gate.tolerance_pct to 500 % and
 * rewrites the baseline from a slow run, and its server is 40 % slower. The
 * Action (real stages, real git, fake runner) still reports a regression,
 * fails the step, and says the PR's terms apply only once merged. Nor can a
 * change choose its terms through the workflow: a mode that is not a judging
 * one, a config path the base lacks, a reference engine of its own and a
 * runner variable as the API key are refused before anything is measured.
 */
import { execFileSync } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { stringify } from 'yaml'
import { run } from '../../src/action.js'
import { resolveConfig } from '../../src/config/resolve.js'
import { compareToBaseline } from '../../src/gate/index.js'
import { DEFAULT_FAIL_ON, gateExit } from '../../src/gate/outcome.js'
import type { Baseline, Verdict } from '../../src/gate/types.js'
import type { ActionDeps, ActionStages } from '../../src/github/deps.js'
import { execGit } from '../../src/github/refresh-commit.js'
import { realStages } from '../../src/github/real-deps.js'
import { startSim } from '../../src/sim/index.js'
import { appendRefresh } from '../../src/gate/refresh.js'
import { readResultFile } from '../../src/store/result-file.js'
import { runSweep } from '../../src/sweep/run-sweep.js'
import { VERDICT_ICON } from '../../src/report/verdict-format.js'
import type { ResultFile } from '../../src/types.js'
import { expectHonest, hostSpoiled, spoiledRows } from '../fixtures/honest-verdict.js'
import { fakeDeps } from './fake-deps.js'

// Two points, C = 4 and 8, each six waves of 120 ms requests (5 gaps each: 120 and 240 gaps a run)
// after a wave of warmup; three repeats a sweep. The gated rows are p95 ITL at each point and
// throughput at target (a lower bound at C = 8). ITL 20 ms keeps the host's timer lateness (a few ms
// when neighbours load the CPUs) small beside it. The PR's engine is 40 % slower: every row moves far
// past the 5 % tolerances, and past the bars a busy host's noise sets (17-27 % under a load of 5,
// where a 15 % slower engine was left undecided).
const SWEEP = { shapes: [{ input_len: 64, output_len: 6 }], concurrency: [4, 8], prompts_per_concurrency: 6, warmup: 8, repeats: 3, host_retries: 2 }
const SIM = { ttftMs: 20, itlMs: 20, seed: 7 }
/** The PR's engine, and the one its rewritten baseline was measured on. */
const SLOW = 1.4
const BASE_CONFIG = {
  target: { metric: 'tpot', percentile: 95, threshold_ms: 50 },
  sweeps: { gate: SWEEP },
  gate: { tolerance_pct: { itl: 5, throughput: 5 } },
}
// The PR loosens every tolerance and the blind limit with them, so that under its own terms its one-refresh baseline would pass.
const PR_CONFIG = { ...BASE_CONFIG, gate: { tolerance_pct: { itl: 500, tpot: 500, ttft: 500, throughput: 500 }, max_mdc_pct: 10000 } }

let dir: string
let baseSha: string
let headSha: string
let baseBaseline: Baseline
/** One refresh of the 40 % slower engine: the baseline both PR branches write. */
let slowBaseline: Baseline
let origin: string
let itlSha: string
// Case 6: only the ITL tolerance loosened, and the baseline rewritten from the 40 % slower engine.
const ITL_CONFIG = { ...BASE_CONFIG, gate: { tolerance_pct: { itl: 300, throughput: 5 }, max_mdc_pct: 10000 } }

const gitEnv = { ...process.env, GIT_CONFIG_GLOBAL: '/dev/null', GIT_CONFIG_SYSTEM: '/dev/null', GIT_TERMINAL_PROMPT: '0' }
const git = (cwd: string, ...args: string[]) =>
  execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@t', ...args], { cwd, encoding: 'utf8', env: gitEnv }).trim()

/**
 * One gated sweep against a fresh deterministic simulator (TTFT and ITL 20 ms, × slowdown).
 * A busy test host can saturate the client (client_saturated): such a sweep is measured again,
 * up to three times, as an operator would rerun a refresh spoiled by the host.
 */
async function measure(name: string, slowdown = 1): Promise<ResultFile> {
  let best: ResultFile | null = null
  const invalid = (r: ResultFile) => r.points.flatMap((p) => p.runs).filter((x) => !x.validity.valid).length
  for (let attempt = 0; attempt < 3 && (best === null || invalid(best) > 0); attempt++) {
    const sim = await startSim({ ...SIM, slowdown })
    try {
      const cfg = resolveConfig({
        file: BASE_CONFIG as never,
        filePath: null,
        flags: { baseUrl: sim.url, sweep: 'gate', out: join(dir, `${name}-${attempt}.json`) },
        env: {},
      })
      const r = (await runSweep(cfg, { log: () => {} })).result
      if (best === null || invalid(r) < invalid(best)) best = r
    } finally {
      await sim.close()
    }
  }
  return best!
}

const json = (v: unknown) => `${JSON.stringify(v, null, 2)}\n`

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'servegate-base-terms-'))
  for (const i of [1, 2, 3]) baseBaseline = appendRefresh(i === 1 ? null : baseBaseline, await measure(`refresh-${i}`), { name: 'gate' })
  slowBaseline = appendRefresh(null, await measure('slow-refresh', SLOW), { name: 'gate' })

  // origin: main holds the terms; the PR branch loosens them.
  origin = join(dir, 'origin.git')
  const author = join(dir, 'author')
  git(dir, 'init', '-q', '--bare', '-b', 'main', origin)
  git(dir, 'init', '-q', '-b', 'main', author)
  mkdirSync(join(author, 'baselines'))
  writeFileSync(join(author, 'servegate.yml'), stringify(BASE_CONFIG))
  writeFileSync(join(author, 'baselines/gate.json'), json(baseBaseline))
  git(author, 'add', '.')
  git(author, 'commit', '-q', '-m', 'gate terms')
  baseSha = git(author, 'rev-parse', 'HEAD')
  git(author, 'remote', 'add', 'origin', origin)
  git(author, 'push', '-q', 'origin', 'main')
  git(author, 'checkout', '-q', '-b', 'loosen')
  writeFileSync(join(author, 'servegate.yml'), stringify(PR_CONFIG))
  writeFileSync(join(author, 'baselines/gate.json'), json(slowBaseline))
  git(author, 'commit', '-q', '-am', 'loosen the gate')
  headSha = git(author, 'rev-parse', 'HEAD')
  git(author, 'push', '-q', 'origin', 'loosen')
  git(author, 'checkout', '-q', '-b', 'itl300', 'main')
  writeFileSync(join(author, 'servegate.yml'), stringify(ITL_CONFIG))
  writeFileSync(join(author, 'baselines/gate.json'), json(slowBaseline))
  git(author, 'commit', '-q', '-am', 'ITL may be 300 % slower')
  itlSha = git(author, 'rev-parse', 'HEAD')
  git(author, 'push', '-q', 'origin', 'itl300')
}, 600_000)

afterAll(() => {
  if (dir) rmSync(dir, { recursive: true, force: true })
})

/** The runner's workspace for the loosening PR, as actions/checkout leaves it: one shallow commit, no base branch. */
function loosenCheckout(attempt: number): string {
  const checkout = join(dir, `ws-loosen-${attempt}`)
  git(dir, 'clone', '-q', '--depth', '1', '--branch', 'loosen', `file://${origin}`, checkout)
  return checkout
}

const writeFiles: ActionDeps['files'] = {
  exists: existsSync,
  writeText: async (p, t) => {
    mkdirSync(join(p, '..'), { recursive: true })
    writeFileSync(p, t)
  },
}

/** Real stages that keep every verdict the Action reached: the last is the one it published. */
function keepingVerdicts(stages: ActionStages): { stages: ActionStages; verdicts: Verdict[] } {
  const verdicts: Verdict[] = []
  return {
    verdicts,
    stages: {
      ...stages,
      compareToBaseline: (...args) => {
        const v = stages.compareToBaseline(...args)
        verdicts.push(v)
        return v
      },
      compareStarts: (...args) => {
        const v = stages.compareStarts(...args)
        verdicts.push(v)
        return v
      },
    },
  }
}

/**
 * Under `terms` (a config file's content) and `baseline`, the measurement does not fail the step,
 * unless the host spoiled it: then it is unmeasured there too, never a pass.
 */
function expectNotFailedUnder(terms: object, baseline: Baseline, measured: ResultFile): void {
  const v = realStages.compareToBaseline(baseline, measured, resolveConfig({ file: terms as never, filePath: null, flags: { sweep: 'gate' }, env: {} }))
  if (spoiledRows(v, baseline).length > 0) expect(v.verdict, v.reasons.join('\n')).toBe('unmeasured')
  else expect(gateExit(v.verdict, DEFAULT_FAIL_ON), v.reasons.join('\n')).toBe(0)
}

/** Run the Action in `checkout` with real git and files; what it recorded, the last verdict it reached and what it measured. */
async function runIn(checkout: string, made: ReturnType<typeof fakeDeps>, kept: ReturnType<typeof keepingVerdicts>) {
  const { deps, rec } = made
  deps.cwd = checkout
  deps.stages = kept.stages
  deps.git = execGit
  deps.files = writeFiles
  await run(deps)
  return { rec, checkout, verdict: kept.verdicts.at(-1)!, measured: await readResultFile(join(checkout, 'out/result.json')) }
}

/** One Action run on the loosening PR, in a fresh shallow checkout, against the 40 per cent slower simulator. */
async function gateLoosened(attempt: number) {
  const checkout = loosenCheckout(attempt)
  expect(existsSync(join(checkout, '.git/shallow'))).toBe(true)
  const sim = await startSim({ ...SIM, slowdown: SLOW })
  try {
    const made = fakeDeps({
      inputs: { config: 'servegate.yml', 'base-url': sim.url, out: 'out/result.json' },
      env: { GITHUB_SHA: headSha, GITHUB_RUN_ATTEMPT: '1' },
      payload: {
        pull_request: {
          number: 21,
          head: { repo: { full_name: 'acme/infer', fork: false }, sha: headSha, ref: 'loosen' },
          base: { repo: { full_name: 'acme/infer', fork: false }, sha: baseSha, ref: 'main' },
        },
      },
    })
    return await runIn(checkout, made, keepingVerdicts(realStages))
  } finally {
    await sim.close()
  }
}

/**
 * What the Action measured of the 40 % slower engine in case 1. Case 6's events judge that same
 * measurement (what differs between them is which terms judge it, not the engine); when case 1 did
 * not run, case 6's first event measures.
 */
let measuredOnce: ResultFile | null = null

describe('gate terms come from the base branch', () => {
  it('reports a regression and fails the step although the PR loosened the tolerance and rewrote the baseline', async () => {
    // A busy test host can spoil runs (client_saturated): that measurement is made again, at most
    // twice, as an operator would rerun the job. A row still spoiled has the verdict its measurement
    // allows (expectHonest: unmeasured, naming the cause), never a pass.
    let attempt = 0
    let out = await gateLoosened(attempt)
    while (++attempt < 3 && hostSpoiled(out.measured)) out = await gateLoosened(attempt)
    const { rec, checkout, verdict, measured } = out
    measuredOnce = measured

    expect(rec.errors).toEqual([])
    const v = expectHonest(verdict, 'regression', { baseline: baseBaseline })
    expect(rec.outputs.get('verdict')).toBe(v)
    expect(rec.failed).toHaveLength(1)
    expect(rec.failed[0]).toMatch(v === 'regression' ? /^servegate gate tripped: regression in / : /^servegate gate tripped: verdict unmeasured \(/)
    // The PR's versions differ: said in a titled warning and in the comment's banner.
    expect(rec.warningTitles).toContain("servegate: this pull request changes the gate's terms")
    const notice = rec.warnings.find((w) => w.includes('changes'))!
    expect(notice).toContain('gate.tolerance_pct')
    expect(notice).toContain('baselines/gate.json')
    expect(notice).toContain(`main (${baseSha.slice(0, 12)})`)
    expect(notice).toContain('the new terms apply once this pull request is merged')
    const comment = rec.comments.at(-1)!.body
    expect(comment).toContain(`${VERDICT_ICON[v]} servegate: ${v}`)
    expect(comment).toContain('the new terms apply once this pull request is merged')
    // The base commit was fetched into the shallow checkout; the checkout itself is untouched.
    expect(git(checkout, 'rev-parse', 'HEAD')).toBe(headSha)
    expect(git(checkout, 'status', '--porcelain', '--untracked-files=no')).toBe('')
    // The test is meaningful: under the PR's own terms the same measurement would not fail the step.
    expectNotFailedUnder(PR_CONFIG, slowBaseline, measured)
    expectHonest(compareToBaseline(baseBaseline, measured, {}), 'regression', { baseline: baseBaseline })
  }, 180_000)
})

/**
 * Case 6: the same loosened terms must fail on every event that gates, not only on
 * pull_request. The merge queue's branch and a branch a run by hand was started on hold the
 * PR's config and baseline; the terms still come from the queue's base or the default branch.
 */
const CASE6_EVENTS = [
  {
    eventName: 'pull_request',
    payload: () => ({
      pull_request: {
        number: 22,
        head: { repo: { full_name: 'acme/infer', fork: false }, sha: itlSha, ref: 'itl300' },
        base: { repo: { full_name: 'acme/infer', fork: false }, sha: baseSha, ref: 'main' },
      },
    }),
    base: () => `main (${baseSha.slice(0, 12)})`,
  },
  {
    eventName: 'merge_group',
    payload: () => ({
      merge_group: { head_sha: itlSha, head_ref: 'refs/heads/gh-readonly-queue/main/pr-22-abc', base_sha: baseSha, base_ref: 'refs/heads/main' },
    }),
    base: () => `main (${baseSha.slice(0, 12)})`,
  },
  {
    eventName: 'workflow_dispatch',
    payload: () => ({ repository: { full_name: 'acme/infer', default_branch: 'main' } }),
    base: () => 'main (refs/remotes/origin/main)',
  },
]

/**
 * One Action run on `event` in a fresh shallow checkout of the itl300 branch, against a 40 per cent
 * slower simulator; with `replay`, the sweep stage hands back that measurement instead of measuring
 * again (what differs between the events is which terms judge it, not the engine).
 */
async function runOn(event: (typeof CASE6_EVENTS)[number], attempt: number, replay: ResultFile | null = null) {
  const checkout = join(dir, `ws-${event.eventName}-${attempt}`)
  git(dir, 'clone', '-q', '--depth', '1', '--branch', 'itl300', `file://${origin}`, checkout)
  const sim = await startSim({ ...SIM, slowdown: SLOW })
  try {
    const made = fakeDeps({
      eventName: event.eventName,
      inputs: { config: 'servegate.yml', 'base-url': sim.url, out: 'out/result.json', comment: 'never' },
      env: { GITHUB_SHA: itlSha, GITHUB_RUN_ATTEMPT: '1' },
      payload: event.payload() as never,
    })
    return await runIn(
      checkout,
      made,
      keepingVerdicts(
        replay === null
          ? realStages
          : {
              ...realStages,
              runSweep: async (cfg) => {
                mkdirSync(join(cfg.out, '..'), { recursive: true })
                writeFileSync(cfg.out, JSON.stringify(replay))
                return { result: structuredClone(replay), resultPath: cfg.out }
              },
            },
      ),
    )
  } finally {
    await sim.close()
  }
}

describe.each(CASE6_EVENTS)("a PR's tolerance_pct: {itl: 300} against a 40 per cent slower engine, on $eventName", (event) => {
  it('is a regression that fails the step, judged by the base branch terms and baseline', async () => {
    // A busy test host can spoil runs (client_saturated): that measurement is made again, at most
    // twice, as an operator would rerun it. A row still spoiled has the verdict its measurement
    // allows (expectHonest: a regression the measured rows show, else unmeasured), never a pass.
    let attempt = 0
    let out = await runOn(event, attempt, measuredOnce)
    while (measuredOnce === null && ++attempt < 3 && hostSpoiled(out.measured)) out = await runOn(event, attempt)
    measuredOnce ??= out.measured
    const { rec, checkout, verdict, measured } = out

    expect(rec.errors).toEqual([])
    const v = expectHonest(verdict, 'regression', { baseline: baseBaseline })
    expect(rec.outputs.get('verdict'), rec.summary).toBe(v)
    expect(rec.failed).toHaveLength(1)
    expect(rec.failed[0]).toMatch(v === 'regression' ? /^servegate gate tripped: regression in / : /^servegate gate tripped: verdict unmeasured \(/)
    const notice = rec.warnings.find((w) => w.includes('gate.tolerance_pct'))!
    expect(notice).toContain('baselines/gate.json')
    expect(notice).toContain(`The gate used the versions on ${event.base()}`)
    // The checkout itself is left as it was: the terms were read with git show.
    expect(git(checkout, 'rev-parse', 'HEAD')).toBe(itlSha)
    // Meaningful: under the checkout's own terms and baseline the same measurement does not fail the step.
    expectNotFailedUnder(ITL_CONFIG, slowBaseline, measured)
  }, 400_000)
})

/**
 * Refusals through the Action with real git: an event that judges a change runs only the
 * judging modes, and the terms it is judged by cannot be chosen through the workflow's inputs or
 * paths. Each is refused before anything is measured (no sweep, no engine started), so these
 * runs take about a second each.
 */
describe("a change cannot choose its terms through the workflow's inputs or paths", () => {
  /** Real stages whose measuring steps record that they were reached (and measure nothing). */
  function unmeasured(): { stages: ActionStages; measured: string[] } {
    const measured: string[] = []
    return {
      measured,
      stages: {
        ...realStages,
        runSweep: async () => {
          measured.push('runSweep')
          throw new Error('a refused run measured')
        },
        runAB: async () => {
          measured.push('runAB')
          throw new Error('a refused run measured')
        },
      },
    }
  }

  /** A pull request from branch `head` (made from `baseRef` by one commit writing `files`) into `baseRef`, checked out shallow. */
  function pullRequest(head: string, files: Record<string, string>, baseRef = 'main') {
    const author = join(dir, `author-${head}`)
    git(dir, 'clone', '-q', '--branch', baseRef, `file://${origin}`, author)
    const base = git(author, 'rev-parse', 'HEAD')
    git(author, 'checkout', '-q', '-b', head)
    for (const [path, text] of Object.entries(files)) writeFileSync(join(author, path), text)
    git(author, 'add', '.')
    git(author, 'commit', '-q', '-m', head)
    const sha = git(author, 'rev-parse', 'HEAD')
    git(author, 'push', '-q', 'origin', head)
    const checkout = join(dir, `ws-${head}`)
    git(dir, 'clone', '-q', '--depth', '1', '--branch', head, `file://${origin}`, checkout)
    const payload = {
      pull_request: {
        number: 30,
        head: { repo: { full_name: 'acme/infer', fork: false }, sha, ref: head },
        base: { repo: { full_name: 'acme/infer', fork: false }, sha: base, ref: baseRef },
      },
      repository: { full_name: 'acme/infer', default_branch: 'main' },
    }
    return { checkout, payload, sha, base }
  }

  /** Run the Action once in `checkout` on `eventName` with real git; what it recorded and what it measured. */
  async function refusedRun(checkout: string, eventName: string, payload: object, inputs: Record<string, string>, env: Record<string, string> = {}) {
    const made = fakeDeps({ eventName, payload: payload as never, inputs: { config: 'servegate.yml', out: 'out/result.json', ...inputs }, env })
    const { stages, measured } = unmeasured()
    const gitCalls: string[][] = []
    made.deps.cwd = checkout
    made.deps.stages = stages
    made.deps.git = (args, cwd) => {
      gitCalls.push([...args])
      return execGit(args, cwd)
    }
    made.deps.files = writeFiles
    await run(made.deps)
    return { rec: made.rec, measured, gitCalls }
  }

  it.each(['full', 'refresh'])('refuses mode %s on a pull_request before anything is read or measured, naming the event and the mode', async (mode) => {
    const checkout = loosenCheckout(10 + mode.length)
    const payload = {
      pull_request: {
        number: 21,
        head: { repo: { full_name: 'acme/infer', fork: false }, sha: headSha, ref: 'loosen' },
        base: { repo: { full_name: 'acme/infer', fork: false }, sha: baseSha, ref: 'main' },
      },
    }
    const { rec, measured, gitCalls } = await refusedRun(checkout, 'pull_request', payload, { mode })
    expect(measured).toEqual([])
    expect(gitCalls).toEqual([])
    expect(rec.outputs.get('verdict')).toBe('refused')
    expect(rec.failed).toEqual([
      `servegate refuses mode ${mode} on this pull_request event (pull request #21): an event that judges a change runs only gate, check, ab, aggregate, which take their terms from the base branch; run mode ${mode} from the default branch (a push to it, a schedule, or a dispatch on it) and gate the change with mode gate.`,
    ])
    // Nothing was committed or written as a baseline.
    expect(git(checkout, 'rev-parse', 'HEAD')).toBe(headSha)
    expect(existsSync(join(checkout, 'out/result.json'))).toBe(false)
  })

  it('refuses mode watch on merge_group before anything is read or measured, naming the event and the mode', async () => {
    const checkout = join(dir, 'ws-queue-watch')
    git(dir, 'clone', '-q', '--depth', '1', '--branch', 'itl300', `file://${origin}`, checkout)
    const payload = CASE6_EVENTS.find((e) => e.eventName === 'merge_group')!.payload()
    const { rec, measured, gitCalls } = await refusedRun(checkout, 'merge_group', payload, { mode: 'watch' })
    expect(measured).toEqual([])
    expect(gitCalls).toEqual([])
    expect(rec.failed).toHaveLength(1)
    expect(rec.failed[0]).toMatch(
      /^servegate refuses mode watch on this merge_group event \(the merge queue's branch gh-readonly-queue\/main\/pr-22-abc\): an event that judges a change runs only gate, check, ab, aggregate, /,
    )
    expect(rec.issueCalls).toEqual([])
  })

  it('refuses a config path the base branch lacks, which would otherwise drop every base term and let fail-on: never win', async () => {
    // The PR's own config, loose and new; the base pins nothing at that path because it has no such file.
    const pr = pullRequest('own-config', { 'servegate-pr.yml': stringify({ ...PR_CONFIG, gate: { ...PR_CONFIG.gate, fail_on: 'never' } }) })
    const { rec, measured } = await refusedRun(pr.checkout, 'pull_request', pr.payload, { config: 'servegate-pr.yml', 'fail-on': 'never' })
    expect(measured).toEqual([])
    expect(rec.outputs.get('verdict')).toBe('error')
    expect(rec.failed).toEqual([
      `servegate could not run: the config servegate-pr.yml does not exist on main (${pr.base.slice(0, 12)}): the terms a change is judged by come from the base branch's copy, and servegate will not judge by the checkout's alone. (Merge the config into the base branch first, or point the input config at a file the base branch holds.)`,
    ])
  })

  it("refuses a reference-serve other than the base's gate.reference_command, naming both, before either engine starts", async () => {
    const reference = 'servegate sim --port {port} --itl-ms 20'
    const withReference = pullRequest('with-reference', {
      'servegate.yml': stringify({ ...BASE_CONFIG, gate: { ...BASE_CONFIG.gate, reference_command: reference } }),
    })
    // The base of the next pull request: main with a reference engine.
    const mine = 'servegate sim --port {port} --itl-ms 28'
    const pr = pullRequest('own-reference', { 'serving.txt': 'the PR engine\n' }, 'with-reference')
    const { rec, measured } = await refusedRun(pr.checkout, 'pull_request', pr.payload, { 'reference-serve': mine, serve: mine })
    expect(withReference.sha).toBe(pr.base)
    expect(measured).toEqual([])
    expect(rec.outputs.get('verdict')).toBe('error')
    expect(rec.failed).toHaveLength(1)
    expect(rec.failed[0]).toBe(
      `servegate could not run: the input reference-serve "${mine}" differs from gate.reference_command "${reference}" in servegate.yml on with-reference (${pr.base.slice(0, 12)}): the base branch's config decides this term, and an input may only repeat it (Remove the input from the workflow, or give it the value on with-reference; a change to a term applies once it is merged into with-reference's config.)`,
    )
  })

  it("accepts a matrix job's inputs against a base that pins no fail_on: fail-on: never, its label, and its baseline on the base", async () => {
    const pr = pullRequest('matrix-job', { 'serving.txt': 'engine b\n' })
    const inputs = { mode: 'check', label: 'gate', 'fail-on': 'never', baseline: 'baselines/gate.json', comment: 'never' }
    const { rec, measured } = await refusedRun(pr.checkout, 'pull_request', pr.payload, inputs)
    expect(measured).toEqual([])
    expect(rec.failed).toEqual([])
    expect(rec.outputs.get('verdict')).toBe('checked')
    expect(rec.summary).toContain(`Terms and baseline baselines/gate.json read from main (${pr.base.slice(0, 12)}).`)
  })

  it('refuses a baseline input naming a file the base branch lacks, though the checkout has it', async () => {
    const pr = pullRequest('own-baseline', { 'baselines/h100.json': json(slowBaseline) })
    const { rec, measured } = await refusedRun(pr.checkout, 'pull_request', pr.payload, { baseline: 'baselines/h100.json' })
    expect(measured).toEqual([])
    expect(rec.failed).toEqual([
      `servegate could not run: the input baseline "baselines/h100.json" names a file that does not exist on main (${pr.base.slice(0, 12)}): a change is judged against a baseline the base branch holds. (Record it on main first (mode: refresh there, with the same baseline input), or leave the input empty.)`,
    ])
  })

  it('refuses server.api_key_env: ACTIONS_RUNTIME_TOKEN before any request is sent', async () => {
    const pr = pullRequest('runtime-key', { 'servegate.yml': stringify({ ...BASE_CONFIG, server: { api_key_env: 'ACTIONS_RUNTIME_TOKEN' } }) })
    const { rec, measured } = await refusedRun(pr.checkout, 'pull_request', pr.payload, {}, { ACTIONS_RUNTIME_TOKEN: 'runtime-token-0123456789' })
    expect(measured).toEqual([])
    expect(rec.failed).toHaveLength(1)
    expect(rec.failed[0]).toContain(
      "server.api_key_env: expected a variable that holds the server's API key; ACTIONS_RUNTIME_TOKEN is the runner's (ACTIONS_* values are never sent to a server)",
    )
    // Masked in the log, and in nothing the run published.
    const { secrets, ...published } = rec
    expect(secrets).toContain('runtime-token-0123456789')
    expect(JSON.stringify(published)).not.toContain('runtime-token-0123456789')
  })
})
