/**
 * Batching profiles: the cost model of the simulated engine's step loop.
 *
 * The numbers of every built-in profile are ILLUSTRATIVE, not measurements of
 * any GPU or model: they are chosen so the simulator produces the shapes a
 * real continuous-batching engine does (latency rising with load, throughput
 * saturating, ITL spikes when prefill chunks share a step), at magnitudes of
 * the right order for a mid-size model on one modern GPU.
 *
 * A profile file (YAML or JSON, snake_case keys) overrides fields of a base
 * profile (`base: default` unless given); unknown keys are errors.
 */
import { readFileSync } from 'node:fs'
import { parse as parseYaml } from 'yaml'
import { z } from 'zod'
import { UsageError } from '../errors.js'
import { formatIssues } from '../util/json-file.js'

export interface SimProfile {
  name: string
  description: string
  /** Fixed cost of one engine step, ms (model time). */
  baseStepMs: number
  /** Added per sequence in the step's batch, ms. */
  perSeqMs: number
  /** Added per prefill token scheduled in the step, ms. */
  prefillMsPerToken: number
  /** Most sequences running at once (admission limit). */
  maxRunning: number
  /** Token budget of one step: one per decoding sequence plus prefill chunks. */
  maxBatchTokens: number
  /** KV cache capacity in tokens (admission and preemption limit). */
  kvCapacityTokens: number
  /** KV block size in tokens; also the prefix-cache granularity. */
  blockSize: number
  /** Longest prompt + output accepted. */
  maxModelLen: number
  /** Run-to-run noise CV used when the option `noiseCv` is 0. */
  noiseCv: number
  /** Per-step jitter CV used when the option `jitterCv` is 0. */
  jitterCv: number
  /** Redraw the noise factor every this many ms of model time (null: once per start). */
  noiseWindowMs: number | null
}

const DEFAULT_PROFILE: SimProfile = {
  name: 'default',
  description: 'mid-size model on one modern GPU (illustrative): ~10 ms ITL alone, ~40k prefill tok/s',
  baseStepMs: 9.9,
  perSeqMs: 0.1,
  prefillMsPerToken: 0.025,
  maxRunning: 256,
  maxBatchTokens: 2048,
  kvCapacityTokens: 1_048_576,
  blockSize: 16,
  maxModelLen: 32768,
  noiseCv: 0,
  jitterCv: 0.02,
  noiseWindowMs: null,
}

export const BUILTIN_PROFILES: Readonly<Record<string, SimProfile>> = {
  default: DEFAULT_PROFILE,
  small: {
    ...DEFAULT_PROFILE,
    name: 'small',
    description: 'small model on one GPU (illustrative): ~5 ms ITL alone, ~100k prefill tok/s',
    baseStepMs: 4.95,
    perSeqMs: 0.05,
    prefillMsPerToken: 0.01,
    maxRunning: 512,
    maxBatchTokens: 8192,
    kvCapacityTokens: 2_097_152,
  },
  large: {
    ...DEFAULT_PROFILE,
    name: 'large',
    description: 'large model split over several GPUs (illustrative): ~25 ms ITL alone, ~12k prefill tok/s',
    baseStepMs: 24.8,
    perSeqMs: 0.2,
    prefillMsPerToken: 0.08,
    maxRunning: 128,
    maxBatchTokens: 2048,
    kvCapacityTokens: 393_216,
  },
}

const fileSchema = z
  .object({
    base: z.string().optional(),
    name: z.string().min(1).optional(),
    description: z.string().optional(),
    base_step_ms: z.number().positive().optional(),
    per_seq_ms: z.number().nonnegative().optional(),
    prefill_ms_per_token: z.number().nonnegative().optional(),
    max_running: z.number().int().positive().optional(),
    max_batch_tokens: z.number().int().positive().optional(),
    kv_capacity_tokens: z.number().int().positive().optional(),
    block_size: z.number().int().positive().optional(),
    max_model_len: z.number().int().positive().optional(),
    noise_cv: z.number().nonnegative().optional(),
    jitter_cv: z.number().nonnegative().optional(),
    noise_window_ms: z.number().positive().nullable().optional(),
  })
  .strict()

