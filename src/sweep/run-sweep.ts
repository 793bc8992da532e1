import { clientHeadroom } from '../analysis/headroom.js'
import { setRequestHeaders } from '../util/auth.js'
import { randomInt } from 'node:crypto'
import { existsSync } from 'node:fs'
import { UsageError } from '../errors.js'
import { normalizeBaseUrl } from '../util/base-url.js'
import { startSim, type SimHandle } from '../sim/index.js'
import { buildPlan, rateLabel, type PlanPoint } from '../plan/plan.js'
import { deriveUnusedSeed } from '../util/rng.js'
import { configForResult, pointsPerShape, requestDeadlineMs, type ResolvedConfig } from '../config/resolve.js'
import { collectEnv, defaultEnvDeps, type EnvDeps } from '../env/collect.js'
import { startGpuSampler } from '../env/gpu-sampler.js'
import type { ExecFn } from '../env/exec.js'
import type { ServerProcesses } from '../env/nvidia-smi.js'
import { isServerOnThisHost } from '../env/local-host.js'
import { LoadAborted, resolveWorkers, workersWarning } from '../load/run-point.js'
import { atTargetForResult } from '../analysis/at-target.js'
import { fingerprintOf } from '../gate/fingerprint.js'
import { pointScope } from '../gate/metric-keys.js'
import { readResultFile, writeResultFile } from '../store/result-file.js'
import { assertWritableOutput } from '../store/output-path.js'
import { HARNESS_VERSION } from '../version.js'
import { spoiledOnlyByHost } from '../analysis/validity.js'
import { RESULT_SCHEMA, SERVER_EXITED, type DiscardedAttempt, type PointResult, type ResultFile, type RunResult } from '../types.js'
import {
  calibratePoint,
  crossCheckTokenizer,
  describeMisses,
  detectPromptCalibration,
  localCounter,
  tokenizeCounter,
  type CalibrationMemo,
  type PromptCalibration,
} from './calibrate-prompts.js'
import { loadLocalTokenizer, type LocalTokenizer } from '../client/local-tokenizer.js'
import { defaultServerLogPath, describeExit, ServerExitedDuringSweep, ServerStartCancelled, startServer, type ServerHandle } from '../serve/index.js'
import { measurePoint } from './measure-point.js'
import { enterSlot, prepareShard, type ShardSession, type ShardSlot } from './shard-run.js'
import { scheduleSeed, shardPlan } from '../plan/shard.js'
import { checkResumable, measuredRunKey } from './resume.js'

/** How a sweep talks to the outside world (the terminal, an abort signal). */
export interface SweepDeps {
  log(line: string): void
  /** Called before and after each point (for progress displays). */
  onPointStart?(point: PlanPoint, index: number, total: number): void
  onPointDone?(point: PlanPoint, run: RunResult, index: number, total: number): void
  /** Called once on --resume with the runs already in the file, so a progress display can count them as done. */
  onResume?(alreadyMeasured: number, total: number): void
  signal?: AbortSignal
  /** Simulator options used when no base URL is configured (tests shorten time). */
  simOptions?: Parameters<typeof startSim>[0]
  /**
   * A server the caller started and keeps running across sweeps (`servegate ab` starts each
   * side): measured and watched like one started from `cfg.serve`, but not stopped here.
   */
  server?: ServerHandle
  /** Runs nvidia-smi (the environment record, the GPU sampler); default: the one on PATH. Tests inject a stand-in. */
  exec?: ExecFn
  /**
   * The point scopes (`64x16@c16`) this sweep measures: a later round of an A/B job measures only
   * the points of its rows still open (gate/escalate.ts). Absent: every point of the plan.
   */
  onlyPoints?: ReadonlySet<string> | null
}

/**
 * A sweep stopped by its abort signal. Every run finished before it is in the
 * result file; the run that was cut off is dropped, never summarised.
 */
