/**
 * `servegate sim`: serve the simulated engine until SIGINT/SIGTERM. Flags are
 * checked here with messages that name the flag, the value and what is
 * allowed; everything else is startSim's (see src/sim/options.ts).
 */
import type { Command } from 'commander'
import { z } from 'zod'
import { UsageError } from '../errors.js'
import { FAULT_KINDS, startSim, TOKENIZE_DIALECTS, type SimOptions, type TokenizeDialect } from '../sim/index.js'

export interface SimCommandDeps {
  log: (line: string) => void
  /** Resolves when the server should stop (default: on SIGINT or SIGTERM). */
  waitForStop: () => Promise<void>
}

/** Raw commander values (strings, booleans, the repeated --fault list). */
export type SimFlags = Record<string, string | boolean | string[] | undefined>

type NumSpec = { flag: string; int?: boolean; min?: number; max?: number; positive?: boolean }

function num(raw: unknown, s: NumSpec): number | undefined {
  if (raw === undefined) return undefined
  const text = String(raw).trim()
  const v = Number(text)
  const kind = s.int ? 'an integer' : 'a number'
  const range = s.positive ? ' > 0' : s.min !== undefined && s.max !== undefined ? ` in ${s.min}..${s.max}` : s.min !== undefined ? ` ≥ ${s.min}` : ''
  const ok =
    text !== '' &&
    Number.isFinite(v) &&
    (!s.int || Number.isInteger(v)) &&
    (!s.positive || v > 0) &&
    (s.min === undefined || v >= s.min) &&
    (s.max === undefined || v <= s.max)
  if (!ok) throw new UsageError(`${s.flag} "${text}": expected ${kind}${range}`)
  return v
}

const faultKind = z.enum(FAULT_KINDS)

/** Turn `servegate sim` flags into startSim options; throws UsageError naming the bad flag. */
export function parseSimFlags(f: SimFlags): Partial<SimOptions> {
  const faults = (Array.isArray(f.fault) ? f.fault : []).map((k) => {
    const r = faultKind.safeParse(k)
    if (!r.success) throw new UsageError(`--fault "${k}": expected one of ${FAULT_KINDS.join(', ')}`)
    return r.data
  })
  const rate = num(f.faultRate, { flag: '--fault-rate', min: 0, max: 1 })
  if (faults.length > 0 && rate === undefined) throw new UsageError('--fault needs --fault-rate P (the share of requests to fail, 0..1)')
  if (faults.length === 0 && rate !== undefined) throw new UsageError('--fault-rate needs at least one --fault KIND')
  const stopEarly = num(f.stopEarlyAt, { flag: '--stop-early-at', int: true, min: 1 })
  const truncate = num(f.truncatePrompt, { flag: '--truncate-prompt', int: true, min: 1 })
  const vocab = num(f.vocab, { flag: '--vocab', int: true, min: 1 })
  const out: Partial<SimOptions> = {
    host: typeof f.host === 'string' ? f.host : undefined,
    port: num(f.port, { flag: '--port', int: true, min: 0, max: 65535 }),
    model: typeof f.model === 'string' ? f.model : undefined,
    ttftMs: num(f.ttftMs, { flag: '--ttft-ms', min: 0 }),
    itlMs: num(f.itlMs, { flag: '--itl-ms', min: 0 }),
    profile: typeof f.profile === 'string' ? f.profile : undefined,
    timeScale: num(f.timeScale, { flag: '--time-scale', positive: true }),
    seed: num(f.seed, { flag: '--seed', int: true }),
    slowdown: num(f.slowdown, { flag: '--slowdown', positive: true }),
    driftFile: typeof f.driftFile === 'string' ? f.driftFile : undefined,
    driftPerMin: num(f.driftPerMin, { flag: '--drift-per-min', min: 0 }),
    noiseCv: num(f.noiseCv, { flag: '--noise-cv', min: 0 }),
    jitterCv: num(f.jitterCv, { flag: '--jitter-cv', min: 0 }),
    faults: faults.map((kind) => ({ kind, rate: rate ?? 0 })),
    stallMs: num(f.stallMs, { flag: '--stall-ms', min: 0 }),
    faultIntervalMs: num(f.faultIntervalMs, { flag: '--fault-interval-ms', positive: true }),
    hugeLineBytes: num(f.hugeLineBytes, { flag: '--huge-line-bytes', int: true, min: 1 }),
    tokensPerChunk: num(f.tokensPerChunk, { flag: '--tokens-per-chunk', int: true, min: 1 }),
    reasoningTokens: num(f.reasoningTokens, { flag: '--reasoning-tokens', int: true, min: 0 }),
    usageSkew: num(f.usageSkew, { flag: '--usage-skew', min: 0 }),
    stopEarlyAt: stopEarly ?? undefined,
    truncatePrompt: truncate ?? undefined,
    vocab: vocab ?? undefined,
    tokenize: tokenizeDialect(f.tokenize),
    prefixCache: f.prefixCache === true ? true : undefined,
    keepAliveComments: f.keepAliveComments === true ? true : undefined,
    crlf: f.crlf === true ? true : undefined,
    omitDone: f.omitDone === true ? true : undefined,
    frontDelayMs: num(f.frontDelayMs, { flag: '--front-delay-ms', min: 0 }),
    traceLimit: num(f.traceLimit, { flag: '--trace-limit', int: true, min: 1 }),
  }
  if ((out.ttftMs === undefined) !== (out.itlMs === undefined)) {
    throw new UsageError('--ttft-ms and --itl-ms go together (deterministic mode needs both)')
  }
  if (out.ttftMs !== undefined && out.profile !== undefined) {
    throw new UsageError('choose either --ttft-ms/--itl-ms (deterministic) or --profile (batching), not both')
  }
  return out
}

