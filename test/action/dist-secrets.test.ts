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
 * A third run, a gate on a pull request, starts the PR's engine with a serve
 * command that dumps its environment and walks every readable /proc/<pid>/environ
 * and cmdline, printing each value plain, reversed and in base64: it sees the
 * allow-list and what server.env names, never a token of the job, and nothing
 * it prints carries one into any file, comment or log. Where this host cannot
 * give the command a PID namespace of its own, the run must be refused instead.
 * Skipped only when dist/index.js is absent (run `npm run bundle` first).
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { allowedByDefault } from '../../src/config/child-env.js'
import { probeNamespaces } from '../../src/serve/isolation.js'
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
// A run a busy host spoiled is measured again in place (host_retries), not the whole step.
const SWEEP = `target: {metric: tpot, percentile: 95, threshold_ms: 50}
sweeps:
  gate:
    shapes: [{input_len: 32, output_len: 8}]
    concurrency: [4]
    prompts_per_concurrency: 6
    warmup: 2
    repeats: 2
    host_retries: 2
`
// server.env passes HF_TOKEN: the one way an engine secret reaches the engine.
const CONFIG = `server: {api_key_env: ${API_KEY_ENV}, env: [HF_TOKEN]}\n${SWEEP}`

// The job's tokens as a runner holds them, and one engine secret the config passes on purpose.
const INPUT_TOKEN = 'ghs_inputtoken0123456789abcdefABCDEFGH'
const JOB_SECRETS = {
  GITHUB_TOKEN: 'ghs_jobtoken0123456789abcdefghijABCD',
  ACTIONS_RUNTIME_TOKEN: 'runtime-token-0123456789abcdef',
  ACTIONS_ID_TOKEN_REQUEST_TOKEN: 'oidc-request-0123456789abcdef',
  OPENAI_API_KEY: 'sk-job-0123456789abcdefghij',
  VLLM_API_KEY: 'vllm-job-key-0123456789',
  MY_DEPLOY_PASSWORD: 'deploy-password-0123456789',
  // An env: secret of the step whose name says nothing.
  DEPLOY_HOOK: 'opaque-hook-value-0123456789',
}
const ENGINE_HF_TOKEN = 'hf_enginetoken0123456789AB'
// The simulator from the committed CLI bundle: ready in about a second, where tsx compiles the sources first.
const SIM = `${process.execPath} ${join(ROOT, 'bin', 'servegate.js')} sim --port {port} --ttft-ms 10 --itl-ms 10`

let ws: ActionWorkspace
let sim: SimHandle

/** A token as the PR's engine would print it to slip past redaction by value: plain, reversed, base64. */
const forms = (t: string): string[] => [t, [...t].reverse().join(''), Buffer.from(t).toString('base64')]

/** Every file under `dir` but git's own, with its text. */
function filesUnder(dir: string): Array<{ path: string; text: string }> {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name)
    if (name === '.git' || name.endsWith('.git')) return []
    return statSync(path).isDirectory() ? filesUnder(path) : [{ path, text: readFileSync(path, 'utf8') }]
  })
}

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

  it('gate mode on a pull request whose engine walks /proc: it finds no token, sees only the allow-list, and nothing it prints leaks', async () => {
    expect(refresh?.code).toBe(0)
    const probe = await probeNamespaces()
    const pr = pullRequestCheckout(ws, 'walk', { 'serving/engine.txt': 'v3\n' }, 'serving: an engine that looks around')
    const dump = join(ws.dir, 'engine.env')
    const walk = join(ws.dir, 'engine.proc')
    // Every value it can read, printed as an engine that wants a token past redaction would print it.
    const serve =
      `env > ${dump}; for f in /proc/[0-9]*/environ /proc/[0-9]*/cmdline; do tr '\\0' '\\n' < $f; echo; done > ${walk} 2>/dev/null; ` +
      `while IFS= read -r l; do v="\${l#*=}"; echo "$v"; printf %s "$v" | rev; echo; printf %s "$v" | base64 -w0; echo; done < ${walk}; ` +
      `echo "engine sees $HF_TOKEN"; exec ${SIM}`
    const r = await ws.step({ mode: 'gate', serve, 'serve-command': '', 'fail-on': 'never', 'github-token': INPUT_TOKEN }, pr.event, {
      cwd: pr.checkout,
      env: { ...JOB_SECRETS, HF_TOKEN: ENGINE_HF_TOKEN, [API_KEY_ENV]: API_KEY, GITHUB_SHA: pr.headSha, GITHUB_REF: 'refs/pull/7/merge' },
    })
    if (!probe.ok) {
      // A runner that cannot isolate the PR's engine never starts it on a pull request.
      expect(r.code, r.stdout).toBe(1)
      expect(r.stdout).toContain(
        `servegate could not run: servegate refuses to start the commands of a pull_request run without a PID namespace of their own: this runner cannot make one (${probe.reason})`,
      )
      expect(existsSync(walk)).toBe(false)
      return
    }
    expect(r.code, r.stdout).toBe(0)
    expect(r.stdout).toMatch(/Starting the server \(pid \d+, its own process group\) in a PID namespace of its own at /)

    // The walk read the processes it could see (PID 1 is servegate's supervisor) and found no token there.
    const walked = readFileSync(walk, 'utf8')
    expect(walked).toContain('servegate-supervisor')
    const tokens = [...Object.values(JOB_SECRETS), INPUT_TOKEN, API_KEY, 'ghs_faketoken']
    expect(tokens.filter((t) => walked.includes(t))).toEqual([])

    // Its own environment: the allow-list and what server.env names, beside what sh sets itself.
    const names = readFileSync(dump, 'utf8')
      .trim()
      .split('\n')
      .map((l) => l.slice(0, l.indexOf('=')))
    const shell = new Set(['PWD', 'SHLVL', '_', 'OLDPWD'])
    expect(names.filter((n) => !allowedByDefault(n) && n !== 'HF_TOKEN' && !shell.has(n))).toEqual([])
    expect(names).toContain('PATH')
    expect(names).toContain('HF_TOKEN')

    // Nothing it printed carries a token of the job, in any form, into anything the Action wrote or sent.
    const serverLog = r.outputs['result-path']!.replace(/\.json$/, '.server.log')
    const comment = ws.gh.comments.find((c) => c.user.login === 'github-actions[bot]')!
    const sent = JSON.stringify(ws.gh.calls.map((c) => ({ ...c, authorization: undefined })))
    const places = [
      { path: 'job summary', text: r.summary },
      { path: 'GITHUB_OUTPUT', text: r.outputText },
      { path: 'log', text: logWithoutMasks(r) },
      { path: 'GitHub API requests', text: sent },
      { path: 'the pull-request comment', text: comment.body },
      ...filesUnder(ws.dir),
    ]
    expect(places.some((p) => p.path === serverLog)).toBe(true)
    const found = tokens.flatMap(forms).flatMap((f) => places.filter((p) => p.text.includes(f)).map((p) => `${f} in ${p.path}`))
    expect(found).toEqual([])
    // The engine's own secret is redacted wherever servegate writes what the engine printed.
    expect(readFileSync(serverLog, 'utf8')).toContain('engine sees ***')
    const written = [
      r.summary,
      r.outputText,
      logWithoutMasks(r),
      sent,
      comment.body,
      readFileSync(serverLog, 'utf8'),
      readFileSync(r.outputs['result-path']!, 'utf8'),
    ]
    expect(written.filter((t) => t.includes(ENGINE_HF_TOKEN))).toEqual([])
  }, 120_000)
})