export class SweepCancelled extends UsageError {
  constructor(
    readonly resultPath: string,
    /** Runs in the result file (finished before the cancel, including resumed ones). */
    readonly done: number,
    /** Runs the plan holds. */
    readonly planned: number,
  ) {
    super(
      `Sweep interrupted after ${done} of ${planned} runs; finished runs are saved in ${resultPath}, the run in progress was dropped.`,
      `Continue with: servegate run --resume --out ${resultPath}`,
    )
  }
}

/**
 * Run a whole sweep: every (shape, concurrency, repeat) of the plan, writing
 * the result file after each finished run so an interrupted sweep keeps what
 * it measured, and `resume` continues without redoing finished runs.
 */
export async function runSweep(cfg: ResolvedConfig, deps: SweepDeps): Promise<{ result: ResultFile; resultPath: string }> {
  // Before the simulator starts or the server is contacted: an unwritable --out would waste the whole sweep.
  assertWritableOutput(cfg.out, '--out')
  // Every request to the server from here on carries the sweep's extra headers (readiness included);
  // each sweep sets its own, so one sweep's never reach another's server.
  setRequestHeaders(cfg.request?.headers ?? {})
  let sim: SimHandle | null = null
  let server: ServerHandle | null = null
  let root: string
  if (deps.server !== undefined) {
    server = deps.server
    root = server.url
  } else if (cfg.serve) {
    server = await startServer({
      command: cfg.serve.command,
      baseUrl: cfg.server.baseUrl === null ? null : normalizeBaseUrl(cfg.server.baseUrl).root,
      readyTimeoutMs: cfg.serve.readyTimeoutS * 1000,
      stopTimeoutMs: cfg.serve.stopTimeoutS * 1000,
      stopCommand: cfg.serve.stopCommand,
      logPath: defaultServerLogPath(cfg.out),
      appendLog: cfg.resume,
      apiKey: cfg.apiKey,
      secrets: cfg.serve.secrets,
      ...(cfg.serve.env !== undefined ? { passEnv: cfg.serve.env } : {}),
      isolation: cfg.isolation ?? 'auto',
      log: deps.log,
      ...(deps.signal ? { signal: deps.signal } : {}),
    }).catch((err: unknown) => {
      if (err instanceof ServerStartCancelled) throw new SweepCancelled(cfg.out, 0, cfg.shapes.length * pointsPerShape(cfg) * cfg.repeats)
      throw err
    })
    root = server.url
  } else if (cfg.server.baseUrl === null) {
    const simOptions = deps.simOptions ?? { profile: 'default' }
    sim = await startSim(simOptions)
    root = sim.url
    deps.log(
      `No --base-url given: started servegate's built-in simulator at ${sim.url} (${describeSim(simOptions)}); its numbers are illustrative, not a GPU measurement.`,
    )
  } else {
    root = normalizeBaseUrl(cfg.server.baseUrl).root
  }
  const watch = server === null ? null : watchServer(server, deps.signal)
  try {
    return await sweepAgainst(root, cfg, watch === null ? deps : { ...deps, signal: watch.signal }, server)
  } finally {
    watch?.dispose()
    await sim?.close()
    if (deps.server === undefined) await server?.stop()
    setRequestHeaders({})
  }
}

/** A signal that fires on the user's abort or, with reason SERVER_EXITED (also `interrupted.reason`), when the server exits. */
function watchServer(server: ServerHandle, user: AbortSignal | undefined): { signal: AbortSignal; dispose(): void } {
  const ac = new AbortController()
  const onUser = (): void => ac.abort(user?.reason)
  if (user?.aborted) onUser()
  user?.addEventListener('abort', onUser, { once: true })
  let disposed = false
  void server.exited.then(() => {
    if (!disposed && !ac.signal.aborted) ac.abort(SERVER_EXITED)
  })
  return {
    signal: ac.signal,
    dispose: () => {
      disposed = true
      user?.removeEventListener('abort', onUser)
    },
  }
}