function tokenizeDialect(v: unknown): TokenizeDialect | undefined {
  if (v === undefined) return undefined
  const d = TOKENIZE_DIALECTS.find((x) => x === v)
  if (d === undefined) throw new UsageError(`--tokenize "${String(v)}": expected one of ${TOKENIZE_DIALECTS.join(', ')}`)
  return d
}

function waitForSignal(): Promise<void> {
  return new Promise((resolve) => {
    const done = (): void => {
      process.off('SIGINT', done)
      process.off('SIGTERM', done)
      resolve()
    }
    process.on('SIGINT', done)
    process.on('SIGTERM', done)
  })
}

function describeMode(o: Partial<SimOptions>): string {
  const drift = [
    ...(o.driftFile !== undefined ? [`host drift from ${o.driftFile}`] : []),
    ...(o.driftPerMin ? [`host drift +${o.driftPerMin * 100} %/min`] : []),
  ]
    .map((d) => `, ${d}`)
    .join('')
  if (o.ttftMs !== undefined) return `deterministic: TTFT ${o.ttftMs} ms, ITL ${o.itlMs} ms${drift}`
  return `batching profile ${typeof o.profile === 'string' ? o.profile : 'default'} (illustrative numbers, not a GPU measurement)${drift}`
}

const FAULTS_HELP = `
Faults (each --fault in turn strikes a request with probability --fault-rate, at most one per request;
seeded by --seed and the request id; intervals are model time, × --time-scale like --stall-ms):
  http500, http429   answer with that status instead of a stream
  disconnect         drop the connection halfway through the stream
  stall              hold the stream --stall-ms halfway through, then go on
  malformed          send a data: line that is not JSON halfway through
  stream-error       send an error event halfway through, then end
  keepalive          after 3 tokens, only ": keep-alive" comments every --fault-interval-ms, forever
  overrun            ignore max_tokens: keep sending tokens at the stream's ITL, forever, no [DONE]
  trickle            after 1 token, the rest of a valid stream one byte every --fault-interval-ms
  huge-line          after 5 tokens, one data: line of --huge-line-bytes (a content event whose text is
                     filler) with no line end before its last byte, then the rest of the stream
The last four affect streamed responses only; they leave the engine (its batch slot and KV are freed)
when they take over, still count as running in /metrics, and stop when the client disconnects.`

