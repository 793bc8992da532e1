/**
 * Options of the simulated engine: their types, defaults and validation.
 * Used by `startSim` (programmatic) and by `servegate sim` (flags).
 */
import { z } from 'zod'
import { UsageError } from '../errors.js'
import { formatIssues } from '../util/json-file.js'
import type { SimProfile } from './profiles.js'

/**
 * Which engine's /tokenize the simulator speaks: `vllm` (and SGLang's) takes `{prompt}` or
 * `{messages}` and answers `{count, tokens}`; `llama-server` reads only `content` (and
 * `add_special`), answers `{tokens}`, and `{tokens: []}` to any other body, with chat templating at
 * `POST /apply-template` (llama.cpp's tools/server); `none` has no /tokenize (404), as trtllm-serve.
 */
export const TOKENIZE_DIALECTS = ['vllm', 'llama-server', 'none'] as const
export type TokenizeDialect = (typeof TOKENIZE_DIALECTS)[number]

export const FAULT_KINDS = ['http500', 'http429', 'disconnect', 'stall', 'malformed', 'stream-error', 'keepalive', 'overrun', 'trickle', 'huge-line'] as const
export type FaultKind = (typeof FAULT_KINDS)[number]

/**
 * Faults that take a stream over after its first tokens and play a hostile
 * tail outside the engine (src/sim/fault-tail.ts); streamed responses only.
 */
export const TAIL_FAULT_KINDS = ['keepalive', 'overrun', 'trickle', 'huge-line'] as const satisfies readonly FaultKind[]
export type TailFaultKind = (typeof TAIL_FAULT_KINDS)[number]

/** True for a fault that takes the stream over (see TAIL_FAULT_KINDS). */
export function isTailFault(kind: FaultKind): kind is TailFaultKind {
  return (TAIL_FAULT_KINDS as readonly FaultKind[]).includes(kind)
}

/** One injected failure: each request suffers it with probability `rate` (0..1). */
export interface FaultSpec {
  kind: FaultKind
  rate: number
}

export interface SimOptions {
  host: string
  /** 0 picks a free port. */
  port: number
  /** The one model id served. */
  model: string
  /** Deterministic mode (with itlMs): first token this long after the request reaches the engine. */
  ttftMs?: number
  /** Deterministic mode (with ttftMs): one chunk every this many ms, whatever the load. */
  itlMs?: number
  /** Batching mode: a built-in profile name, a YAML/JSON file path, or a profile object. */
  profile?: string | SimProfile
  /**
   * Wall time = model time × timeScale (0.1 runs ten times faster). Means stay
   * exact at any scale; per-token gaps below a few wall ms show the ~1 ms timer
   * granularity, so keep steps ≥ ~5 ms wall where p50 gaps matter.
   */
  timeScale: number
  seed: number
  /** All step times (and deterministic TTFT/ITL) × slowdown: a fake regression. */
  slowdown: number
  /**
   * Host drift: a file holding a factor F on all step times (on top of slowdown), re-read
   * while running (at most every 100 ms, when it changed); missing file = 1 (src/sim/drift.ts).
   */
  driftFile?: string
  /** Host drift: step times × (1 + driftPerMin × wall minutes since start). */
  driftPerMin: number
  /** Coefficient of variation of the run-to-run factor drawn at start. */
  noiseCv: number
  /** Coefficient of variation of the per-step (per-chunk) factor. */
  jitterCv: number
  faults: FaultSpec[]
  /** How long a `stall` fault holds a stream, ms (model time). */
  stallMs: number
  /** `keepalive`: one comment, `trickle`: one byte, every this many ms (model time). */
  faultIntervalMs: number
  /** Length of the one `data:` line a `huge-line` fault sends, bytes, line end excluded (never shorter than the event's own JSON). */
  hugeLineBytes: number
  /** Tokens per content chunk (speculative-decoding-like). */
  tokensPerChunk: number
  /** Chat only: this many `reasoning_content` tokens precede the content. */
  reasoningTokens: number
  /** Reported usage.completion_tokens = round(true × usageSkew). */
  usageSkew: number
  /** Stop every request after this many tokens, even with ignore_eos. */
  stopEarlyAt: number | null
  /**
   * Keep only the last N prompt tokens of every request (vLLM's truncate_prompt_tokens): a
   * server that ignores part of the prompt, so usage.prompt_tokens < what was sent. /tokenize is not truncated.
   */
  truncatePrompt: number | null
  /**
   * Vocabulary size: a completions prompt given as token ids with an id ≥ vocab is refused with
   * HTTP 400 and vLLM's "Token id N is out of vocabulary" (a model smaller than the ids a client
   * sends). Text prompts are the simulator's own words and always in vocabulary. null: no limit.
   */
  vocab: number | null
  /** The /tokenize this server speaks (TOKENIZE_DIALECTS). */
  tokenize: TokenizeDialect
  /** Reuse the KV of repeated prompt prefixes (in blocks) and count hits in /metrics. */
  prefixCache: boolean
  /** Write `: keep-alive` SSE comments. */
  keepAliveComments: boolean
  /** End SSE lines with CRLF. */
  crlf: boolean
  /** Never send `data: [DONE]`. */
  omitDone: boolean
  /** Delay before a request reaches the engine (a proxy in front), ms; not in /metrics. */
  frontDelayMs: number
  /** Keep the ground-truth traces of at most this many requests (oldest dropped). */
  traceLimit: number
}

