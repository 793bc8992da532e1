import type { Baseline, GateOptions, MetricKind } from './types.js'

/**
 * Defaults of the decision rule. Tuned with bench/gate-power.ts so that, at
 * 2–3 % run-to-run CV with day-to-day drift and interference outliers, a PR
 * with 4 gated metrics sees ≤ 1 % false alarms and ≥ 95 % detection of a 10 %
 * regression; the reasoning behind each constant is in docs/gate.md. While the
 * history is shorter than `minHistory`, `shortDayFloor` keeps a server whose
 * speed moves 2–3 % from one start to the next from failing unchanged PRs.
 */
export const DEFAULT_GATE_OPTIONS: GateOptions = {
  gated: ['itl_p95', 'tput_at_target'],
  tolerances: {},
  defaultTolerance: 0.05,
  k: 2.5,
  earlyK: 3.5,
  passMargin: 1.5,
  centerWindow: 10,
  minHistory: 5,
  dayFloor: 0.015,
  shortDayFloor: 0.035,
  withinFloor: 0.02,
  failedRequestBudget: 0.01,
  maxFailedRequests: null,
  tokenCountTolerance: 0.01,
  maxRepeats: 9,
  // Three times the default 5 % tolerance: an undecided row blinder than this fails the check.
  maxMdcPct: 15,
}

/** Defaults, then the baseline file's tolerances and failed-request count, then the caller's options. */
export function resolveGateOptions(baseline: Pick<Baseline, 'tolerances' | 'max_failed_requests' | 'gated'> | null, opts: Partial<GateOptions> = {}): GateOptions {
  return {
    ...DEFAULT_GATE_OPTIONS,
    ...(baseline?.max_failed_requests !== undefined ? { maxFailedRequests: baseline.max_failed_requests } : {}),
    ...(baseline?.gated !== undefined ? { gated: baseline.gated } : {}),
    ...opts,
    tolerances: { ...DEFAULT_GATE_OPTIONS.tolerances, ...baseline?.tolerances, ...opts.tolerances },
  }
}

/** Tolerance (fraction) used for one metric kind. */
export function toleranceFor(opts: GateOptions, kind: MetricKind): number {
  return opts.tolerances[kind] ?? opts.defaultTolerance
}
