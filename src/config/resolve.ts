/**
 * One resolved configuration from defaults ← config file ← flags ← environment.
 * Flags override the file; the API key is read from the environment variable
 * the file names and never leaves this object except to build request headers.
 */
import { extrasForResult, parseExtraBodyFlag, parseHeaderFlags, resolveRequestExtras, type RequestExtras } from './request-extras.js'
import { UsageError } from '../errors.js'
import { redactSecrets, secretsInText, secretValuesFromEnv, secretVariablesInCommand } from '../util/redact.js'
import { baseUrlRoot } from '../util/base-url.js'
import type { Api, GoodputSlo, Shape, Target } from '../types.js'
import { DEFAULTS, defaultRequestTimeoutS, type MetricKindKey } from './defaults.js'
import {
  apiFlag,
  concurrencyFlag,
  goodputFlag,
  positiveNumberFlag,
  requestRateFlag,
  positiveIntFlag,
  secondsFlag,
  seedFlag,
  targetFlag,
  textFlag,
  warmupFlag,
  workersFlag,
  hostRetriesFlag,
  type Problems,
  type RunFlags,
} from './flags.js'
import type { ConfigFile, SweepConfig } from './schema.js'
import { resolveShard, type ShardSettings } from './shard.js'
import { bracketForResult, type BracketPlacement, type Placement } from './placement.js'

export type { RunFlags } from './flags.js'

/** Gate tolerances as given (the gate stage applies its own defaults to what is absent). */
export interface GateSettings {
  /** Smallest relative change, in percent, that may count as a regression, per metric kind. */
  tolerancePct: { itl?: number; tpot?: number; ttft?: number; throughput?: number }
  /** Failed requests tolerated per run before the gate calls it unusable; null: not set. */
  maxFailedRequests: number | null
  /** `gate.goodput: true`: goodput (requests/s meeting every --goodput SLO) is gated beside the defaults. */
  goodput?: boolean
  /** `gate.max_mdc_pct`: the MDC (%) beyond which a row is blind and never passes; absent: the gate's default. */
  maxMdcPct?: number
  /**
   * `gate.design_pct`: the change (%) each metric kind's rows are designed to catch (the sequential
   * test's δ); absent kinds keep the gate's defaults (p95 ITL 10 %, throughput at target 15 %).
   */
  designPct?: Partial<Record<MetricKindKey, number>>
  /** `gate.max_gpu_minutes`: GPU-minutes a pull request's gate may spend before it ends undecided; absent: no cap. */
  maxGpuMinutes?: number
  /**
   * `gate.reference_command`: a serve command for the reference engine, re-measured beside the
   * candidate in the Action's gate mode (A/B on this host). It may hold secrets: never recorded.
   */
  referenceCommand?: string
  /** `gate.reference_mode`: the reference as the ladder's last step (`ladder`, the default) or for every PR (`always`). */
  referenceMode?: 'ladder' | 'always'
}

/** A server servegate starts, watches and stops (`--serve`, config `server.command`). */
export interface ServeSettings {
  /** The command as given, `{port}` unfilled. It may hold secrets: only `serveCommand` (redacted) is ever recorded or printed. */
  command: string
  /** How long the server may take to be ready, s. */
  readyTimeoutS: number
  /** How long SIGTERM (or the stop command) may take before SIGKILL, s. */
  stopTimeoutS: number
  /** Run via sh instead of SIGTERM (`docker stop X`); null: signal the process group. */
  stopCommand: string | null
  /** Values to redact from the server's log and messages (API key, secret env values, variables the command passes to secret flags). */
  secrets: string[]
  /**
   * `server.env`: variables passed to the command (and its stop command) beside the allow-list of
   * config/child-env.ts. Absent: the allow-list alone.
   */
  env?: readonly string[]
}