export const DEFAULT_SIM_OPTIONS: SimOptions = {
  host: '127.0.0.1',
  port: 0,
  model: 'servegate/sim-model',
  timeScale: 1,
  seed: 0,
  slowdown: 1,
  driftPerMin: 0,
  noiseCv: 0,
  jitterCv: 0,
  faults: [],
  stallMs: 2000,
  faultIntervalMs: 50,
  hugeLineBytes: 8 * 1024 * 1024,
  tokensPerChunk: 1,
  reasoningTokens: 0,
  usageSkew: 1,
  stopEarlyAt: null,
  truncatePrompt: null,
  vocab: null,
  tokenize: 'vllm',
  prefixCache: false,
  keepAliveComments: false,
  crlf: false,
  omitDone: false,
  frontDelayMs: 0,
  traceLimit: 8192,
}

const positive = z.number().finite().positive()
const nonNegative = z.number().finite().nonnegative()
const posInt = z.number().int().positive()

const optionsSchema = z
  .object({
    host: z.string().min(1),
    port: z.number().int().min(0).max(65535),
    model: z.string().min(1),
    ttftMs: nonNegative.optional(),
    itlMs: nonNegative.optional(),
    profile: z.union([z.string().min(1), z.object({}).passthrough()]).optional(),
    timeScale: positive,
    seed: z.number().int(),
    slowdown: positive,
    driftFile: z.string().min(1).optional(),
    driftPerMin: nonNegative,
    noiseCv: nonNegative,
    jitterCv: nonNegative,
    faults: z.array(z.object({ kind: z.enum(FAULT_KINDS), rate: z.number().min(0).max(1) })),
    stallMs: nonNegative,
    faultIntervalMs: positive,
    hugeLineBytes: posInt,
    tokensPerChunk: posInt,
    reasoningTokens: z.number().int().nonnegative(),
    usageSkew: nonNegative,
    stopEarlyAt: posInt.nullable(),
    truncatePrompt: posInt.nullable(),
    vocab: posInt.nullable(),
    tokenize: z.enum(TOKENIZE_DIALECTS),
    prefixCache: z.boolean(),
    keepAliveComments: z.boolean(),
    crlf: z.boolean(),
    omitDone: z.boolean(),
    frontDelayMs: nonNegative,
    traceLimit: posInt,
  })
  .strict()

/** Fill defaults and check every field; throws UsageError naming each bad field. */
export function resolveSimOptions(partial: Partial<SimOptions>): SimOptions {
  const merged = { ...DEFAULT_SIM_OPTIONS, ...dropUndefined(partial) }
  const r = optionsSchema.safeParse(merged)
  if (!r.success) {
    throw new UsageError(`invalid simulator options:\n${formatIssues(r.error)}`)
  }
  const det = [merged.ttftMs, merged.itlMs].filter((v) => v !== undefined).length
  if (det === 1) {
    throw new UsageError('simulator: --ttft-ms and --itl-ms go together (deterministic mode needs both)')
  }
  if (det === 2 && merged.profile !== undefined) {
    throw new UsageError('simulator: choose either deterministic mode (--ttft-ms/--itl-ms) or a batching --profile, not both')
  }
  return merged
}

/** True when the options select deterministic mode. */
export function isDeterministic(o: SimOptions): o is SimOptions & { ttftMs: number; itlMs: number } {
  return o.ttftMs !== undefined && o.itlMs !== undefined
}

function dropUndefined<T extends object>(o: T): Partial<T> {
  const out: Partial<T> = {}
  for (const [k, v] of Object.entries(o)) if (v !== undefined) (out as Record<string, unknown>)[k] = v
  return out
}
