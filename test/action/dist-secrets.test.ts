/**
 * Acceptance: the bundled Action (dist/index.js, run as GitHub runs it) never
 * writes a credential anywhere it can be read. The serve-command input carries
 * two (`--api-key …`, `HF_TOKEN=…`) and the config names an API key variable
 * whose value has no well-known token shape (so only servegate knowing it can
 * hide it). After a refresh (push) and a gate run (pull request) none of them
 * appears in what GitHub's API received, the job summary, GITHUB_OUTPUT, the
 * result files and reports, the committed baseline and the commits (message and
 * contents), or the log — except in the `::add-mask::` lines that register them
 * with the runner. The server is the simulator, which accepts any key.
 * A third run starts the server itself with a serve command that dumps its
 * environment: it sees the allow-list and what server.env names, never a token.
 * Skipped only when dist/index.js is absent (run `npm run bundle` first).
 */
import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { allowedByDefault } from '../../src/config/child-env.js'
import { startSim, type SimHandle } from '../../src/sim/index.js'
import {
  DIST,
  ROOT,
  createActionWorkspace,
  git,
  hostSpoiledEveryRun,
  pullRequestCheckout,
  pushEvent,
  type ActionWorkspace,
  type StepRun,
} from './dist-harness.js'

const SERVE_KEY = 'sk-live-abcdefghijklmnop12345'
const HF_TOKEN = 'hf_abcdefghijklmnopqrstu'
// Named neither like a token (…_TOKEN, …_KEY) nor shaped like one (sk-, hf_): redacted only because it is the API key.
const API_KEY_ENV = 'INFER_SERVER_AUTH'
const API_KEY = 'opaque-7c1e9b2d4f6a8e0c31'
const SECRETS = [SERVE_KEY, HF_TOKEN, API_KEY]
const SERVE_COMMAND = `vllm serve m --api-key ${SERVE_KEY} -e HF_TOKEN=${HF_TOKEN}`

// Where the secrets go does not depend on the sweep's size: one point and two repeats (24 requests
// and 168 inter-token gaps a run, above the validity floors) make each step's sweep a couple of seconds.
const SWEEP = `target: {metric: tpot, percentile: 95, threshold_ms: 50}
sweeps:
  gate:
    shapes: [{input_len: 32, output_len: 8}]
    concurrency: [4]
    prompts_per_concurrency: 6
    warmup: 2
    repeats: 2
`
const CONFIG = `server: {api_key_env: ${API_KEY_ENV}}\n${SWEEP}`

let ws: ActionWorkspace
let sim: SimHandle

/** The secrets that occur in `text`, with where they were found. */
function leaks(where: string, text: string): string[] {
  return SECRETS.filter((s) => text.includes(s)).map((s) => `${s} in ${where}`)
}

/** The log without the lines that register the secrets with the runner (the runner masks them from then on). */
const logWithoutMasks = (r: StepRun) =>
  r.stdout
    .split('\n')
    .filter((l) => !l.startsWith('::add-mask::'))
    .join('\n')

/** Every place a step's run leaves text behind, checked for the secrets. */
function stepLeaks(name: string, r: StepRun): string[] {
  const files = [r.outputs['result-path'], r.outputs['report-path'], r.outputs['record-path']].filter((p): p is string => p !== undefined && existsSync(p))
  return [
    ...leaks(`${name}: job summary`, r.summary),
    ...leaks(`${name}: GITHUB_OUTPUT`, r.outputText),
    ...leaks(`${name}: log`, logWithoutMasks(r)),
    ...files.flatMap((p) => leaks(`${name}: ${p}`, readFileSync(p, 'utf8'))),
  ]
}