/** What a sweep knows once the server answered its probe: where it is, the model, how prompts get their length, and how the environment is read. */
interface SweepTarget {
  root: string
  cfg: ResolvedConfig
  deps: SweepDeps
  server: ServerHandle | null
  model: string
  calibration: { mode: PromptCalibration; reason: string | null }
  /** The tokenizer of the client's own (--tokenizer) and what the result records of it; null: the server's /tokenize. */
  tokenizer: { local: LocalTokenizer; record: Record<string, unknown> } | null
  startedAt: string
  /** nvidia-smi sees this host's GPUs: they describe the server only when it runs here. */
  gpuOnThisHost: boolean
  envDeps: EnvDeps
  /** A server servegate started runs in a process group of its own: its processes are never foreign to its runs. */
  serverProcesses: ServerProcesses
  /** One shard of a sharded sweep: its schedule and records file (set by freshResult); absent: the whole sweep. */
  shard?: ShardSession
}

async function sweepAgainst(
  root: string,
  cfg: ResolvedConfig,
  deps: SweepDeps,
  server: ServerHandle | null,
): Promise<{ result: ResultFile; resultPath: string }> {
  const target = await probeTarget(root, cfg, deps, server)
  const { result, plan } = cfg.resume && existsSync(cfg.out) ? await resumeResult(target) : await freshResult(target)
  await measurePlan(target, result, plan)
  return { result, resultPath: cfg.out }
}

/** Probe the server, detect how chat prompts can be calibrated, and say what the sweep will and will not know. */
async function probeTarget(root: string, cfg: ResolvedConfig, deps: SweepDeps, server: ServerHandle | null): Promise<SweepTarget> {
  const { preflight, PREFLIGHT_DEADLINE_MS } = await import('./preflight.js')
  // A probe of 2 tokens: its own short deadline, shorter still when the user asked for a shorter request deadline.
  const probeDeadlineMs = Math.min(PREFLIGHT_DEADLINE_MS, (cfg.requestTimeoutS ?? Infinity) * 1000)
  const { model } = await preflight(root, cfg.server.model, cfg.server.api, cfg.apiKey, probeDeadlineMs, cfg.request?.extraBody)
  const startedAt = new Date().toISOString()
  // A tokenizer of the client's own sizes chat prompts and re-counts output; the server's /tokenize is checked against it.
  const tokenizer = cfg.tokenizer ? await clientTokenizer(cfg.tokenizer, root, model, cfg, deps) : null
  // Once per sweep: can chat prompts be calibrated to exactly input_len tokens with the server's /tokenize?
  const calibration =
    tokenizer !== null && cfg.server.api === 'chat' && tokenizer.local.hasChatTemplate
      ? { mode: 'tokenize' as const, reason: null }
      : await detectPromptCalibration(cfg.server.api, { root, model, apiKey: cfg.apiKey })
  if (calibration.mode === 'tokenize')
    deps.log(
      tokenizer !== null && cfg.server.api === 'chat'
        ? `Chat prompts are calibrated to exactly input_len tokens with the tokenizer ${tokenizer.local.identity.name} (its chat template included).`
        : `Chat prompts are calibrated to exactly input_len tokens with ${root}/tokenize (the model's chat template included).`,
    )
  if (calibration.mode === 'none') {
    deps.log(
      `Chat prompts are input_len words, not calibrated: ${root} cannot count chat messages (${calibration.reason}); input_len_mismatch checks the server's usage.prompt_tokens instead.`,
    )
  }

  const tooManyThreads = workersWarning(cfg.workers)
  if (tooManyThreads !== null) deps.log(`Warning: ${tooManyThreads}`)
  // nvidia-smi sees this host's GPUs: they describe the server (and may judge its health) only when it runs here.
  const gpuOnThisHost = isServerOnThisHost(root)
  if (!gpuOnThisHost)
    deps.log(
      `The server (${new URL(root).host}) is not on this host: the serving machine's identity, GPU details and health checks are left unknown (run servegate on the GPU host to record them).`,
    )
  const envDeps = {
    ...defaultEnvDeps({ root, model, apiKey: cfg.apiKey, containerDigest: cfg.containerDigest, serveCommand: cfg.serveCommand, startedAt }),
    ...(deps.exec !== undefined ? { exec: deps.exec } : {}),
    gpuOnThisHost,
    declaredGpus: cfg.gpus ?? null,
    warn: deps.log,
  }
  const serverProcesses: ServerProcesses = server === null ? { kind: 'unknown' } : { kind: 'group', pgid: server.pid, gpus: server.gpus ?? null }
  return { root, cfg, deps, server, model, calibration, tokenizer, startedAt, gpuOnThisHost, envDeps, serverProcesses }
}

