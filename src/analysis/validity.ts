/**
 * Validity of one run: the known ways a serving benchmark produces a
 * confident, wrong number (docs/validity.md), each checked from the run's own
 * figures. Rules live in validity-rules.ts, thresholds (named and explained)
 * in validity-thresholds.ts.
 */
import type { RunResult, Validity, ValidityCode } from '../types.js'
import { RULES, clientOutputTokens, type RuleContext } from './validity-rules.js'
import { DEFAULT_VALIDITY_THRESHOLDS, type ValidityThresholds } from './validity-thresholds.js'

export { DEFAULT_VALIDITY_THRESHOLDS, type ValidityThresholds } from './validity-thresholds.js'

export interface ValidityContext extends RuleContext {
  /** Overrides of DEFAULT_VALIDITY_THRESHOLDS. */
  thresholds?: Partial<ValidityThresholds>
}

/**
 * Judge a run from scratch (any issues already in run.validity are replaced,
 * so calling it twice gives the same answer). Valid ⇔ no issue.
 */
export function assessValidity(run: RunResult, ctx: ValidityContext): Validity {
  const t: ValidityThresholds = { ...DEFAULT_VALIDITY_THRESHOLDS, ...ctx.thresholds }
  const issues = RULES.map((rule) => rule(run, ctx, t)).filter((i) => i !== null)
  return { valid: issues.length === 0, issues }
}

/**
 * The codes that say the host, not the engine or the sweep, spoiled a run: the load generator
 * could not keep up, another process used the GPU, or the GPU slowed its clocks.
 */
export const HOST_CODES: readonly ValidityCode[] = Object.freeze(['client_saturated', 'gpu_shared', 'gpu_throttled'])

/**
 * Whether a run is invalid for host codes alone, so measuring it again could give a valid run
 * (sweep `host_retries`). A run with any other issue is never measured again: a failed request,
 * a short output or a contaminated cache is what the engine or the sweep did.
 */
export function spoiledOnlyByHost(validity: Validity): boolean {
  return !validity.valid && validity.issues.length > 0 && validity.issues.every((i) => HOST_CODES.includes(i.code))
}

const DESCRIPTIONS: Record<ValidityCode, string> = {
  client_saturated:
    "The load generator, not the server, was the bottleneck, so latencies include the client's own delays and throughput is the client's ceiling.",
  token_count_mismatch: 'The server and the client counted output tokens differently, so throughput and per-token latencies cannot be trusted.',
  output_len_mismatch: 'The server produced fewer output tokens than requested despite ignore_eos, so the run did not measure the intended shape.',
  input_len_mismatch:
    'The server processed a different number of prompt tokens than the input length sent (it ignored part of the prompt, or the chat template added to it), so the run did not measure the intended shape.',
  prompt_uncalibrated:
    "servegate could not size the chat prompts (the server has no /tokenize that counts chat messages), so the chat template's tokens came on top of the input length: the run did not measure the intended shape, through servegate's gap, not the server's fault.",
  prefix_cache_contaminated: 'Prompts meant to be unique were served from the prefix cache, which skips prefill and makes TTFT look better than it is.',
  ramp_dominated: 'Most of the run was spent filling or draining the concurrency slots, so the figures do not describe steady load.',
  requests_failed: 'Some requests failed, so the figures cover only part of the load.',
  too_few_requests: 'Too few requests or tokens were measured for the reported percentiles to mean much.',
  gpu_throttled: 'The GPU slowed its clocks (power or heat) during the run, so the engine ran below its normal speed.',
  gpu_shared: 'Another process was using the GPU during the run, so the engine did not have it to itself.',
  shards_unaligned:
    "The run's shards (load hosts of a sharded sweep) started, began measuring or ended further apart than the alignment bound, so for part of the window the server carried less than the point's concurrency.",
  checks_not_run:
    'The run was measured by another tool and imported, so servegate could not make the checks it names; its figures are used, marked unverified.',
}

/** One plain-words sentence explaining a validity code, for reports. */
export function describeIssue(code: ValidityCode): string {
  return DESCRIPTIONS[code]
}

/**
 * Observations about token counting that are not faults: multi-token chunks
 * with consistent totals (speculative decoding), or no usage from the server.
 * Reports show them beside the run; they never make it invalid.
 */
export function tokenNotes(run: RunResult, thresholds?: Partial<ValidityThresholds>): string[] {
  const t: ValidityThresholds = { ...DEFAULT_VALIDITY_THRESHOLDS, ...thresholds }
  const k = run.tokens
  const notes: string[] = []
  if (run.completed > 0 && k.server_usage === null) {
    notes.push(`The server sent no usage; output tokens are the client's count of ${k.client_chunks} content chunks.`)
  }
  if (run.completed > 0 && k.server_usage !== null && k.prompt_server_usage === null) {
    notes.push("The server's usage carried no prompt_tokens, so the prompt length it processed is unchecked.")
  }
  if (k.tokens_per_chunk !== null && k.tokens_per_chunk > 1 + t.tokenCountTolerance) {
    notes.push(
      `Chunks carried ${k.tokens_per_chunk.toFixed(2)} tokens on average (${clientOutputTokens(run)} tokens in ${k.client_chunks} chunks), as with speculative decoding; itl_ms is per chunk and itl_per_token_ms divides each gap by the request's mean tokens per chunk (a stream does not say how many tokens each chunk held).`,
    )
  }
  return notes
}