/** Add `servegate sim` to the program. */
export function registerSimCommand(program: Command, deps: Partial<SimCommandDeps> = {}): void {
  const log = deps.log ?? ((line: string): void => void process.stderr.write(`${line}\n`))
  const collect = (v: string, prev: string[]): string[] => [...prev, v]
  program
    .command('sim')
    .description('Serve the built-in simulated engine (OpenAI/vLLM-compatible) until interrupted')
    .option('--port <n>', 'port to listen on (0: a free one)', '8000')
    .option('--host <addr>', 'address to bind', '127.0.0.1')
    .option('--model <id>', 'model id to serve', 'servegate/sim-model')
    .option('--ttft-ms <ms>', 'deterministic mode: first token this long after arrival (with --itl-ms)')
    .option('--itl-ms <ms>', 'deterministic mode: one chunk every this many ms, whatever the load')
    .option('--profile <name|file>', 'batching mode: built-in profile (default, small, large) or YAML/JSON file')
    .option('--time-scale <f>', 'wall time = model time × F (0.1 runs ten times faster)')
    .option('--seed <n>', 'seed of every random choice')
    .option('--slowdown <f>', 'multiply every step time by F (a fake regression)')
    .option('--drift-file <path>', 'host drift: multiply every step time by the number in this file, re-read while running (missing: 1)')
    .option('--drift-per-min <x>', 'host drift: multiply every step time by 1 + X × minutes since start (wall time)')
    .option('--noise-cv <x>', 'run-to-run noise: a lognormal factor with this CV drawn at start')
    .option('--jitter-cv <x>', 'per-step jitter CV')
    .option('--fault <kind>', `inject a fault (repeatable): ${FAULT_KINDS.join(', ')}; see "Faults" below`, collect, [])
    .option('--fault-rate <p>', 'share of requests that suffer each --fault (0..1)')
    .option('--stall-ms <ms>', 'length of a stall fault (default 2000)')
    .option('--fault-interval-ms <ms>', 'keepalive fault: one ": keep-alive" comment, trickle fault: one byte, every this many ms (default 50)')
    .option('--huge-line-bytes <n>', 'huge-line fault: length of its one data: line in bytes (default 8388608 = 8 MiB)')
    .option('--tokens-per-chunk <n>', 'tokens per streamed chunk (speculative-decoding-like)')
    .option('--reasoning-tokens <n>', 'chat: reasoning_content tokens before the content')
    .option('--usage-skew <f>', 'report usage.completion_tokens = round(true × F)')
    .option('--stop-early-at <n>', 'stop every request after N tokens, even with ignore_eos')
    .option('--truncate-prompt <n>', 'keep only the last N prompt tokens of every request (usage.prompt_tokens < what was sent)')
    .option('--vocab <n>', 'vocabulary size: refuse a completions prompt of token ids with an id ≥ N (HTTP 400, as vLLM does)')
    .option('--tokenize <dialect>', `the /tokenize this server speaks: ${TOKENIZE_DIALECTS.join(', ')} (default vllm)`)
    .option('--prefix-cache', 'reuse repeated prompt prefixes and count hits in /metrics')
    .option('--front-delay-ms <ms>', 'delay before a request reaches the engine (a proxy in front)')
    .option('--keep-alive-comments', 'write ": keep-alive" SSE comments')
    .option('--crlf', 'end SSE lines with CRLF')
    .option('--omit-done', 'never send data: [DONE]')
    .option('--trace-limit <n>', 'keep ground-truth traces of at most N requests')
    .addHelpText('after', FAULTS_HELP)
    .action(async (flags: SimFlags) => {
      const opts = parseSimFlags(flags)
      const sim = await startSim(opts)
      process.stdout.write(`${sim.url}\n`)
      log(`servegate sim listening on ${sim.url} (${describeMode(opts)}); model ${opts.model ?? 'servegate/sim-model'}. Ctrl-C stops it.`)
      await (deps.waitForStop ?? waitForSignal)()
      await sim.close()
      log('servegate sim stopped')
    })
}
