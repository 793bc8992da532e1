/**
 * Runs the bundled dist/index.js the way GitHub runs a node24 action: inputs as
 * INPUT_* variables (defaults taken from action.yml), the event in
 * GITHUB_EVENT_PATH, files for the step summary and outputs, and GITHUB_API_URL
 * pointing at a stand-in for GitHub's REST API. Shared by the dist acceptance
 * tests; each builds its own workspace (a git checkout with a bare origin).
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { parse as parseYaml } from 'yaml'
import { HOST_CODES } from '../fixtures/honest-verdict.js'
import { startFakeGitHub, type FakeGitHub } from '../github/fake-github.js'

export const ROOT = fileURLToPath(new URL('../..', import.meta.url))
// SERVEGATE_DIST_INDEX points the tests at another build of the entry (e.g. a scratch bundle).
export const DIST = process.env['SERVEGATE_DIST_INDEX'] ?? join(ROOT, 'dist/index.js')
export const MARKER = '<!-- servegate:gate -->'

export interface StepRun {
  code: number
  /** The signal that ended the process, when one did. */
  signal: NodeJS.Signals | null
  /** stdout and stderr, interleaved as they arrived. */
  stdout: string
  outputs: Record<string, string>
  summary: string
  /** What GITHUB_OUTPUT held, unparsed. */
  outputText: string
}

export interface Event {
  name: string
  payload: unknown
}

export const cleanEnv = (): Record<string, string> => {
  const env: Record<string, string> = {}
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined && !k.startsWith('INPUT_') && !k.startsWith('GITHUB_')) env[k] = v
  return { ...env, GIT_CONFIG_GLOBAL: '/dev/null', GIT_CONFIG_SYSTEM: '/dev/null', GIT_TERMINAL_PROMPT: '0' }
}
export const git = (cwd: string, ...args: string[]) => execFileSync('git', args, { cwd, encoding: 'utf8', env: cleanEnv() }).trim()
/** git as a developer (commits need an identity; the runner's bot identity is servegate's own business). */
export const devGit = (cwd: string, ...args: string[]) => git(cwd, '-c', 'user.name=dev', '-c', 'user.email=dev@example.com', ...args)

/** Every input's default from action.yml, as GitHub passes them (INPUT_ + upper case, dashes kept). */
export function defaultInputs(): Record<string, string> {
  const action = parseYaml(readFileSync(join(ROOT, 'action.yml'), 'utf8')) as { inputs: Record<string, { default?: string }> }
  const env: Record<string, string> = {}
  for (const [name, spec] of Object.entries(action.inputs)) env[`INPUT_${name.toUpperCase()}`] = spec.default ?? ''
  return env
}

/** Parse GITHUB_OUTPUT's `name<<DELIM … DELIM` blocks (and plain name=value lines). */
export function parseOutputs(text: string): Record<string, string> {
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

const REPOSITORY = { full_name: 'acme/infer', name: 'infer', owner: { login: 'acme' }, default_branch: 'main' }

/** Where a pull request merges into: the event names its branch and commit (as GitHub's does). */
export interface PrBase {
  ref: string
  sha: string
}

/**
 * A pull_request event for PR #7. `base` adds the base branch and commit, so the
 * Action reads the gate's terms from there; without it the checkout's are used.
 */
export const prEvent = (fork = false, opts: { headSha?: string; headRef?: string; base?: PrBase } = {}): Event => ({
  name: 'pull_request',
  payload: {
    pull_request: {
      number: 7,
      head: {
        sha: opts.headSha ?? 'f00df00d',
        ...(opts.headRef ? { ref: opts.headRef } : {}),
        repo: { full_name: fork ? 'mallory/infer' : 'acme/infer', fork },
      },
      base: { ...(opts.base ? { ref: opts.base.ref, sha: opts.base.sha } : {}), repo: { full_name: 'acme/infer', fork: false } },
    },
    repository: REPOSITORY,
  },
})
/** A push to the default branch: it judges no change, so every mode runs on it. */
export const pushEvent: Event = { name: 'push', payload: { ref: 'refs/heads/main', repository: REPOSITORY } }

export interface StepOptions {
  /** Extra (or overriding) environment variables of the step. */
  env?: Record<string, string>
  /** The checkout the step runs in (default: the workspace's repo). */
  cwd?: string
  /** Called once the process is spawned (e.g. to cancel it mid-sweep). */
  onSpawn?: (child: ChildProcess) => void
}

export interface ActionWorkspace {
  /** The temporary folder holding everything below. */
  dir: string
  /** The runner's checkout of main (working-directory of the steps). */
  repo: string
  /** The bare repository the checkout pushes to (origin). */
  remote: string
  gh: FakeGitHub
  /** Run dist/index.js once as a workflow step would. */
  step(inputs: Record<string, string>, event: Event, opts?: StepOptions): Promise<StepRun>
  /** Stop the fake API and remove the folder (SERVEGATE_KEEP_TMP=1 keeps it for a look). */
  close(): Promise<void>
}

/**
 * A git checkout of main (holding `files` and a .gitignore for the result files),
 * pushed to a bare origin, and a fake GitHub API; steps run dist/index.js in it.
 */
export async function createActionWorkspace(opts: { prefix: string; files: Record<string, string>; maxPerPage?: number }): Promise<ActionWorkspace> {
  const dir = mkdtempSync(join(tmpdir(), opts.prefix))
  const repo = join(dir, 'repo')
  const remote = join(dir, 'remote.git')
  git(dir, 'init', '-q', '--bare', '-b', 'main', remote)
  git(dir, 'init', '-q', '-b', 'main', repo)
  for (const [path, text] of Object.entries({ '.gitignore': 'servegate-result*\n', ...opts.files })) {
    mkdirSync(dirname(join(repo, path)), { recursive: true })
    writeFileSync(join(repo, path), text)
  }
  git(repo, 'add', '.')
  devGit(repo, 'commit', '-q', '-m', 'config')
  git(repo, 'remote', 'add', 'origin', remote)
  git(repo, 'push', '-q', 'origin', 'main')
  const gh = await startFakeGitHub(opts.maxPerPage === undefined ? {} : { maxPerPage: opts.maxPerPage })

  let runNo = 0
  async function step(inputs: Record<string, string>, event: Event, stepOpts: StepOptions = {}): Promise<StepRun> {
    runNo++
    const cwd = stepOpts.cwd ?? repo
    const files = { event: join(dir, `event-${runNo}.json`), output: join(dir, `output-${runNo}`), summary: join(dir, `summary-${runNo}.md`) }
    writeFileSync(files.event, JSON.stringify(event.payload))
    writeFileSync(files.output, '')
    writeFileSync(files.summary, '')
    const env: Record<string, string> = {
      ...cleanEnv(),
      ...defaultInputs(),
      'INPUT_GITHUB-TOKEN': 'ghs_faketoken',
      'INPUT_WORKING-DIRECTORY': cwd,
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
      GITHUB_WORKSPACE: cwd,
      RUNNER_ENVIRONMENT: 'self-hosted',
      ...stepOpts.env,
    }
    const child = spawn(process.execPath, [DIST], { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] })
    let stdout = ''
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()))
    child.stderr.on('data', (d: Buffer) => (stdout += d.toString()))
    const ended = new Promise<{ code: number; signal: NodeJS.Signals | null }>((res) => child.on('close', (c, s) => res({ code: c ?? -1, signal: s })))
    stepOpts.onSpawn?.(child)
    const { code, signal } = await ended
    const outputText = readFileSync(files.output, 'utf8')
    return { code, signal, stdout, outputs: parseOutputs(outputText), summary: readFileSync(files.summary, 'utf8'), outputText }
  }

  return {
    dir,
    repo,
    remote,
    gh,
    step,
    close: async () => {
      await gh.close()
      if (!process.env['SERVEGATE_KEEP_TMP']) rmSync(dir, { recursive: true, force: true })
    },
  }
}