/** Open-loop load (`--request-rate`): the sweep's points are rates instead of concurrencies. */
export interface OpenLoopConfig {
  /** Ascending requests/s; Infinity (recorded "inf"): every request at once. */
  rates: number[]
  /** Gamma shape of the inter-arrival times (1: Poisson). */
  burstiness: number
  /** Most requests in flight at once; null: no cap. */
  maxConcurrency: number | null
  /** Measured requests per point. */
  numPrompts: number
}

export interface ResolvedConfig {
  /** The config file used, or null. */
  configPath: string | null
  server: {
    /** Server root without trailing `/` or `/v1`; null: start the built-in simulator. */
    baseUrl: string | null
    /** null: the first model of /v1/models. */
    model: string | null
    api: Api
    apiKeyEnv: string | null
  }
  /** The key itself, from env[apiKeyEnv]. Never written anywhere: see configForResult. */
  apiKey: string | null
  /** Headers and body fields every request carries beyond the methodology's (config/request-extras.ts); absent: none. */
  request?: RequestExtras
  /** `--tokenizer` / `server.tokenizer`: a tokenizer of the client's own (client/local-tokenizer.ts); absent: the server's /tokenize. */
  tokenizer?: string | null
  /**
   * Every secret value this configuration knows (the API key, secret-named variables' values,
   * credentials in the base URL and in the serve and reference commands), for the process's one
   * redaction (util/redact.ts rememberSecrets) and the log masking. Absent: none known.
   */
  secrets?: string[]
  target: Target
  sweepName: string
  shapes: Shape[]
  /** Ascending, distinct. */
  concurrency: number[]
  promptsPerConcurrency: number
  /** Warmup requests per point, or 'auto' (see autoWarmupRequests). */
  warmup: number | 'auto'
  repeats: number
  /**
   * Times a run the host alone spoiled (analysis/validity.ts spoiledOnlyByHost) is measured again
   * at once with fresh prompts (sweep `host_retries`, `--host-retries`); absent: 0.
   */
  hostRetries?: number
  /** Seed of the prompts: the pinned one, or the default that runSweep replaces with a fresh seed (see seedPinned). */
  seed: number
  /**
   * true when --seed or the config's `seed` pinned it: prompts are the same on every invocation.
   * false or absent: each `servegate run` draws a fresh seed, so a server's prefix cache filled
   * by an earlier sweep cannot serve this one's prompts.
   */
  seedPinned?: boolean
  out: string
  resume: boolean
  workers: number | 'auto'
  containerDigest: string | null
  serveCommand: string | null
  /** `server.isolation`, when the config file sets it (absent: `auto`, see serve/isolation.ts). */
  isolation?: 'auto' | 'none'
  /**
   * The server servegate starts; null or absent: it measures `server.baseUrl` (or the simulator).
   * With `{port}` in the command `server.baseUrl` is null: the URL follows the port picked at start.
   */
  serve?: ServeSettings | null
  /** A request with no byte for this long fails with `timeout`, ms. */
  idleTimeoutMs: number
  /**
   * A request whose answer is not complete this long after it was sent fails
   * with `deadline`, s. null or absent: derived from each shape (requestDeadlineMs).
   */
  requestTimeoutS?: number | null
  /**
   * GPUs serving the model (`--gpus N`, config `server.gpus`); null or absent: what nvidia-smi sees
   * on a local server, else unknown. Recorded as env.gpu.count (env/collect.ts).
   */
  gpus?: number | null
  gate: GateSettings
  /** Open loop; null or absent: closed loop over `concurrency` (then empty only for an open-loop sweep). */
  openLoop?: OpenLoopConfig | null
  /** --goodput SLOs; null or absent: no goodput figures. */
  goodput?: GoodputSlo | null
  /** Where the sweep places its points (sweep `placement`, `--bracket-baseline`); absent: 'fixed'. */
  placement?: Placement
  /** With placement 'bracket': concurrencies whose p95 ITL the gate keeps (sweep `itl_concurrency`; default the lowest). */
  itlConcurrency?: number[]
  /** The bracket in force (gate/bracket.ts applyBracket); null or absent: every concurrency of the list. */
  bracket?: BracketPlacement | null
  /** `--shard I/N`: this process runs one shard of a sharded sweep (config/shard.ts); null or absent: the whole sweep. */
  shard?: ShardSettings | null
}