describe.skipIf(!existsSync(DIST))('dist/index.js keeps the run’s secrets out of everything it writes', () => {
  beforeAll(async () => {
    ws = await createActionWorkspace({ prefix: 'servegate-secrets-', files: { 'servegate.yml': CONFIG, 'serving/engine.txt': 'v1\n' } })
    sim = await startSim({ ttftMs: 10, itlMs: 10 })
  })

  afterAll(async () => {
    // SERVEGATE_KEEP_TMP=1 keeps the workspace, summaries and outputs for a look.
    await Promise.all([ws?.close(), sim?.close()])
  })

  let refresh: StepRun
  it('refresh mode: the committed baseline, the commit and every output are free of the secrets', async () => {
    const run = () => ws.step({ mode: 'refresh', 'base-url': sim.url, 'serve-command': SERVE_COMMAND }, pushEvent, { env: { [API_KEY_ENV]: API_KEY } })
    refresh = await run()
    // A refresh needs a valid run: one whose every run this shared host spoiled (client_saturated)
    // fails before it commits anything, and only that one is run again, at most twice.
    for (let retry = 0; retry < 2 && hostSpoiledEveryRun(refresh, join(ws.repo, 'servegate-result.json')); retry++) refresh = await run()
    expect(refresh.code, refresh.stdout).toBe(0)
    expect(refresh.outputs['verdict']).toBe('refreshed')
    // Each secret is registered with the runner before anything else is logged.
    for (const s of SECRETS) expect(refresh.stdout).toContain(`::add-mask::${s}`)
    // The serve command is recorded (it says how the server was started), with its credentials redacted.
    const result = JSON.parse(readFileSync(refresh.outputs['result-path']!, 'utf8')) as { env: { serve_command: string } }
    expect(result.env.serve_command).toBe('vllm serve m --api-key *** -e HF_TOKEN=***')

    const pushed = git(ws.remote, 'show', 'main:baselines/gate.json')
    expect(pushed).toContain('vllm serve m --api-key')
    // Every commit on the remote: author, message and full diff.
    const history = git(ws.remote, 'log', '--all', '-p', '--format=%an <%ae>%n%B')
    expect(history).toContain('servegate: refresh baseline baselines/gate.json')
    expect([
      ...stepLeaks('refresh', refresh),
      ...leaks('baseline file in the checkout', readFileSync(join(ws.repo, 'baselines/gate.json'), 'utf8')),
      ...leaks('baseline file on origin/main', pushed),
      ...leaks('git history', history),
      ...leaks('GitHub API requests', JSON.stringify(ws.gh.calls)),
    ]).toEqual([])
  }, 120_000)

  it('gate mode on a pull request: the comment, the API requests and every output are free of the secrets', async () => {
    expect(refresh?.code).toBe(0)
    const pr = pullRequestCheckout(ws, 'tune', { 'serving/engine.txt': 'v2\n' }, 'serving: tune the engine')
    // Whatever the verdict: only where the text goes is checked here, so the step reports and never fails.
    const r = await ws.step({ mode: 'gate', 'base-url': sim.url, 'serve-command': SERVE_COMMAND, 'fail-on': 'never' }, pr.event, {
      cwd: pr.checkout,
      env: { [API_KEY_ENV]: API_KEY, GITHUB_SHA: pr.headSha, GITHUB_REF: 'refs/pull/7/merge' },
    })
    expect(r.code, r.stdout).toBe(0)
    expect(['pass', 'improvement', 'undecided', 'unmeasured', 'regression']).toContain(r.outputs['verdict'])
    // The verdict record a matrix's aggregate reads carries the serve command too, redacted.
    expect(JSON.parse(readFileSync(r.outputs['record-path']!, 'utf8'))).toMatchObject({ env: { serve_command: 'vllm serve m --api-key *** -e HF_TOKEN=***' } })
    for (const s of SECRETS) expect(r.stdout).toContain(`::add-mask::${s}`)
    // The comment was created ("running") and then edited (the verdict): both bodies went through the API.
    expect(ws.gh.calls.filter((c) => c.method === 'POST')).toHaveLength(1)
    expect(ws.gh.calls.filter((c) => c.method === 'PATCH').length).toBeGreaterThanOrEqual(1)
    const comment = ws.gh.comments.find((c) => c.user.login === 'github-actions[bot]')!
    expect(comment.body).toContain('servegate')
    expect([
      ...stepLeaks('gate', r),
      ...leaks('GitHub API requests', JSON.stringify(ws.gh.calls)),
      ...leaks('the pull-request comment', comment.body),
      ...leaks('git history', git(ws.remote, 'log', '--all', '-p', '--format=%an <%ae>%n%B')),
    ]).toEqual([])
  }, 120_000)
})

