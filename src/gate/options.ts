import type { Baseline, GateOptions, MetricKind } from './types.js'

/**
 * Defaults of the decision rule, measured with `npm run bench -- gate-false-alarms`
 * (docs/gate.md, "False alarms and power"): 1 % false alarms per pull request
 * however many rows it gates, a minimum detectable change stated at 90 % power,
 * and priors of 2.5 % day-to-day drift and 2 % run-to-run noise while the history
 * shows less.
 */
export const DEFAULT_GATE_OPTIONS: GateOptions = {
  gated: ['itl_p95', 'tput_at_target'],
  tolerances: {},
  defaultTolerance: 0.05,
  alpha: 0.01,
  rows: 1,
  look: 'last',
  alphaShare: 1,
  power: 0.9,
  centerWindow: 10,
  minHistory: 5,
  dayFloor: 0.025,
  withinFloor: 0.02,
  failedRequestBudget: 0.01,
  maxFailedRequests: null,
  tokenCountTolerance: 0.01,
  maxRepeats: 9,
  // Null: three times each row's tolerance (15 % at the default 5 %); a row blinder than that never passes.
  maxMdcPct: null,
  design: { itl_p95: 0.1, tput_at_target: 0.15 },
  maxLooks: 1,
  onHostChange: 'unmeasured',
}

/** Defaults, then the baseline file's tolerances and failed-request count, then the caller's options. */
export function resolveGateOptions(
  baseline: Pick<Baseline, 'tolerances' | 'max_failed_requests' | 'gated'> | null,
  opts: Partial<GateOptions> = {},
): GateOptions {
  return {
    ...DEFAULT_GATE_OPTIONS,
    ...(baseline?.max_failed_requests !== undefined ? { maxFailedRequests: baseline.max_failed_requests } : {}),
    ...(baseline?.gated !== undefined ? { gated: baseline.gated } : {}),
    ...opts,
    tolerances: { ...DEFAULT_GATE_OPTIONS.tolerances, ...baseline?.tolerances, ...opts.tolerances },
    design: { ...DEFAULT_GATE_OPTIONS.design, ...opts.design },
  }
}

/** Tolerance (fraction) used for one metric kind. */
export function toleranceFor(opts: GateOptions, kind: MetricKind): number {
  return opts.tolerances[kind] ?? opts.defaultTolerance
}

/** The change (fraction) a row of `kind` is designed to catch (the sequential test's δ). */
export function designFor(opts: Pick<GateOptions, 'design'>, kind: MetricKind): number {
  return opts.design[kind] ?? 0.1
}