/** Points per shape of the sweep: its concurrencies, or its request rates in open loop. */
export function pointsPerShape(cfg: Pick<ResolvedConfig, 'concurrency' | 'openLoop'>): number {
  return cfg.openLoop ? cfg.openLoop.rates.length : cfg.concurrency.length
}

export interface ResolveInput {
  file: ConfigFile | null
  filePath: string | null
  flags: RunFlags
  env: NodeJS.ProcessEnv
}

/** Merge defaults, the config file, flags and environment into one ResolvedConfig; throws UsageError listing every problem. */
export function resolveConfig(input: ResolveInput): ResolvedConfig {
  const { file, filePath, flags, env } = input
  const problems: Problems = []
  const fileName = filePath ?? 'the config file'

  const { name: sweepName, sweep } = pickSweep(file, fileName, flags.sweep, problems)
  const f = parseFlags(flags, problems)
  const source = resolveServerSource(file, fileName, f, env, problems)
  const { shapes, openLoop, concurrency } = resolveLoad(sweep, f, problems)
  const goodput = resolveGoodput(file, fileName, f.goodput, problems)
  const extras = resolveRequestExtras(file?.server, fileName, f, problems)
  checkDesign(file, fileName, problems)
  const { placement, itlConcurrency } = resolvePlacement(sweep, sweepName, fileName, flags, openLoop, concurrency, problems)
  const shard = resolveShard(
    flags,
    file,
    fileName,
    env,
    { openLoop: openLoop !== null, resume: flags.resume === true, serve: (f.start ?? file?.server?.command) !== undefined },
    problems,
  )

  const fileTarget = file?.target
  const target: Target = f.target ?? {
    metric: fileTarget?.metric ?? DEFAULTS.target.metric,
    percentile: fileTarget?.percentile ?? DEFAULTS.target.percentile,
    thresholdMs: fileTarget?.threshold_ms ?? DEFAULTS.target.thresholdMs,
  }

  const digestFromEnv = env.SERVEGATE_CONTAINER_DIGEST?.trim()

  if (problems.length > 0) {
    const message = problems.length === 1 ? problems[0]! : `invalid options:\n${problems.map((p) => `  ${p}`).join('\n')}`
    throw new UsageError(message, 'Run `servegate run --help` for every flag and its format.')
  }
  const { baseUrl, command, apiKeyEnv, apiKey } = source
  // Recorded text leaves through results, baselines and comments: redact it once, here.
  // Header values may be tokens: redacted like the key wherever they could appear.
  const secrets = [
    ...new Set([...collectSecrets(source, file?.gate?.reference_command, f.serve, env), ...Object.values(extras.headers).filter((v) => v !== '')]),
  ]
  const recorded = (text: string | null | undefined): string | null => (text ? redactSecrets(text, secrets) : null)

  return {
    configPath: filePath,
    server: { baseUrl, model: f.model ?? file?.server?.model ?? null, api: f.api ?? file?.server?.api ?? DEFAULTS.api, apiKeyEnv },
    apiKey,
    secrets,
    ...(Object.keys(extras.headers).length + Object.keys(extras.extraBody).length > 0 ? { request: extras } : {}),
    ...((f.tokenizer ?? file?.server?.tokenizer) ? { tokenizer: f.tokenizer ?? file!.server!.tokenizer! } : {}),
    target,
    sweepName,
    shapes,
    concurrency,
    promptsPerConcurrency: f.prompts ?? sweep?.prompts_per_concurrency ?? DEFAULTS.promptsPerConcurrency,
    warmup: f.warmup ?? sweep?.warmup ?? DEFAULTS.warmup,
    repeats: f.repeats ?? sweep?.repeats ?? DEFAULTS.repeats,
    hostRetries: f.hostRetries ?? sweep?.host_retries ?? DEFAULTS.hostRetries,
    seed: f.seed ?? file?.seed ?? DEFAULTS.seed,
    seedPinned: f.seed !== undefined || file?.seed !== undefined,
    out: f.out ?? DEFAULTS.out,
    resume: flags.resume === true,
    workers: f.workers ?? DEFAULTS.workers,
    containerDigest: recorded(f.digest ?? digestFromEnv),
    // --serve-command records a command by hand; a command servegate starts is recorded by itself.
    serveCommand: recorded(f.serve ?? command),
    serve: serveSettings(file, command, f.ready, secrets),
    ...(file?.server?.isolation !== undefined ? { isolation: file.server.isolation } : {}),
    idleTimeoutMs: f.timeout ?? DEFAULTS.idleTimeoutMs,
    requestTimeoutS: f.requestTimeout ?? file?.server?.request_timeout ?? null,
    gpus: f.gpus ?? file?.server?.gpus ?? null,
    gate: gateSettings(file),
    openLoop,
    goodput,
    ...(placement === 'bracket' ? { placement, itlConcurrency } : {}),
    ...(shard !== null ? { shard } : {}),
  }
}