// The job's tokens as a runner holds them, and one engine secret the config passes on purpose.
const JOB_SECRETS = {
  GITHUB_TOKEN: 'ghs_jobtoken0123456789abcdefghijABCD',
  ACTIONS_RUNTIME_TOKEN: 'runtime-token-0123456789abcdef',
  ACTIONS_ID_TOKEN_REQUEST_TOKEN: 'oidc-request-0123456789abcdef',
  OPENAI_API_KEY: 'sk-job-0123456789abcdefghij',
  VLLM_API_KEY: 'vllm-job-key-0123456789',
  MY_DEPLOY_PASSWORD: 'deploy-password-0123456789',
}
const ENGINE_HF_TOKEN = 'hf_enginetoken0123456789AB'
// The simulator from the committed CLI bundle: ready in about a second, where tsx compiles the sources first.
const CLI_BUNDLE = join(ROOT, 'dist', 'cli.js')
const SIM = `${process.execPath} ${join(ROOT, 'bin', 'servegate.js')} sim --port {port} --ttft-ms 10 --itl-ms 10`

describe.skipIf(!existsSync(DIST) || !existsSync(CLI_BUNDLE))('dist/index.js starts the engine with the allow-listed environment only', () => {
  let envWs: ActionWorkspace
  beforeAll(async () => {
    // server.env on main passes HF_TOKEN: the one way an engine secret reaches the engine.
    envWs = await createActionWorkspace({
      prefix: 'servegate-childenv-',
      files: { 'servegate.yml': `server: {api_key_env: ${API_KEY_ENV}, env: [HF_TOKEN]}\n${SWEEP}` },
    })
  })
  afterAll(async () => envWs?.close())

  it('a serve command that runs env sees no token and no variable the allow-list does not name, and nothing leaks', async () => {
    const dump = join(envWs.dir, 'engine.env')
    const serve = `env > ${dump}; echo "engine sees $HF_TOKEN"; exec ${SIM}`
    const run = () =>
      envWs.step({ mode: 'full', serve, 'serve-command': '' }, pushEvent, {
        env: { ...JOB_SECRETS, HF_TOKEN: ENGINE_HF_TOKEN, [API_KEY_ENV]: API_KEY },
      })
    let r = await run()
    // A busy host can make every run's client saturate, and a sweep with no valid run fails the
    // step. Only that outcome is run again, at most twice: what this test checks is the engine's
    // environment and where its output goes, which a retry cannot hide.
    for (let retry = 0; retry < 2 && hostSpoiledEveryRun(r, join(envWs.repo, 'servegate-result.json')); retry++) r = await run()
    expect(r.code, r.stdout).toBe(0)
    const text = readFileSync(dump, 'utf8')
    const names = text
      .trim()
      .split('\n')
      .map((l) => l.slice(0, l.indexOf('=')))
    // What sh sets itself beside what servegate passed.
    const shell = new Set(['PWD', 'SHLVL', '_', 'OLDPWD'])
    expect(names.filter((n) => !allowedByDefault(n) && n !== 'HF_TOKEN' && !shell.has(n))).toEqual([])
    expect(names).toContain('PATH')
    expect(names).toContain('HF_TOKEN')
    const tokens = [...Object.values(JOB_SECRETS), API_KEY, 'ghs_faketoken']
    expect(tokens.filter((t) => text.includes(t))).toEqual([])
    // The engine echoed its HF token: the server log hides it like every other output.
    const serverLog = r.outputs['result-path']!.replace(/\.json$/, '.server.log')
    const everything = [
      r.summary,
      r.outputText,
      r.stdout
        .split('\n')
        .filter((l) => !l.startsWith('::add-mask::'))
        .join('\n'),
      readFileSync(serverLog, 'utf8'),
      readFileSync(r.outputs['result-path']!, 'utf8'),
    ]
    expect(readFileSync(serverLog, 'utf8')).toContain('engine sees ***')
    expect([...tokens, ENGINE_HF_TOKEN].filter((t) => everything.some((e) => e.includes(t)))).toEqual([])
  }, 120_000)
})