/** Load --tokenizer, check it against the server's /tokenize on the first prompts, and say what was found. */
async function clientTokenizer(
  spec: string,
  root: string,
  model: string,
  cfg: ResolvedConfig,
  deps: SweepDeps,
): Promise<{ local: LocalTokenizer; record: Record<string, unknown> }> {
  const local = loadLocalTokenizer(spec)
  const check = await crossCheckTokenizer(cfg.server.api, local, { root, model, apiKey: cfg.apiKey })
  const id = `${local.identity.name} (sha256 ${local.identity.sha256})`
  if (check.startsWith('disagrees'))
    deps.log(
      `Warning: the tokenizer ${id} and ${root}/tokenize ${check}: one of them is not the model's; prompts are sized with the tokenizer, and input_len_mismatch checks the server's usage.`,
    )
  else if (check.startsWith('agrees')) deps.log(`Tokenizer ${id}: it ${check.replace(/^agrees/, `agrees with ${root}/tokenize`)}.`)
  else deps.log(`Tokenizer ${id}: its cross-check with ${root}/tokenize was ${check}.`)
  if (cfg.server.api === 'chat' && !local.hasChatTemplate)
    deps.log(`Warning: the tokenizer ${id} has no chat template: chat prompts are sized as the server allows.`)
  return { local, record: { name: local.identity.name, sha256: local.identity.sha256, server_check: check } }
}

/** `--resume` on an existing file: its runs, checked to be from the same sweep and environment, and the plan now in force. */
async function resumeResult(t: SweepTarget): Promise<{ result: ResultFile; plan: PlanPoint[] }> {
  const { cfg, deps, model, calibration } = t
  const resultPath = cfg.out
  const result = await readResultFile(resultPath)
  // METHODOLOGY: "Record the environment" — a resumed sweep on another engine version, model
  // revision or GPU would mix two environments in one curve, so it is refused.
  checkResumable(result, cfg, resultPath, { model, promptCalibration: calibration.mode, env: await collectEnv(t.envDeps) })
  // An unpinned sweep continues from the seed it started with (its finished runs were planned from it).
  const seed = cfg.seedPinned === true ? cfg.seed : (recordedSeed(result) ?? freshSeed())
  const plan = buildPlan({ ...cfg, seed })
  // The sweep may have grown (more concurrencies or repeats): record the plan now in force.
  const inexact = result.config.prompt_calibration_inexact
  result.config = {
    ...configForResult({ ...cfg, seed }),
    model,
    ...calibrationConfig(calibration.mode, typeof inexact === 'number' ? inexact : 0),
    ...(t.tokenizer !== null ? { tokenizer: t.tokenizer.record } : {}),
  }
  deps.log(`Resuming ${resultPath}: ${countRuns(result)} of ${plan.length} runs already measured.`)
  deps.onResume?.(countRuns(result), plan.length)
  return { result, plan }
}