/** A built-in profile by name; throws UsageError listing the known names. */
function builtinProfile(name: string): SimProfile {
  const p = BUILTIN_PROFILES[name]
  if (!p) {
    throw new UsageError(
      `unknown simulator profile "${name}"; known profiles: ${Object.keys(BUILTIN_PROFILES).join(', ')}`,
      'Pass a built-in name or the path of a YAML/JSON profile file.',
    )
  }
  return p
}

/** True when `ref` looks like a file path rather than a profile name. */
function looksLikePath(ref: string): boolean {
  return /[/\\]/.test(ref) || /\.(ya?ml|json)$/i.test(ref)
}

/** Resolve a profile reference (name, file path or object) to a checked profile. */
export function resolveProfile(ref: string | SimProfile | undefined): SimProfile {
  if (ref === undefined) return DEFAULT_PROFILE
  if (typeof ref !== 'string') return checkProfile(ref, 'profile object')
  if (!looksLikePath(ref)) return builtinProfile(ref)
  let text: string
  try {
    text = readFileSync(ref, 'utf8')
  } catch (err) {
    throw new UsageError(`cannot read simulator profile file ${ref}: ${(err as Error).message}`)
  }
  let raw: unknown
  try {
    raw = ref.toLowerCase().endsWith('.json') ? JSON.parse(text) : parseYaml(text)
  } catch (err) {
    throw new UsageError(`simulator profile ${ref} is not valid YAML/JSON: ${(err as Error).message}`)
  }
  return profileFromFile(raw, ref)
}

/** Turn a parsed profile file (snake_case) into a profile over its base. */
export function profileFromFile(raw: unknown, source: string): SimProfile {
  const r = fileSchema.safeParse(raw ?? {})
  if (!r.success) {
    throw new UsageError(`${source} is not a valid simulator profile:\n${formatIssues(r.error)}`)
  }
  const f = r.data
  const base = builtinProfile(f.base ?? 'default')
  return checkProfile(
    {
      name: f.name ?? source,
      description: f.description ?? `from ${source} over ${base.name}`,
      baseStepMs: f.base_step_ms ?? base.baseStepMs,
      perSeqMs: f.per_seq_ms ?? base.perSeqMs,
      prefillMsPerToken: f.prefill_ms_per_token ?? base.prefillMsPerToken,
      maxRunning: f.max_running ?? base.maxRunning,
      maxBatchTokens: f.max_batch_tokens ?? base.maxBatchTokens,
      kvCapacityTokens: f.kv_capacity_tokens ?? base.kvCapacityTokens,
      blockSize: f.block_size ?? base.blockSize,
      maxModelLen: f.max_model_len ?? base.maxModelLen,
      noiseCv: f.noise_cv ?? base.noiseCv,
      jitterCv: f.jitter_cv ?? base.jitterCv,
      noiseWindowMs: f.noise_window_ms === undefined ? base.noiseWindowMs : f.noise_window_ms,
    },
    source,
  )
}

function checkProfile(p: SimProfile, source: string): SimProfile {
  const problems: string[] = []
  if (!(p.baseStepMs > 0)) problems.push('baseStepMs must be > 0')
  if (!(p.perSeqMs >= 0) || !(p.prefillMsPerToken >= 0)) problems.push('costs must be >= 0')
  for (const k of ['maxRunning', 'maxBatchTokens', 'kvCapacityTokens', 'blockSize', 'maxModelLen'] as const) {
    if (!Number.isInteger(p[k]) || p[k] <= 0) problems.push(`${k} must be a positive integer`)
  }
  if (p.kvCapacityTokens < p.maxModelLen) problems.push('kvCapacityTokens must hold at least one maxModelLen sequence')
  if (problems.length > 0) throw new UsageError(`${source} is not a valid simulator profile: ${problems.join('; ')}`)
  return p
}
