/** Typed fakes of everything `run(deps)` touches, recording what the action did. */
import { slotOrder, type AbOptions } from '../../src/ab/run-ab.js'
import type { ResolvedConfig, ResolveInput } from '../../src/config/resolve.js'
import type { Baseline, Verdict } from '../../src/gate/types.js'
import type { ActionDeps, RefreshInfo } from '../../src/github/deps.js'
import type { EventPayload } from '../../src/github/context.js'
import type { GitHubClient } from '../../src/github/publish.js'
import type { GitResult } from '../../src/github/refresh-commit.js'
import type { IssueComment } from '../../src/github/sticky-comment.js'
import type { TrackedIssue } from '../../src/github/tracking-issue.js'
import type { ResultFile } from '../../src/types.js'
import { baseline as baselineFixture, result as resultFixture } from './fixtures.js'

export interface Recorded {
  outputs: Map<string, string>
  failed: string[]
  secrets: string[]
  info: string[]
  warnings: string[]
  /** Titles of the warnings that had one, in order. */
  warningTitles: string[]
  errors: string[]
  state: Map<string, string>
  summary: string
  sweeps: ResolvedConfig[]
  /** The points each sweep was told to measure (null: every point), in order. */
  sweepPoints: Array<string[] | null>
  resolveInputs: ResolveInput[]
  comments: IssueComment[]
  commentCalls: string[]
  written: Map<string, string>
  baselinesWritten: Array<{ path: string; baseline: Baseline }>
  refreshInfo: RefreshInfo[]
  git: string[][]
  /** What each runAB call was given. */
  abRuns: AbOptions[]
  /** The repository's issues (watch mode's tracking issue), with their state. */
  issues: TrackedIssue[]
  /** Comments posted on issues, by issue number. */
  issueComments: Array<{ issue: number; body: string }>
  /** Every issues API call: `list`, `create`, `update 3`, `comment 3`, `close 3`. */
  issueCalls: string[]
}

export interface FakeOptions {
  inputs?: Record<string, string>
  env?: Record<string, string | undefined>
  eventName?: string
  payload?: EventPayload
  /** Verdicts returned by successive compareToBaseline calls (the last repeats). */
  verdicts?: Verdict[]
  /** Absolute paths that exist. */
  existing?: string[]
  /** Make the comment API fail with this HTTP status. */
  apiStatus?: number
  /** Throw this from runSweep. */
  sweepError?: Error
  /** What runSweep measured (default: the fixture result, every run valid). */
  sweepResult?: () => ResultFile
  apiKey?: string | null
  baseUrl?: string | null
  /** Comments already on the PR. */
  comments?: IssueComment[]
  /** State saved by an earlier (main) step, as the post step sees it. */
  state?: Map<string, string>
  /** Throw this from runAB. */
  abError?: Error
  /** Issues already in the repository (open or closed). */
  issues?: TrackedIssue[]
  /** Make the issues API fail with this HTTP status. */
  issueApiStatus?: number
}

export const CWD = '/ws'
export const PR_PAYLOAD: EventPayload = {
  pull_request: { number: 7, head: { repo: { full_name: 'acme/infer', fork: false } }, base: { repo: { full_name: 'acme/infer', fork: false } } },
}
/** A push to the default branch: an event that judges no change, where every mode may run. */
export const PUSH_MAIN: EventPayload = { ref: 'refs/heads/main', repository: { full_name: 'acme/infer', default_branch: 'main' } }
export const FORK_PAYLOAD: EventPayload = {
  pull_request: { number: 8, head: { repo: { full_name: 'mallory/infer', fork: true } }, base: { repo: { full_name: 'acme/infer', fork: false } } },
}

export function resolved(flags: ResolveInput['flags'], o: FakeOptions): ResolvedConfig {
  return {
    configPath: null,
    server: { baseUrl: o.baseUrl === undefined ? 'http://gpu:8000' : o.baseUrl, model: null, api: 'completions', apiKeyEnv: null },
    apiKey: o.apiKey ?? null,
    target: { metric: 'tpot', percentile: 95, thresholdMs: 50 },
    sweepName: flags.sweep ?? 'default',
    shapes: [{ inputLen: 128, outputLen: 32 }],
    concurrency: [1, 16],
    promptsPerConcurrency: 12,
    warmup: 2,
    repeats: 3,
    seed: 1,
    out: flags.out ?? 'servegate-result.json',
    resume: false,
    workers: 'auto',
    containerDigest: null,
    serveCommand: null,
    // As resolveConfig does: a serve command is one servegate starts (and so can start again).
    ...(flags.serve ? { serve: { command: flags.serve, readyTimeoutS: 600, stopTimeoutS: 30, stopCommand: null, secrets: [] } } : {}),
    idleTimeoutMs: 30_000,
    gate: { tolerancePct: {}, maxFailedRequests: null },
  }
}