/** A new sweep: its seed, its plan, and an empty result written before any load is sent. */
async function freshResult(t: SweepTarget): Promise<{ result: ResultFile; plan: PlanPoint[] }> {
  const { cfg, deps, model, calibration } = t
  const resultPath = cfg.out
  if (cfg.resume) deps.log(`--resume: ${resultPath} does not exist yet, starting a new sweep.`)
  // METHODOLOGY: prompts a server has seen before may be served from its prefix cache (vLLM's
  // default), and a sweep against a long-running server follows earlier sweeps: each invocation
  // draws prompts of its own unless the seed is pinned. The seed is recorded to replay them.
  // A shard plans from the seed every shard of its launch shares (plan/shard.ts scheduleSeed).
  const seed = cfg.seedPinned === true ? cfg.seed : cfg.shard ? scheduleSeed(cfg.shard.startAt, cfg.shard.count) : freshSeed()
  if (cfg.seedPinned !== true) deps.log(`Prompts from a fresh seed, ${seed} (recorded in the result; --seed ${seed} replays them).`)
  const only = deps.onlyPoints ?? null
  const whole = buildPlan({ ...cfg, seed }).filter((p) => only === null || only.has(pointScope(resultPoint(p))))
  // A shard runs its share of every point where it has one; each run keeps its slot in the whole plan's schedule.
  const plan = cfg.shard ? shardPlan(whole, cfg.shard, cfg.warmup).flatMap((r) => (r.point === null ? [] : [r.point])) : whole
  // Say so when a new sweep replaces finished runs: the user may have meant --resume.
  const previous = existsSync(resultPath) ? await readResultFile(resultPath).catch(() => null) : null
  if (previous !== null && countRuns(previous) > 0) {
    deps.log(`Replacing ${resultPath}, which held ${countRuns(previous)} finished runs (add --resume to continue a sweep instead).`)
  }
  const env = await collectEnv(t.envDeps)
  const result: ResultFile = {
    schema: RESULT_SCHEMA,
    harness: { name: 'servegate', version: HARNESS_VERSION },
    env,
    config: {
      ...configForResult({ ...cfg, seed }),
      model,
      ...calibrationConfig(calibration.mode, 0),
      ...(t.tokenizer !== null ? { tokenizer: t.tokenizer.record } : {}),
    },
    target: { metric: cfg.target.metric, percentile: cfg.target.percentile, threshold_ms: cfg.target.thresholdMs },
    points: [],
    at_target: [],
  }
  if (cfg.shard) {
    const threads = Math.max(0, ...plan.map((p) => resolveWorkers(cfg.workers, p.concurrency)))
    t.shard = await prepareShard(cfg.shard, resultPath, whole.length, threads, deps.log)
    result.shard = t.shard.info
    if ((cfg.hostRetries ?? 0) > 0)
      deps.log(
        `host_retries is off for a shard: a second attempt would leave the schedule the other shards keep (a saturated shard makes its point invalid instead).`,
      )
  }
  // Write the empty result first: a path that passed the check but still fails (a full disk) fails before any load is sent.
  await writeResultFile(resultPath, result)
  return { result, plan }
}

type Stop = (cut: PlanPoint | null) => Promise<never>