/** Every flag parsed (each parser reports its own problem); undefined: not given. */
function parseFlags(flags: RunFlags, problems: Problems) {
  return {
    baseUrl: textFlag('--base-url', flags.baseUrl, problems),
    model: textFlag('--model', flags.model, problems),
    api: apiFlag(flags.api, problems),
    inputLen: positiveIntFlag('--input-len', flags.inputLen, problems),
    outputLen: positiveIntFlag('--output-len', flags.outputLen, problems),
    concurrency: concurrencyFlag(flags.concurrency, problems),
    prompts: positiveIntFlag('--prompts-per-concurrency', flags.promptsPerConcurrency, problems),
    warmup: warmupFlag(flags.warmup, problems),
    repeats: positiveIntFlag('--repeats', flags.repeats, problems),
    hostRetries: hostRetriesFlag(flags.hostRetries, problems),
    target: targetFlag(flags.target, problems),
    seed: seedFlag('--seed', flags.seed, problems),
    out: textFlag('--out', flags.out, problems),
    workers: workersFlag(flags.workers, problems),
    digest: textFlag('--container-digest', flags.containerDigest, problems),
    serve: textFlag('--serve-command', flags.serveCommand, problems),
    timeout: positiveIntFlag('--timeout-ms', flags.timeoutMs, problems),
    start: textFlag('--serve', flags.serve, problems),
    ready: positiveIntFlag('--ready-timeout', flags.readyTimeout, problems),
    requestTimeout: secondsFlag('--request-timeout', flags.requestTimeout, problems),
    rates: requestRateFlag(flags.requestRate, problems),
    burstiness: positiveNumberFlag('--burstiness', flags.burstiness, problems, '1 (Poisson) or 0.5 (burstier)'),
    maxConcurrency: positiveIntFlag('--max-concurrency', flags.maxConcurrency, problems),
    numPrompts: positiveIntFlag('--num-prompts', flags.numPrompts, problems),
    goodput: goodputFlag(flags.goodput, problems),
    gpus: positiveIntFlag('--gpus', flags.gpus, problems),
    headers: parseHeaderFlags(flags.header, problems),
    extraBody: parseExtraBodyFlag(flags.extraBody, problems),
    tokenizer: textFlag('--tokenizer', flags.tokenizer, problems),
  }
}

type ParsedFlags = ReturnType<typeof parseFlags>

/** Where the server is: its base URL, the command that starts it, and the API key the file names. */
interface ServerSource {
  baseUrl: string | null
  /** The base URL as given (flag or file), before normalizing; undefined: none. */
  rawBase: string | undefined
  command: string | null
  apiKeyEnv: string | null
  apiKey: string | null
}

