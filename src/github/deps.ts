/**
 * Everything the action's `run` touches, as one injectable object: the runner
 * (inputs, outputs, log, summary), the event, GitHub's API, git, files, and the
 * servegate stages. Tests pass typed fakes; real-deps.ts builds the real one.
 */
import type { AbDeps, AbOptions, AbOutcome } from '../ab/run-ab.js'
import type { ConfigFile } from '../config/schema.js'
import type { ResolvedConfig, ResolveInput } from '../config/resolve.js'
import type { Baseline, GateOptions, Verdict } from '../gate/types.js'
import type { IsolationCheck } from './isolation-policy.js'
import type { ResultFile } from '../types.js'
import type { MarkdownReportOptions } from '../report/markdown.js'
import type { EventPayload } from './context.js'
import type { CurveSeries } from './curves.js'
import type { GitHubClient } from './publish.js'
import type { GitRunner } from './refresh-commit.js'

/** The parts of the Actions runtime the action uses (the real one wraps @actions/core). */
export interface ActionCore {
  /** Raw input value, '' when unset. */
  getInput(name: string): string
  setOutput(name: string, value: string): void
  setFailed(message: string): void
  /** Mask a value in every later log line. */
  setSecret(secret: string): void
  info(message: string): void
  /** A warning annotation; `title` heads it in the run's annotations. */
  warning(message: string, opts?: { title?: string }): void
  error(message: string): void
  /** Append markdown to the job summary (GITHUB_STEP_SUMMARY). */
  appendSummary(markdown: string): Promise<void>
  /** Keep a value for the post step (core.saveState); getState reads it there, '' when unset. */
  saveState(name: string, value: string): void
  getState(name: string): string
}

/** What a refresh records besides the result (the commit measured, from GITHUB_SHA). */
export interface RefreshInfo {
  name: string
  commit: string | null
  /**
   * `append` (default): the newest refresh; `reset`: a new history, the old one's starts on this
   * host kept for the spread; `noise`: a start kept in the noise history alone.
   */
  how?: 'append' | 'reset' | 'noise'
}

/** The servegate stages the action calls, with the signatures their modules export. */
export interface ActionStages {
  loadConfigFile(path: string): Promise<ConfigFile>
  /** Parse config text (the base branch's copy); `source` names it in messages. */
  parseConfigText(text: string, source: string): ConfigFile
  resolveConfig(input: ResolveInput): ResolvedConfig
  runSweep(
    cfg: ResolvedConfig,
    deps: { log(line: string): void; signal?: AbortSignal; onlyPoints?: ReadonlySet<string> | null },
  ): Promise<{ result: ResultFile; resultPath: string }>
  writeResultFile(path: string, result: ResultFile): Promise<void>
  /** The first result with the runs of `extra` appended (confirmation repeats). */
  mergeResults(first: ResultFile, extra: ResultFile): ResultFile
  readBaseline(path: string): Promise<Baseline>
  /** Parse baseline JSON text (the base branch's copy); `source` names it in messages. */
  parseBaselineText(text: string, source: string): Baseline
  /** Read a result file (the post step counts the runs a killed sweep saved). */
  readResultFile(path: string): Promise<ResultFile>
  /** `step`: the ladder's options for this look (gate/ladder.ts stepOptions), over the config's gate settings. */
  compareToBaseline(baseline: Baseline, candidate: ResultFile, cfg: ResolvedConfig, step?: Partial<GateOptions>): Verdict
  /**
   * The candidate's engine starts against the stored baseline, each gated row a sequential test
   * (gate/seq-baseline.ts); `startOf(repeat)` names the start that measured each repeat.
   */
  compareStarts(baseline: Baseline, candidate: ResultFile, cfg: ResolvedConfig, step: Partial<GateOptions>, startOf: (repeat: number) => number): Verdict
  appendRefresh(existing: Baseline | null, result: ResultFile, info: RefreshInfo, cfg: ResolvedConfig): Baseline
  writeBaseline(path: string, baseline: Baseline): Promise<void>
  renderVerdictMarkdown(verdict: Verdict): string
  renderMarkdownReport(result: ResultFile, opts?: MarkdownReportOptions): string
  renderMermaidCurve(series: CurveSeries[], opts: { title: string; xLabel: string; yLabel: string }): string
  /** A (reference) and B (candidate) in alternating slots on this host, decided from paired slots (src/ab/run-ab.ts). */
  runAB(opts: AbOptions, deps: Pick<AbDeps, 'log' | 'signal'>): Promise<AbOutcome>
  /** The A/B verdict table, how it was measured, and both environments (src/report/ab-report.ts). */
  renderAbMarkdown(outcome: AbOutcome): string
}

export interface ActionFiles {
  exists(path: string): boolean
  writeText(path: string, text: string): Promise<void>
}

export interface ActionDeps {
  core: ActionCore
  env: Record<string, string | undefined>
  /** The directory the runner started the action in (the workspace). */
  cwd: string
  event: { name: string; payload: EventPayload }
  /** An API client for the token (created only when a comment is to be posted). */
  github(token: string): GitHubClient
  stages: ActionStages
  git: GitRunner
  files: ActionFiles
  /** Aborted when the job is cancelled: the sweep stops between requests. */
  signal?: AbortSignal
  /** Whether this host can start commands in a PID namespace of their own (default: serve/isolation.ts hostIsolation). */
  isolation?: () => Promise<IsolationCheck>
}
