/**
 * The config's gate settings (`gate.tolerance_pct` in percent per metric family,
 * `gate.max_failed_requests`, `gate.design_pct` per metric kind) as gate options. One mapping for the Action, for
 * `servegate compare --config` and for the tolerances a baseline stores, so the
 * same two files get the same verdict everywhere. Pure.
 */
import { METRIC_KIND_KEYS, type MetricKindKey } from '../config/defaults.js'
import type { GateSettings } from '../config/resolve.js'
import { DEFAULT_GATE_OPTIONS } from './options.js'
import type { GateOptions, MetricKind, Tolerances } from './types.js'

// The config's list of kinds (config/defaults.ts) and the gate's must be the same: a compile error here says they drifted.
const sameKinds: [MetricKindKey, MetricKind] extends [MetricKind, MetricKindKey] ? true : never = true
void sameKinds

/**
 * `gate.tolerance_pct` → GateOptions.tolerances, `gate.max_failed_requests` → maxFailedRequests,
 * `gate.design_pct` → design (fractions); unset keys keep the gate's defaults.
 */
export function optionsFromGateSettings(settings: GateSettings): Partial<GateOptions> {
  const pct = settings.tolerancePct
  const tolerances: Tolerances = {}
  if (pct.itl !== undefined) tolerances.itl_p95 = pct.itl / 100
  if (pct.tpot !== undefined) tolerances.tpot_p95 = pct.tpot / 100
  if (pct.ttft !== undefined) tolerances.ttft_p95 = pct.ttft / 100
  if (pct.throughput !== undefined) {
    tolerances.tput_at_target = pct.throughput / 100
    tolerances.output_tput = pct.throughput / 100
    // Goodput is a throughput: gated, it takes the same tolerance.
    if (settings.goodput === true) tolerances.goodput = pct.throughput / 100
  }
  const opts: Partial<GateOptions> = {}
  if (Object.keys(tolerances).length > 0) opts.tolerances = tolerances
  if (settings.maxFailedRequests !== null) opts.maxFailedRequests = settings.maxFailedRequests
  if (settings.goodput === true) opts.gated = [...DEFAULT_GATE_OPTIONS.gated, 'goodput']
  if (settings.maxMdcPct !== undefined) opts.maxMdcPct = settings.maxMdcPct
  const design: Partial<Record<MetricKind, number>> = {}
  for (const [kind, pct] of Object.entries(settings.designPct ?? {}) as Array<[MetricKind, number | undefined]>) {
    if (pct !== undefined) design[kind] = pct / 100
  }
  if (Object.keys(design).length > 0) opts.design = design
  return opts
}

const finiteNonNegative = (x: unknown): x is number => typeof x === 'number' && Number.isFinite(x) && x >= 0

/** The gate settings a result recorded in its config (`config.gate`, see configForResult); null when it recorded none. */
export function gateSettingsOfResult(config: Record<string, unknown>): GateSettings | null {
  const gate = config['gate']
  if (typeof gate !== 'object' || gate === null) return null
  const g = gate as Record<string, unknown>
  const raw = typeof g['tolerance_pct'] === 'object' && g['tolerance_pct'] !== null ? (g['tolerance_pct'] as Record<string, unknown>) : {}
  const tolerancePct: GateSettings['tolerancePct'] = {}
  for (const k of ['itl', 'tpot', 'ttft', 'throughput'] as const) if (finiteNonNegative(raw[k])) tolerancePct[k] = raw[k]
  const max = g['max_failed_requests']
  const mdc = g['max_mdc_pct']
  const gpuMinutes = g['max_gpu_minutes']
  const design = designPctOf(g['design_pct'])
  return {
    tolerancePct,
    maxFailedRequests: finiteNonNegative(max) && Number.isInteger(max) ? max : null,
    ...(g['goodput'] === true ? { goodput: true } : {}),
    ...(finiteNonNegative(mdc) ? { maxMdcPct: mdc } : {}),
    ...(design !== null ? { designPct: design } : {}),
    ...(finitePositive(gpuMinutes) ? { maxGpuMinutes: gpuMinutes } : {}),
  }
}

const finitePositive = (x: unknown): x is number => finiteNonNegative(x) && x > 0

/** A recorded `design_pct`: the known kinds with a percentage above 0; null when none. */
function designPctOf(raw: unknown): Partial<Record<MetricKindKey, number>> | null {
  if (typeof raw !== 'object' || raw === null) return null
  const r = raw as Record<string, unknown>
  const out: Partial<Record<MetricKindKey, number>> = {}
  for (const k of METRIC_KIND_KEYS) {
    const v = r[k]
    if (finitePositive(v)) out[k] = v
  }
  return Object.keys(out).length > 0 ? out : null
}