function resolveServerSource(file: ConfigFile | null, fileName: string, f: ParsedFlags, env: NodeJS.ProcessEnv, problems: Problems): ServerSource {
  let baseUrl: string | null = null
  const rawBase = f.baseUrl ?? file?.server?.base_url
  if (rawBase !== undefined) {
    const n = baseUrlRoot(rawBase)
    if (typeof n === 'string') baseUrl = n
    // The URL may carry user:password@: the message shows it redacted.
    else
      problems.push(
        f.baseUrl !== undefined
          ? `--base-url ${redactSecrets(JSON.stringify(rawBase))}: ${n.problem}`
          : `${fileName}: server.base_url ${redactSecrets(JSON.stringify(rawBase))}: ${n.problem}`,
      )
  }

  // A serve command with {port} decides the URL; one without answers at the base URL given.
  const command = f.start ?? file?.server?.command ?? null
  if (command !== null && command.includes('{port}') && baseUrl !== null) {
    if (f.baseUrl !== undefined || f.start === undefined) {
      const where = f.start !== undefined ? '--serve' : `${fileName}: server.command`
      problems.push(
        `${where} has {port}, so the base URL follows the port servegate picks; drop ${f.baseUrl !== undefined ? '--base-url' : 'server.base_url'} (or give the command a fixed port instead of {port})`,
      )
    } else baseUrl = null // --serve on the command line replaces the file's server
  } else if (command !== null && !command.includes('{port}') && baseUrl === null && rawBase === undefined) {
    problems.push(
      `${f.start !== undefined ? '--serve' : `${fileName}: server.command`}: expected {port} where the command takes its port (e.g. --port {port}), or a --base-url where it will answer`,
    )
  }

  const apiKeyEnv = file?.server?.api_key_env ?? null
  let apiKey: string | null = null
  if (apiKeyEnv !== null) {
    const value = env[apiKeyEnv]
    if (value !== undefined && value !== '') apiKey = value
    // Only a real server needs the key; the built-in simulator ignores it.
    else if (baseUrl !== null || command !== null) problems.push(`${fileName}: server.api_key_env names ${apiKeyEnv}, which is not set in the environment`)
  }
  return { baseUrl, rawBase, command, apiKeyEnv, apiKey }
}

/** The sweep's shapes, and its points: concurrencies (closed loop) or request rates (open loop). */
function resolveLoad(
  sweep: SweepConfig | null,
  f: ParsedFlags,
  problems: Problems,
): { shapes: Shape[]; openLoop: OpenLoopConfig | null; concurrency: number[] } {
  const fileShapes: Shape[] = sweep ? sweep.shapes.map((s) => ({ inputLen: s.input_len, outputLen: s.output_len })) : DEFAULTS.shapes.map((s) => ({ ...s }))
  const shapes = dedupeShapes(fileShapes.map((s) => ({ inputLen: f.inputLen ?? s.inputLen, outputLen: f.outputLen ?? s.outputLen })))
  // Flags win: --concurrency makes a file's open-loop sweep closed, --request-rate a closed one open.
  if (f.concurrency !== undefined && f.rates !== undefined) {
    problems.push('--concurrency and --request-rate: choose one (closed loop keeps C requests in flight; open loop sends requests at a rate)')
  }
  const fileRates = sweep?.request_rates?.map((r) => (r === 'inf' ? Infinity : r)).sort((a, b) => a - b)
  const rates = f.rates ?? (f.concurrency === undefined ? fileRates : undefined)
  const openLoop: OpenLoopConfig | null =
    rates === undefined
      ? null
      : {
          rates,
          burstiness: f.burstiness ?? sweep?.burstiness ?? DEFAULTS.burstiness,
          maxConcurrency: f.maxConcurrency ?? sweep?.max_concurrency ?? null,
          numPrompts: f.numPrompts ?? sweep?.num_prompts ?? DEFAULTS.numPrompts,
        }
  if (openLoop === null) {
    for (const [flag, value] of [
      ['--burstiness', f.burstiness],
      ['--max-concurrency', f.maxConcurrency],
      ['--num-prompts', f.numPrompts],
    ] as const) {
      if (value !== undefined)
        problems.push(`${flag}: applies to open-loop load; add --request-rate R (closed loop sends concurrency × prompts-per-concurrency requests)`)
    }
  }
  const concurrency =
    openLoop !== null ? [] : (f.concurrency ?? (sweep?.concurrency ? [...sweep.concurrency].sort((a, b) => a - b) : [...DEFAULTS.concurrency]))
  return { shapes, openLoop, concurrency }
}

