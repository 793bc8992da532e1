/**
 * Every threshold the validity rules use, named and explained. A run that
 * trips a rule is marked invalid and cannot pass a gate.
 */

export interface ValidityThresholds {
  /** client_saturated: highest worker event-loop utilisation (0..1) at or above which the client was the bottleneck. */
  clientEluMax: number
  /** client_saturated: p99 lag between a slot freeing and the next request being sent, ms, above which the client was late… */
  sendLagP99MaxMs: number
  /** …unless it is under this share of the median E2EL (a burst of simultaneous refills queues behind itself harmlessly). */
  sendLagP99MaxShareOfE2el: number
  /** client_saturated: mean requests in flight while requests were waiting, as a fraction of C, below which slots sat idle. */
  inFlightMinFraction: number
  /** token_count_mismatch: relative tolerance between server usage, client chunks, max_tokens and the server's generation_tokens. */
  tokenCountTolerance: number
  /** token_count_mismatch: relative tolerance between usage and the re-tokenised text (detokenise → tokenise is not exact). */
  retokenizedTolerance: number
  /** output_len_mismatch: share of the expected output (requests × max_tokens with ignore_eos) that may be missing. */
  outputShortfallTolerance: number
  /** prefix_cache_contaminated: prefix-cache hits as a share of queried tokens above which a unique-prompt run was served from cache. */
  prefixCacheMaxHitFraction: number
  /** ramp_dominated: share of the run outside the all-slots-busy window above which the point describes the ramp, not the load. */
  rampFractionMax: number
  /** too_few_requests: completed requests below which percentiles are a handful of samples. */
  minCompletedRequests: number
  /** too_few_requests: ITL samples (gaps) below which ITL p99 is little more than the maximum. */
  minItlSamples: number
  /** gpu_throttled: SM clock under load below this fraction of its maximum. */
  smClockMinFraction: number
  /** gpu_throttled: GPU utilisation (%) at or above which a sample counts as "under load". */
  gpuBusyUtilizationPct: number
  /** gpu_throttled: clock-event reasons that are not throttling (idle, user-set application clocks, sync boost). */
  benignThrottleReasons: readonly string[]
}

/** The defaults; see each field. */
export const DEFAULT_VALIDITY_THRESHOLDS: Readonly<ValidityThresholds> = Object.freeze({
  // A loop busy ≥ 90% of the time delays chunk timestamps by queueing behind other work.
  clientEluMax: 0.9,
  // Normal send lag is well under 1 ms; VM wake-ups cost 1–3 ms at p99. 10 ms is a client that fell behind,
  // unless requests are long: when C requests end together (lockstep decoding) their refills go out one
  // after another, ~0.4 ms each here (27 ms p99 at C = 64, measured), which costs < 2% of a 1.4 s request.
  sendLagP99MaxMs: 10,
  sendLagP99MaxShareOfE2el: 0.05,
  // A healthy closed loop keeps ~C in flight (a refill takes < 1 ms of a request lasting far longer).
  inFlightMinFraction: 0.85,
  tokenCountTolerance: 0.02,
  retokenizedTolerance: 0.1,
  // With ignore_eos every request must produce exactly max_tokens: any shortfall is an early stop.
  outputShortfallTolerance: 0,
  // Prompts are seeded and unique per repeat: any hit means reuse.
  prefixCacheMaxHitFraction: 0,
  // With 12 prompts per slot a healthy run spends ~5–15% filling and draining.
  rampFractionMax: 0.25,
  minCompletedRequests: 10,
  // p99 of fewer than 100 samples is the maximum or next to it.
  minItlSamples: 100,
  // Boost clocks vary by a few %; 20% below max under load is a power or thermal cut.
  smClockMinFraction: 0.8,
  gpuBusyUtilizationPct: 50,
  benignThrottleReasons: Object.freeze(['gpu_idle', 'idle', 'applications_clocks_setting', 'sync_boost', 'none', 'not_active']),
})