/**
 * Whether a step failed because this host spoiled every run of its sweep: no run was valid, and
 * each carries a host code (client_saturated, …). On a shared host such a step (a refresh, which
 * needs a valid run, or a sweep with none) is worth running again; any other failure is not.
 * `resultPath` is where the step's sweep wrote its result (servegate-result.json in the checkout unless `out` says otherwise).
 */
export function hostSpoiledEveryRun(r: StepRun, resultPath: string): boolean {
  if (r.code === 0 || !/the result has no valid runs|no run of the sweep is valid/.test(r.stdout) || !existsSync(resultPath)) return false
  const result = JSON.parse(readFileSync(resultPath, 'utf8')) as { points: Array<{ runs: Array<{ validity: { issues: Array<{ code: string }> } }> }> }
  const runs = result.points.flatMap((p) => p.runs)
  return runs.length > 0 && runs.every((x) => x.validity.issues.some((i) => (HOST_CODES as readonly string[]).includes(i.code)))
}

/**
 * The checkout actions/checkout leaves for a pull request: branch `branch` of
 * the workspace's origin, made from main by one commit that writes `files`, and
 * cloned shallow (one commit, no base branch), so the Action must fetch the base
 * to read the gate's terms. Returns the checkout and the event naming its base.
 */
export function pullRequestCheckout(
  ws: ActionWorkspace,
  branch: string,
  files: Record<string, string>,
  message: string,
): { checkout: string; event: Event; headSha: string } {
  const author = join(ws.dir, `author-${branch}`)
  git(ws.dir, 'clone', '-q', '--branch', 'main', `file://${ws.remote}`, author)
  const baseSha = git(author, 'rev-parse', 'HEAD')
  git(author, 'checkout', '-q', '-b', branch)
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(author, path)), { recursive: true })
    writeFileSync(join(author, path), text)
  }
  git(author, 'add', '.')
  devGit(author, 'commit', '-q', '-m', message)
  const headSha = git(author, 'rev-parse', 'HEAD')
  git(author, 'push', '-q', 'origin', branch)
  const checkout = join(ws.dir, `pr-${branch}`)
  git(ws.dir, 'clone', '-q', '--depth', '1', '--branch', branch, `file://${ws.remote}`, checkout)
  return { checkout, headSha, event: prEvent(false, { headSha, headRef: branch, base: { ref: 'main', sha: baseSha } }) }
}

/**
 * A tiny deterministic gate sweep: 10 requests per point is the validity floor; 2 repeats keep a
 * step under a minute. A run this shared host spoils is measured again in place (host_retries),
 * a run rather than the whole step.
 */
export const TINY_GATE_CONFIG = `target: {metric: tpot, percentile: 95, threshold_ms: 50}
sweeps:
  gate:
    shapes: [{input_len: 32, output_len: 12}]
    concurrency: [1, 2]
    prompts_per_concurrency: 10
    warmup: 2
    repeats: 2
    host_retries: 2
`

/**
 * The tiny gated sweep the A/B tests run in every slot: deterministic simulators keep the
 * slots short, 15 requests per point (enough gaps for ITL p99) after 2 of warmup. A run this
 * shared host spoils is measured again in its slot (host_retries), not the whole job.
 */
export const AB_TEST_CONFIG = `target: {metric: tpot, percentile: 95, threshold_ms: 50}
sweeps:
  gate:
    shapes: [{input_len: 32, output_len: 8}]
    concurrency: [1, 4]
    prompts_per_concurrency: 15
    warmup: 2
    host_retries: 2
`