/** Measure every planned run not yet in the result, writing the file after each; a cancel or a dying server stops it. */
async function measurePlan(t: SweepTarget, result: ResultFile, plan: PlanPoint[]): Promise<void> {
  const { cfg, deps } = t
  const done = new Set(result.points.flatMap((p) => p.runs.map((r) => measuredRunKey(p, r.repeat))))
  // The run that was cut off already sent its prompts, and a server with prefix caching
  // (vLLM's default) would serve them again from cache: a resumed sweep gives every run it
  // still measures prompts of its own, salted with this invocation's start (run.seed records it).
  const usedSeeds = new Set([...result.points.flatMap((p) => p.runs.flatMap((r) => (r.seed === null ? [] : [r.seed]))), ...plan.map((p) => p.seed)])
  const resumeSalt = result.points.length > 0 && cfg.resume ? t.startedAt : null
  // A resumed sweep continues the plan: the earlier stop no longer describes the file.
  delete result.interrupted
  const stop: Stop = (cut) => stopSweep(t, result, plan.length, cut)
  const counter =
    t.calibration.mode !== 'tokenize'
      ? null
      : t.tokenizer !== null && t.tokenizer.local.hasChatTemplate
        ? localCounter(t.tokenizer.local)
        : tokenizeCounter({ root: t.root, model: t.model, apiKey: cfg.apiKey })
  const memo: CalibrationMemo = new Map()
  try {
    for (const [i, planned] of plan.entries()) {
      if (deps.signal?.aborted) await stop(null)
      if (done.has(measuredRunKey(resultPoint(planned), planned.repeat))) continue
      const point = resumeSalt === null ? planned : { ...planned, seed: deriveUnusedSeed(usedSeeds, planned.seed, 'resume', resumeSalt) }
      deps.onPointStart?.(point, i, plan.length)
      const { run, firstError } = await measureAttempts(t, result, point, { counter, memo, usedSeeds }, stop)
      addRun(result, point, run)
      result.at_target = atTargetForResult(result.points, result.target)
      result.client_headroom = clientHeadroom(result.points)
      result.fingerprint = fingerprintOf(result)
      result.env.finished_at = new Date().toISOString()
      await writeResultFile(cfg.out, result)
      deps.onPointDone?.(point, run, i, plan.length)
      // The result keeps only error counts by kind: say what the server answered while the user watches.
      if (firstError !== null) deps.log(`Every request of ${label(point)} failed; the server's first error: ${firstError}`)
    }
  } finally {
    await counter?.close()
  }
}

/** What every attempt at a run shares: the /tokenize counter and its memo (chat calibration), and the seeds already drawn. */
interface AttemptKit {
  counter: ReturnType<typeof tokenizeCounter> | null
  memo: CalibrationMemo
  usedSeeds: Set<number>
}

/**
 * Measure one planned run. Where only the host spoiled it (analysis/validity.ts spoiledOnlyByHost)
 * and the sweep's `host_retries` allows, measure it again at once with prompts of its own: the
 * spoiled attempt already sent its prompts, and a server's prefix cache would serve them again.
 * The kept run lists every discarded attempt, with its seed and its issues; the last attempt is
 * kept whatever its validity, so a host that stays busy still leaves an invalid run.
 */
async function measureAttempts(
  t: SweepTarget,
  result: ResultFile,
  point: PlanPoint,
  kit: AttemptKit,
  stop: Stop,
): Promise<{ run: RunResult; firstError: string | null }> {
  // A shard's schedule has no room for a second attempt.
  const retries = t.shard ? 0 : (t.cfg.hostRetries ?? 0)
  const discarded: DiscardedAttempt[] = []
  let attempt = point
  for (;;) {
    // Before the point's requests are built, and before its warmup: tokenize calls never overlap the load.
    const promptWords = kit.counter === null ? null : await calibrateRun(t, result, attempt, kit.counter, kit.memo, stop)
    // A shard waits for its slot once its prompts are ready.
    const slot = t.shard ? await enterSlot(t.shard, attempt, t.deps.log, t.deps.signal) : null
    if (slot !== null && t.deps.signal?.aborted) await stop(point)
    const measured = await measureRun(t, attempt, promptWords, stop, slot)
    await slot?.record(measured.run)
    const { run } = measured
    if (discarded.length >= retries || !spoiledOnlyByHost(run.validity)) {
      if (discarded.length > 0) run.discarded_attempts = discarded
      return measured
    }
    discarded.push({ seed: attempt.seed, started_at: run.started_at, finished_at: run.finished_at, issues: run.validity.issues })
    const codes = [...new Set(run.validity.issues.map((x) => x.code))].join(', ')
    t.deps.log(
      `${label(point)}: the host spoiled the run (${codes}); measuring it again with fresh prompts (host_retries: attempt ${discarded.length + 1} of at most ${retries + 1}).`,
    )
    if (t.deps.signal?.aborted) await stop(point)
    attempt = { ...point, seed: deriveUnusedSeed(kit.usedSeeds, point.seed, 'host-retry', discarded.length) }
  }
}