/** Fake deps plus what they recorded. */
export function fakeDeps(o: FakeOptions = {}): { deps: ActionDeps; rec: Recorded } {
  const rec: Recorded = {
    outputs: new Map(),
    failed: [],
    secrets: [],
    info: [],
    warnings: [],
    warningTitles: [],
    errors: [],
    state: new Map(o.state ?? []),
    summary: '',
    sweeps: [],
    sweepPoints: [],
    resolveInputs: [],
    comments: [...(o.comments ?? [])],
    commentCalls: [],
    written: new Map(),
    baselinesWritten: [],
    refreshInfo: [],
    git: [],
    abRuns: [],
    issues: (o.issues ?? []).map((i) => ({ ...i })),
    issueComments: [],
    issueCalls: [],
  }
  const inputs: Record<string, string> = { 'github-token': 'ghs_token123', ...o.inputs }
  let compareCalls = 0
  const nextVerdict = (): Verdict => {
    const vs = o.verdicts ?? []
    const v = vs[Math.min(compareCalls++, vs.length - 1)]
    if (v === undefined) throw new Error('test gave no verdict')
    return v
  }
  let nextId = 500
  const apiFail = (): void => {
    if (o.apiStatus !== undefined) throw Object.assign(new Error(`HTTP ${o.apiStatus}`), { status: o.apiStatus })
  }
  const issueFail = (): void => {
    if (o.issueApiStatus !== undefined) throw Object.assign(new Error(`HTTP ${o.issueApiStatus}`), { status: o.issueApiStatus })
  }
  const issueView = (n: number): TrackedIssue => {
    const i = rec.issues.find((x) => x.number === n)
    if (i === undefined) throw Object.assign(new Error('Not Found'), { status: 404 })
    return { ...i, html_url: `https://github.test/acme/infer/issues/${n}` }
  }
  const client: GitHubClient = {
    identity: async () => ({ login: 'github-actions[bot]', type: 'Bot' }),
    issues: {
      async *listOpenIssues() {
        rec.issueCalls.push('list')
        issueFail()
        yield rec.issues.filter((i) => i.state === 'open').map((i) => issueView(i.number))
      },
      async createIssue(title, body) {
        rec.issueCalls.push('create')
        issueFail()
        const number = Math.max(0, ...rec.issues.map((i) => i.number)) + 1
        rec.issues.push({ number, title, body, state: 'open', user: { login: 'github-actions[bot]', type: 'Bot' } })
        return issueView(number)
      },
      async updateIssue(n, title, body) {
        rec.issueCalls.push(`update ${n}`)
        issueFail()
        Object.assign(
          rec.issues.find((i) => i.number === n)!,
          { title, body },
        )
        return issueView(n)
      },
      async addComment(n, body) {
        rec.issueCalls.push(`comment ${n}`)
        issueFail()
        rec.issueComments.push({ issue: n, body })
        return { id: nextId++ }
      },
      async closeIssue(n) {
        rec.issueCalls.push(`close ${n}`)
        issueFail()
        Object.assign(
          rec.issues.find((i) => i.number === n)!,
          { state: 'closed', state_reason: 'completed' },
        )
        return issueView(n)
      },
    },
    comments: {
      async *listComments(issue) {
        rec.commentCalls.push(`list ${issue}`)
        apiFail()
        yield rec.comments
      },
      async createComment(issue, body) {
        rec.commentCalls.push(`create ${issue}`)
        apiFail()
        const c = { id: nextId++, body, user: { login: 'github-actions[bot]', type: 'Bot' } }
        rec.comments.push(c)
        return c
      },
      async updateComment(id, body) {
        rec.commentCalls.push(`update ${id}`)
        apiFail()
        const c = rec.comments.find((x) => x.id === id)!
        c.body = body
        return c
      },
    },
  }
  const gitAnswers = (args: readonly string[]): GitResult => {
    const ok = (stdout = ''): GitResult => ({ code: 0, stdout, stderr: '' })
    if (args[0] === 'diff') return { code: 1, stdout: '', stderr: '' } // the baseline changed
    if (args[0] === 'config') return { code: 1, stdout: '', stderr: '' } // no identity configured
    if (args[0] === 'rev-parse' && args[1] === 'HEAD') return ok('0123456789abcdef0123\n')
    return ok()
  }
  const deps: ActionDeps = {
    core: {
      getInput: (name) => inputs[name] ?? '',
      setOutput: (name, value) => void rec.outputs.set(name, value),
      setFailed: (m) => void rec.failed.push(m),
      setSecret: (s) => void rec.secrets.push(s),
      info: (m) => void rec.info.push(m),
      warning: (m, opts) => {
        rec.warnings.push(m)
        if (opts?.title !== undefined) rec.warningTitles.push(opts.title)
      },
      error: (m) => void rec.errors.push(m),
      appendSummary: async (md) => void (rec.summary += md),
      saveState: (name, value) => void rec.state.set(name, value),
      getState: (name) => rec.state.get(name) ?? '',
    },
    env: { GITHUB_REPOSITORY: 'acme/infer', RUNNER_ENVIRONMENT: 'self-hosted', GITHUB_SHA: 'cafe', GITHUB_REF: 'refs/heads/main', ...o.env },
    cwd: CWD,
    event: { name: o.eventName ?? 'pull_request', payload: o.payload ?? PR_PAYLOAD },
    github: () => client,
    git: async (args) => {
      rec.git.push([...args])
      return gitAnswers(args)
    },
    files: {
      exists: (p) => (o.existing ?? []).includes(p),
      writeText: async (p, t) => void rec.written.set(p, t),
    },
    stages: {
      loadConfigFile: async () => ({ sweeps: { gate: { shapes: [{ input_len: 128, output_len: 32 }], concurrency: [1, 16] } } }),
      parseConfigText: () => ({ sweeps: { gate: { shapes: [{ input_len: 128, output_len: 32 }], concurrency: [1, 16] } } }),
      parseBaselineText: () => baselineFixture(),
      readResultFile: async () => resultFixture(),
      resolveConfig: (input) => {
        rec.resolveInputs.push(input)
        return resolved(input.flags, o)
      },
      runSweep: async (cfg, sweepDeps): Promise<{ result: ResultFile; resultPath: string }> => {
        rec.sweeps.push(cfg)
        rec.sweepPoints.push(sweepDeps.onlyPoints == null ? null : [...sweepDeps.onlyPoints].sort())
        if (o.sweepError) throw o.sweepError
        return { result: (o.sweepResult ?? resultFixture)(), resultPath: cfg.out }
      },
      writeResultFile: async (p) => void rec.written.set(p, 'result'),
      mergeResults: (first) => first,
      readBaseline: async () => baselineFixture(),
      compareToBaseline: () => nextVerdict(),
      compareStarts: () => nextVerdict(),
      appendRefresh: (existing, _result, info) => {
        rec.refreshInfo.push(info)
        return existing ?? baselineFixture()
      },
      writeBaseline: async (path, b) => void rec.baselinesWritten.push({ path, baseline: b }),
      renderVerdictMarkdown: (v) => `VERDICT-TABLE(${v.verdict})`,
      renderMarkdownReport: (_r, opts) => `METHODOLOGY-TABLE${opts?.showHost === false ? '(host left out)' : '(with host)'}`,
      renderMermaidCurve: (series, opts) => `MERMAID(${opts.title}: ${series.map((s) => s.label).join('+')})`,
      runAB: async (opts) => {
        rec.abRuns.push(opts)
        if (o.abError) throw o.abError
        const a = resultFixture()
        const b = resultFixture()
        const order = slotOrder(opts.rounds)
        const mode = opts.resident === true ? ('resident' as const) : ('exclusive' as const)
        const schedule = { order, mode, why: `${mode}: fake`, starts: [], gpus: 0, wall_minutes: 1, gpu_minutes: 1 }
        return { verdict: nextVerdict(), a, b, paths: { a: `${opts.outDir}/a.json`, b: `${opts.outDir}/b.json` }, order, schedule }
      },
      renderAbMarkdown: (ab) => `AB-VERDICT-TABLE(${ab.verdict.verdict}; A at ${ab.a.env.base_url}; B at ${ab.b.env.base_url}; ${ab.order.join(' ')})`,
    },
  }
  return { deps, rec }
}