/** The goodput SLOs: the flag's, else the file's; gate.goodput needs some. */
function resolveGoodput(file: ConfigFile | null, fileName: string, flagGoodput: GoodputSlo | undefined, problems: Problems): GoodputSlo | null {
  const fileGoodput = file?.goodput
  const goodput: GoodputSlo | null =
    flagGoodput ??
    (fileGoodput
      ? {
          ...(fileGoodput.ttft !== undefined ? { ttft_ms: fileGoodput.ttft } : {}),
          ...(fileGoodput.tpot !== undefined ? { tpot_ms: fileGoodput.tpot } : {}),
          ...(fileGoodput.e2el !== undefined ? { e2el_ms: fileGoodput.e2el } : {}),
        }
      : null)
  if (file?.gate?.goodput === true && goodput === null) {
    problems.push(`${fileName}: gate.goodput is true but no goodput SLOs are set; add goodput: {tpot: MS, ...} or --goodput tpot:MS`)
  }
  return goodput
}

/** Where the sweep places its points (`placement`, `--bracket-baseline`) and the concurrencies whose ITL a bracketed gate keeps. */
function resolvePlacement(
  sweep: SweepConfig | null,
  sweepName: string,
  fileName: string,
  flags: RunFlags,
  openLoop: OpenLoopConfig | null,
  concurrency: number[],
  problems: Problems,
): { placement: Placement; itlConcurrency: number[] } {
  const placement = flags.bracketBaseline !== undefined ? 'bracket' : (sweep?.placement ?? 'fixed')
  const itlConcurrency = [...(sweep?.itl_concurrency ?? [concurrency[0]!])].sort((a, b) => a - b)
  const notInList = itlConcurrency.filter((c) => !concurrency.includes(c))
  if (placement === 'bracket' && openLoop !== null) {
    problems.push(
      `${flags.bracketBaseline !== undefined ? '--bracket-baseline' : `${fileName}: sweeps.${sweepName}.placement bracket`}: bracketing places concurrencies (closed loop); expected no --request-rate / request_rates with it`,
    )
  } else if (placement === 'bracket' && notInList.length > 0) {
    problems.push(
      `${fileName}: sweeps.${sweepName}.itl_concurrency ${notInList.join(', ')}: expected concurrencies of the sweep's list (${concurrency.join(', ')})`,
    )
  }
  if (flags.bracketBaseline !== undefined) textFlag('--bracket-baseline', flags.bracketBaseline, problems)
  return { placement, itlConcurrency }
}

/** Every secret value the configuration knows: the API key, secret-named variables, and credentials in the base URL and the commands. */
function collectSecrets(source: ServerSource, referenceCommand: string | undefined, flagServe: string | undefined, env: NodeJS.ProcessEnv): string[] {
  return [
    ...new Set(
      [
        source.apiKey,
        ...secretValuesFromEnv(env),
        ...(source.rawBase === undefined ? [] : secretsInText(source.rawBase)),
        ...[source.command, referenceCommand, flagServe].flatMap((c) => (c == null ? [] : [...secretsInText(c), ...secretVariablesInCommand(c, env)])),
      ].filter((s): s is string => s !== null),
    ),
  ]
}

/** The server servegate starts, when a command is given. */
function serveSettings(file: ConfigFile | null, command: string | null, flagReady: number | undefined, secrets: string[]): ServeSettings | null {
  if (command === null) return null
  return {
    command,
    readyTimeoutS: flagReady ?? file?.server?.ready_timeout ?? DEFAULTS.readyTimeoutS,
    stopTimeoutS: file?.server?.stop_timeout ?? DEFAULTS.stopTimeoutS,
    stopCommand: file?.server?.stop_command ?? null,
    secrets,
    ...(file?.server?.env !== undefined ? { env: [...file.server.env] } : {}),
  }
}