/** The words of each prompt of `point`, calibrated with the server's /tokenize; prompts it could not size exactly are counted in the result. */
async function calibrateRun(
  t: SweepTarget,
  result: ResultFile,
  point: PlanPoint,
  counter: ReturnType<typeof tokenizeCounter>,
  memo: CalibrationMemo,
  stop: Stop,
): Promise<number[] | null> {
  const cal = await calibratePoint(point, (serial, words) => counter.count(point, serial, words), { memo })
  const missed = describeMisses(point, cal)
  if (missed !== null) {
    result.config.prompt_calibration_inexact = (result.config.prompt_calibration_inexact as number) + cal.inexact + cal.unverified
    t.deps.log(missed)
  }
  if (t.deps.signal?.aborted) await stop(point)
  return cal.words
}

/** Measure one run; a cancel, or a server that died under it, stops the sweep instead. */
async function measureRun(
  t: SweepTarget,
  point: PlanPoint,
  promptWords: number[] | null,
  stop: Stop,
  slot: ShardSlot | null,
): Promise<{ run: RunResult; firstError: string | null }> {
  const { cfg, deps, server } = t
  const gpuExec = t.envDeps.exec
  const serverProcesses = t.serverProcesses
  const failedWhole: { firstError: string | null } = { firstError: null }
  const run = await measurePoint(point, {
    promptWords,
    onEveryRequestFailed: (e) => void (failedWhole.firstError = e),
    ...(deps.signal ? { signal: deps.signal } : {}),
    root: t.root,
    model: t.model,
    api: cfg.server.api,
    apiKey: cfg.apiKey,
    ...(cfg.request ? { extraBody: cfg.request.extraBody } : {}),
    promptCalibration: t.calibration.mode,
    ...(t.tokenizer !== null ? { countText: t.tokenizer.local.countText } : {}),
    workers: cfg.workers,
    idleTimeoutMs: cfg.idleTimeoutMs,
    deadlineMs: requestDeadlineMs(cfg, point.shape),
    goodput: cfg.goodput ?? null,
    ...(slot !== null ? { shard: slot.hooks } : {}),
    sampleGpu: () => {
      if (!t.gpuOnThisHost) return { stop: () => [] }
      const s = startGpuSampler(gpuExec, 1000, { server: serverProcesses })
      return { stop: () => s.stopAndWait() }
    },
  }).catch(async (err: unknown) => {
    if (err instanceof LoadAborted || deps.signal?.aborted === true) return stop(point)
    throw err
  })
  // Requests cut by a dying server can fail before its exit is seen: such a run is the death's, not a measurement.
  if (server !== null && run.failed > 0) {
    await Promise.race([server.exited, new Promise((r) => setTimeout(r, 1000))])
    if (server.exit() !== null) await stop(point)
  }
  return { run, firstError: failedWhole.firstError }
}

/** Mark the file as cut short (the run in progress is dropped), write it, and stop: ServerExitedDuringSweep when the server died, else SweepCancelled. */
async function stopSweep(t: SweepTarget, result: ResultFile, planned: number, cut: PlanPoint | null): Promise<never> {
  const { server, deps } = t
  const resultPath = t.cfg.out
  const exit = server?.exit() ?? null
  const died = server !== null && exit !== null && abortReason(deps.signal) === SERVER_EXITED
  if (died) await server.settleLog(1000)
  result.interrupted = {
    at: new Date().toISOString(),
    reason: died ? SERVER_EXITED : abortReason(deps.signal),
    cut_run: cut === null ? null : { input_len: cut.shape.inputLen, output_len: cut.shape.outputLen, concurrency: cut.concurrency, repeat: cut.repeat },
    finished_runs: countRuns(result),
    planned_runs: planned,
    ...(died ? { server: { exit_code: exit.code, signal: exit.signal, log_tail: server.tail() } } : {}),
  }
  await writeResultFile(resultPath, result)
  if (died) {
    const during = cut === null ? `between runs` : `during ${label(cut)}`
    throw new ServerExitedDuringSweep(
      `the server ${describeExit(exit)} ${during}; ${countRuns(result)} of ${planned} runs finished and are saved in ${resultPath}`,
      exit,
      server.tail(),
      server.logPath,
      resultPath,
    )
  }
  throw new SweepCancelled(resultPath, countRuns(result), planned)
}

