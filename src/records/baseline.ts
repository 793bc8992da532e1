/**
 * The stored baseline, `servegate.baseline/v1`: a history of refreshes of one gated sweep on one
 * host. Snake_case: it is a file contract, shared by the gate (which builds and reads it) and the
 * store (which validates and writes it).
 */
import type { EnvRecord, Fingerprint, ResultTarget } from '../types.js'

export const BASELINE_SCHEMA = 'servegate.baseline/v1'

/** What a row measures. Latencies are p95 over requests of one run, throughputs per run. */
export type MetricKind = 'itl_p95' | 'tput_at_target' | 'ttft_p95' | 'tpot_p95' | 'e2el_p95' | 'req_tput' | 'output_tput' | 'goodput'

/** Tolerance per metric kind, as a fraction (0.05 = 5 %). */
export type Tolerances = Partial<Record<MetricKind, number>>

/** One invalid run of a stored refresh, kept so the history says why a figure is absent. */
export interface BaselineInvalidRun {
  /** Point label `4096x512@c16` or shape label `4096x512` (throughput at target). */
  scope: string
  repeat: number
  codes: string[]
}

/** One refresh of the baseline: a full gated sweep measured on one occasion. */
export interface BaselineRefresh {
  /** ISO time the refresh's result finished. */
  at: string
  env: EnvRecord
  /** Commit of the project measured (not servegate's own), when known. */
  commit?: string
  /** Metric key (`itl_p95@4096x512@c16`, `tput_at_target@4096x512`, `out_tok@…`) → one value per valid run. */
  runs: Record<string, number[]>
  invalid: BaselineInvalidRun[]
  /** What was measured and how (gate/fingerprint.ts); absent in refreshes stored before it was recorded. */
  fingerprint?: Fingerprint
}

/** The `servegate.baseline/v1` file. */
export interface Baseline {
  schema: typeof BASELINE_SCHEMA
  name: string
  target: ResultTarget
  /** The gated sweep every refresh and candidate must use. */
  profile: {
    shapes: Array<{ input_len: number; output_len: number }>
    concurrency: number[]
    /** An open-loop sweep's request rates (its points are `INxOUT@rateR`); absent for a closed-loop sweep. */
    request_rates?: Array<number | 'inf'>
  }
  /** Newest last, trimmed to the configured history length. */
  refreshes: BaselineRefresh[]
  /**
   * Earlier engine starts of the base branch's engine, kept for their spread alone and never for the
   * centre, newest last: refreshes that left `refreshes` (trimmed, or set aside by `--reset`) and
   * starts recorded with `baseline update --noise-only` (the scheduled watch). The sequential
   * decision draws σ from these and the refreshes together, so a short or newly reset history still
   * has a deep estimate of this host's noise. Absent: none yet.
   */
  noise_history?: BaselineRefresh[]
  /** The config's gate tolerances when the newest refresh was stored, so a bare `compare` decides like the Action. */
  tolerances?: Tolerances
  /** The config's `gate.max_failed_requests` when the newest refresh was stored. */
  max_failed_requests?: number
  /** The gated metric kinds when the config changed them (`gate.goodput: true` adds goodput); absent: the gate's default. */
  gated?: MetricKind[]
}