/**
 * A row designed to catch more than `gate.max_mdc_pct` could pass while blind to the change its
 * limit promises: the two settings would contradict each other, so such a file is refused.
 */
function checkDesign(file: ConfigFile | null, fileName: string, problems: Problems): void {
  const limit = file?.gate?.max_mdc_pct
  if (limit === undefined) return
  for (const [kind, pct] of Object.entries(file?.gate?.design_pct ?? {})) {
    if (pct !== undefined && pct > limit) {
      problems.push(
        `${fileName}: gate.design_pct.${kind} ${pct} exceeds gate.max_mdc_pct ${limit}; expected a design change of at most ${limit} %, or a larger max_mdc_pct`,
      )
    }
  }
}

/** The entries of a map whose value is set (YAML cannot write undefined, but a typed object may hold it). */
function definedEntries<K extends string>(m: Partial<Record<K, number | undefined>>): Partial<Record<K, number>> {
  return Object.fromEntries(Object.entries(m).filter(([, v]) => v !== undefined)) as Partial<Record<K, number>>
}

function gateSettings(file: ConfigFile | null): GateSettings {
  return {
    tolerancePct: { ...(file?.gate?.tolerance_pct ?? {}) },
    maxFailedRequests: file?.gate?.max_failed_requests ?? null,
    ...(file?.gate?.goodput === true ? { goodput: true } : {}),
    ...(file?.gate?.max_mdc_pct !== undefined ? { maxMdcPct: file.gate.max_mdc_pct } : {}),
    ...(file?.gate?.design_pct !== undefined ? { designPct: definedEntries(file.gate.design_pct) } : {}),
    ...(file?.gate?.max_gpu_minutes !== undefined ? { maxGpuMinutes: file.gate.max_gpu_minutes } : {}),
    ...(file?.gate?.reference_command !== undefined ? { referenceCommand: file.gate.reference_command } : {}),
    ...(file?.gate?.reference_mode !== undefined ? { referenceMode: file.gate.reference_mode } : {}),
  }
}

// --sweep NAME picks a named sweep; otherwise the file's `full`, else its only sweep; no file or no sweeps: defaults.
function pickSweep(file: ConfigFile | null, fileName: string, requested: string | undefined, problems: Problems): { name: string; sweep: SweepConfig | null } {
  const sweeps = file?.sweeps ?? {}
  const names = Object.keys(sweeps)
  if (requested !== undefined) {
    if (file === null) {
      problems.push(`--sweep ${JSON.stringify(requested)}: named sweeps come from a config file; add --config FILE`)
      return { name: requested, sweep: null }
    }
    const sweep = sweeps[requested]
    if (!sweep) {
      problems.push(
        names.length === 0
          ? `--sweep ${JSON.stringify(requested)}: ${fileName} defines no sweeps`
          : `--sweep ${JSON.stringify(requested)}: ${fileName} has no sweep of that name; its sweeps are: ${names.join(', ')}`,
      )
      return { name: requested, sweep: null }
    }
    return { name: requested, sweep }
  }
  if (names.length === 0) return { name: DEFAULTS.sweepName, sweep: null }
  if (sweeps.full) return { name: 'full', sweep: sweeps.full }
  if (names.length === 1) return { name: names[0]!, sweep: sweeps[names[0]!]! }
  problems.push(`${fileName} has several sweeps (${names.join(', ')}) and none is named "full": choose one with --sweep NAME`)
  return { name: DEFAULTS.sweepName, sweep: null }
}

function dedupeShapes(shapes: Shape[]): Shape[] {
  const seen = new Set<string>()
  return shapes.filter((s) => {
    const k = `${s.inputLen}x${s.outputLen}`
    if (seen.has(k)) return false
    seen.add(k)
    return true
  })
}