/** Why the signal fired, in a word: the signal name or reason string it was aborted with, else "cancelled". */
function abortReason(signal: AbortSignal | undefined): string {
  const r: unknown = signal?.reason
  if (typeof r === 'string' && r.length > 0) return r
  if (r instanceof Error && r.name !== 'AbortError' && r.message.length > 0) return r.message
  return 'cancelled'
}

/**
 * The result's record of how prompts got their length: `prompt_calibration` and, when
 * calibrated, `prompt_calibration_inexact`, the prompts sent without exactly input_len tokens.
 */
function calibrationConfig(mode: PromptCalibration, inexact: number): Record<string, unknown> {
  return mode === 'tokenize' ? { prompt_calibration: mode, prompt_calibration_inexact: inexact } : { prompt_calibration: mode }
}

/** The result point a planned run belongs to (no runs yet): an open-loop point carries its rate. */
function resultPoint(point: PlanPoint): PointResult {
  return {
    input_len: point.shape.inputLen,
    output_len: point.shape.outputLen,
    // A shard's run belongs to the whole point (its share is in the records file).
    concurrency: point.shard?.totalConcurrency ?? point.concurrency,
    ...(point.openLoop ? { request_rate: rateLabel(point.openLoop.rate) } : {}),
    runs: [],
  }
}

/** Insert a run into its point (created in plan order when new). */
function addRun(result: ResultFile, point: PlanPoint, run: RunResult): void {
  const fresh = resultPoint(point)
  let p = result.points.find(
    (q) => q.input_len === fresh.input_len && q.output_len === fresh.output_len && q.concurrency === fresh.concurrency && q.request_rate === fresh.request_rate,
  )
  if (!p) {
    p = fresh
    result.points.push(p)
  }
  p.runs.push(run)
  p.runs.sort((a, b) => a.repeat - b.repeat)
}

/** A fresh 32-bit seed for a sweep's prompts (not predictable from the time, so two invocations in one millisecond differ). */
function freshSeed(): number {
  return randomInt(0, 2 ** 32)
}

/** The seed a result's sweep was planned from, when it recorded one. */
function recordedSeed(result: ResultFile): number | null {
  const seed = (result.config as { seed?: unknown }).seed
  return typeof seed === 'number' && Number.isInteger(seed) && seed >= 0 && seed < 2 ** 32 ? seed : null
}

/** "16 in / 250 out, C=256, repeat 1" (open loop: "rate 20/s"). */
function label(p: PlanPoint): string {
  return `${p.shape.inputLen} in / ${p.shape.outputLen} out, ${p.openLoop ? `rate ${rateLabel(p.openLoop.rate)}/s` : `C=${p.concurrency}`}, repeat ${p.repeat}`
}

function countRuns(result: ResultFile): number {
  return result.points.reduce((n, p) => n + p.runs.length, 0)
}

function describeSim(opts: Parameters<typeof startSim>[0] = {}): string {
  if (opts.ttftMs !== undefined && opts.itlMs !== undefined) return `deterministic, TTFT ${opts.ttftMs} ms, ITL ${opts.itlMs} ms`
  const profile = typeof opts.profile === 'string' ? opts.profile : 'custom'
  return `profile ${profile ?? 'default'}${opts.timeScale !== undefined && opts.timeScale !== 1 ? `, time scale ${opts.timeScale}` : ''}`
}