/** The total deadline of one request of `shape`, ms: the configured one, else the shape's default. */
export function requestDeadlineMs(cfg: Pick<ResolvedConfig, 'requestTimeoutS'>, shape: Shape): number {
  return (cfg.requestTimeoutS ?? defaultRequestTimeoutS(shape.inputLen, shape.outputLen)) * 1000
}

/**
 * The effective request deadline as recorded, s: one number when it is the
 * same for the whole sweep (configured, or one shape), else the derived
 * deadline of each shape keyed `INPUTxOUTPUT` (e.g. {"128x32": 128.128}).
 */
function requestTimeoutRecord(cfg: ResolvedConfig): number | Record<string, number> {
  const per = cfg.shapes.map((s) => [`${s.inputLen}x${s.outputLen}`, requestDeadlineMs(cfg, s) / 1000] as const)
  const values = new Set(per.map(([, v]) => v))
  if (values.size <= 1) return per[0]?.[1] ?? cfg.requestTimeoutS ?? defaultRequestTimeoutS(0, 0)
  return Object.fromEntries(per)
}

/** The resolved config as recorded in the result file (snake_case; never the API key). */
export function configForResult(cfg: ResolvedConfig): Record<string, unknown> {
  return {
    config_file: cfg.configPath,
    sweep: cfg.sweepName,
    server: {
      base_url: cfg.server.baseUrl,
      model: cfg.server.model,
      api: cfg.server.api,
      api_key_env: cfg.server.apiKeyEnv,
      ...(cfg.gpus ? { gpus: cfg.gpus } : {}),
      ...extrasForResult(cfg.request),
    },
    target: { metric: cfg.target.metric, percentile: cfg.target.percentile, threshold_ms: cfg.target.thresholdMs },
    shapes: cfg.shapes.map((s) => ({ input_len: s.inputLen, output_len: s.outputLen })),
    concurrency: [...cfg.concurrency],
    prompts_per_concurrency: cfg.promptsPerConcurrency,
    // Open loop: the rates swept ("inf": all at once) and the arrival process; absent for closed loop.
    ...(cfg.openLoop
      ? {
          load: 'open',
          request_rates: cfg.openLoop.rates.map((r) => (r === Infinity ? 'inf' : r)),
          burstiness: cfg.openLoop.burstiness,
          max_concurrency: cfg.openLoop.maxConcurrency,
          num_prompts: cfg.openLoop.numPrompts,
        }
      : {}),
    ...(cfg.goodput ? { goodput: { ...cfg.goodput } } : {}),
    warmup: cfg.warmup,
    repeats: cfg.repeats,
    // Not part of what a run measures (the fingerprint leaves it out): how hard the sweep tried to get valid runs.
    host_retries: cfg.hostRetries ?? 0,
    seed: cfg.seed,
    seed_pinned: cfg.seedPinned === true,
    workers: cfg.workers,
    idle_timeout_ms: cfg.idleTimeoutMs,
    request_timeout_s: requestTimeoutRecord(cfg),
    container_digest: cfg.containerDigest,
    serve_command: cfg.serveCommand,
    gate: {
      tolerance_pct: { ...cfg.gate.tolerancePct },
      max_failed_requests: cfg.gate.maxFailedRequests,
      ...(cfg.gate.goodput === true ? { goodput: true } : {}),
      ...(cfg.gate.maxMdcPct !== undefined ? { max_mdc_pct: cfg.gate.maxMdcPct } : {}),
      ...(cfg.gate.designPct !== undefined ? { design_pct: { ...cfg.gate.designPct } } : {}),
      ...(cfg.gate.maxGpuMinutes !== undefined ? { max_gpu_minutes: cfg.gate.maxGpuMinutes } : {}),
    },
    // Only a bracketed sweep records its placement: the gate reads it to know which points it planned.
    ...(cfg.bracket ? { placement: bracketForResult(cfg.bracket) } : {}),
  }
}
