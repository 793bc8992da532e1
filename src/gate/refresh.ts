/**
 * Building a baseline's history from results: a refresh's per-run figures and left-out runs,
 * the gated profile, the gate settings it was measured with, and the checks that keep one
 * history to one sweep and one host. Pure: the store (store/baseline.ts) reads and writes it.
 */
import { UsageError } from '../errors.js'
import type { ResultFile } from '../types.js'
import { recordedBracket } from './bracket.js'
import { describeChanges } from './env-diff.js'
import { extractFigures } from './extract.js'
import { diffFingerprint, resultFingerprint } from './fingerprint.js'
import { describeHost, hostFingerprintChanges } from './host-history.js'
import { showsGpus } from './host-identity.js'
import { shapeLabel } from './metric-keys.js'
import { gateSettingsOfResult, optionsFromGateSettings } from './settings.js'
import { BASELINE_SCHEMA, type Baseline, type BaselineInvalidRun, type BaselineRefresh } from './types.js'

/** Refreshes kept by default: enough for a robust day-to-day spread, recent enough to reflect today's machine. */
export const DEFAULT_MAX_HISTORY = 10
/**
 * Starts kept in a baseline's noise history (for the spread alone): about 100 degrees of freedom
 * with the refreshes, where the upper bound σ is designed with comes within 10 % of the estimate.
 */
export const DEFAULT_MAX_NOISE = 30

export interface AppendOptions {
  /** Name of a new baseline (ignored when appending to an existing one). */
  name?: string
  /** Refreshes to keep, newest last. */
  maxHistory?: number
  /** Starts to keep in the noise history, newest last (DEFAULT_MAX_NOISE). */
  maxNoise?: number
  /** Commit of the project measured. */
  commit?: string
  /** Where the result came from, for error messages. */
  source?: string
}

/** The gated sweep a result was measured with: its shapes and concurrencies, sorted. */
export function profileOf(result: ResultFile): Baseline['profile'] {
  const shapes = new Map<string, { input_len: number; output_len: number }>()
  for (const p of [...result.points, ...result.at_target]) {
    shapes.set(shapeLabel(p.input_len, p.output_len), { input_len: p.input_len, output_len: p.output_len })
  }
  const rates = [...new Set(result.points.flatMap((p) => (p.request_rate === undefined ? [] : [p.request_rate])))]
  return {
    shapes: [...shapes.values()].sort((a, b) => a.input_len - b.input_len || a.output_len - b.output_len),
    concurrency: [...new Set(result.points.map((p) => p.concurrency))].sort((a, b) => a - b),
    // Open loop: the points are rates (the concurrency is each point's cap), `inf` last.
    ...(rates.length > 0 ? { request_rates: rates.sort((a, b) => (a === 'inf' ? Infinity : a) - (b === 'inf' ? Infinity : b)) } : {}),
  }
}

/** One refresh: the valid per-run figures of every key, and which runs were left out and why. */
export function refreshFromResult(result: ResultFile, commit?: string): BaselineRefresh {
  const runs: Record<string, number[]> = {}
  const invalid: BaselineInvalidRun[] = []
  for (const [key, list] of extractFigures(result)) {
    runs[key] = list.flatMap((r) => (r.valid && r.value !== null ? [r.value] : []))
    // One entry per scope and repeat: take it from the key that exists once per scope.
    if (key.startsWith('itl_p95@') || key.startsWith('tput_at_target@')) {
      const scope = key.slice(key.indexOf('@') + 1)
      for (const r of list) if (!r.valid) invalid.push({ scope, repeat: r.repeat, codes: r.codes })
    }
  }
  const at = result.env.finished_at !== 'unknown' ? result.env.finished_at : result.env.started_at
  return { at, env: result.env, ...(commit === undefined ? {} : { commit }), runs, invalid, fingerprint: resultFingerprint(result) }
}

/**
 * The gate settings the result was measured with (its config's `gate`), as the baseline
 * stores them, so a bare `servegate compare` decides like the Action; none recorded: keep `existing`'s.
 */
function gateSettingsFor(result: ResultFile, existing: Baseline | null): Pick<Baseline, 'tolerances' | 'max_failed_requests' | 'gated'> {
  const settings = gateSettingsOfResult(result.config)
  if (settings === null) {
    return {
      ...(existing?.tolerances ? { tolerances: existing.tolerances } : {}),
      ...(existing?.max_failed_requests !== undefined ? { max_failed_requests: existing.max_failed_requests } : {}),
      ...(existing?.gated ? { gated: existing.gated } : {}),
    }
  }
  const opts = optionsFromGateSettings(settings)
  return {
    ...(opts.tolerances ? { tolerances: opts.tolerances } : {}),
    ...(opts.maxFailedRequests !== undefined && opts.maxFailedRequests !== null ? { max_failed_requests: opts.maxFailedRequests } : {}),
    ...(opts.gated ? { gated: opts.gated } : {}),
  }
}

/** A one-refresh baseline from a result (also how `compare` treats a result given as BASELINE). */
export function baselineFromResult(result: ResultFile, name: string, commit?: string): Baseline {
  return appendRefresh(null, result, { name, ...(commit === undefined ? {} : { commit }) })
}

/** `existing` (or a new baseline) with `result` appended as its newest refresh; throws when the result's config differs. */
export function appendRefresh(existing: Baseline | null, result: ResultFile, opts: AppendOptions = {}): Baseline {
  const source = opts.source ?? 'the result'
  const maxHistory = opts.maxHistory ?? DEFAULT_MAX_HISTORY
  if (!Number.isInteger(maxHistory) || maxHistory < 1) {
    throw new UsageError(`--max-history ${maxHistory}: expected a positive integer`)
  }
  // A bracketed PR sweep measured a few points around the crossing: no curve a later gate could bracket or compare against.
  const narrowed = [...(recordedBracket(result)?.shapes.entries() ?? [])].filter(([, s]) => s.below !== null)
  if (narrowed.length > 0) {
    const where = narrowed.map(([label, s]) => `${label} at c=${s.concurrency.join(', ')}`).join('; ')
    throw new UsageError(
      `${source} is a bracketed sweep (${where} only); a baseline refresh needs the whole concurrency list`,
      'Refresh the baseline with the same sweep run without --bracket-baseline.',
    )
  }
  const profile = profileOf(result)
  if (profile.shapes.length === 0 || profile.concurrency.length === 0) {
    throw new UsageError(`${source} has no measured points; nothing to store in a baseline`)
  }
  const refresh = refreshFromResult(result, opts.commit)
  if (!Object.values(refresh.runs).some((v) => v.length > 0)) {
    throw new UsageError(`${source} has no valid runs; a baseline refresh needs at least one`, 'Look at the validity issues of its runs.')
  }
  if (existing === null) {
    return {
      schema: BASELINE_SCHEMA,
      name: opts.name ?? 'baseline',
      target: result.target,
      profile,
      refreshes: [refresh],
      ...gateSettingsFor(result, null),
    }
  }
  assertSameConfig(existing, result, profile, source)
  assertSameHost(existing, result, source)
  // A refresh that leaves the history keeps its spread: it moves to the noise history.
  const all = [...existing.refreshes, refresh]
  const left = all.slice(0, Math.max(0, all.length - maxHistory))
  return {
    schema: existing.schema,
    name: existing.name,
    target: existing.target,
    profile: existing.profile,
    refreshes: all.slice(-maxHistory),
    ...withNoise([...(existing.noise_history ?? []), ...left], opts.maxNoise),
    ...gateSettingsFor(result, existing),
  }
}

function withNoise(starts: BaselineRefresh[], maxNoise = DEFAULT_MAX_NOISE): Pick<Baseline, 'noise_history'> {
  if (!Number.isInteger(maxNoise) || maxNoise < 0) throw new UsageError(`--max-noise ${maxNoise}: expected a whole number`)
  const kept = maxNoise === 0 ? [] : starts.slice(-maxNoise)
  return kept.length > 0 ? { noise_history: kept } : {}
}

/**
 * `existing` with `result` kept in its noise history: a start of the base branch's engine on the
 * history's host, measured for its spread alone (the scheduled watch's start), never the centre.
 * The same checks as a refresh: the same gated sweep and settings, the same host.
 */
export function appendNoise(existing: Baseline, result: ResultFile, opts: AppendOptions = {}): Baseline {
  const source = opts.source ?? 'the result'
  const profile = profileOf(result)
  if (profile.shapes.length === 0 || profile.concurrency.length === 0 || recordedBracket(result) !== null) {
    throw new UsageError(`${source} is not a whole gated sweep; the noise history keeps whole sweeps only`)
  }
  assertSameConfig(existing, result, profile, source)
  assertSameHost(existing, result, source)
  const start = refreshFromResult(result, opts.commit)
  if (!Object.values(start.runs).some((v) => v.length > 0)) {
    throw new UsageError(`${source} has no valid runs; nothing of its spread to keep`, 'Look at the validity issues of its runs.')
  }
  return { ...existing, ...withNoise([...(existing.noise_history ?? []), start], opts.maxNoise) }
}

/**
 * A new history from `result` (`baseline update --reset`, after an intentional performance
 * change) that keeps the spread of `previous`: its refreshes and noise history move to the new
 * one's noise history where they measured the same gated sweep with the same settings (fingerprint)
 * on the same host. The centre
 * starts afresh; this host's noise is no different for it.
 */
export function resetKeepingNoise(previous: Baseline | null, result: ResultFile, opts: AppendOptions = {}): Baseline {
  const fresh = appendRefresh(null, result, opts)
  if (previous === null) return fresh
  const same = (p: Baseline['profile']): string => JSON.stringify(p)
  if (same(previous.profile) !== same(fresh.profile)) return fresh
  const measuredAlike = (r: BaselineRefresh): boolean => r.fingerprint !== undefined && diffFingerprint(r.fingerprint, resultFingerprint(result)).length === 0
  const kept = [...(previous.noise_history ?? []), ...previous.refreshes].filter(
    (r) => hostFingerprintChanges(r.env, result.env).length === 0 && measuredAlike(r),
  )
  return { ...fresh, ...withNoise(kept, opts.maxNoise) }
}

function assertSameConfig(b: Baseline, result: ResultFile, profile: Baseline['profile'], source: string): void {
  const problems: string[] = []
  const t = result.target
  if (b.target.metric !== t.metric || b.target.percentile !== t.percentile || b.target.threshold_ms !== t.threshold_ms) {
    problems.push(`target: baseline ${describeTarget(b.target)}, result ${describeTarget(t)}`)
  }
  const shapes = (p: Baseline['profile']): string => p.shapes.map((s) => shapeLabel(s.input_len, s.output_len)).join(', ')
  if (shapes(b.profile) !== shapes(profile)) problems.push(`shapes: baseline ${shapes(b.profile)}, result ${shapes(profile)}`)
  const conc = (p: Baseline['profile']): string => [...p.concurrency].sort((x, y) => x - y).join(', ')
  if (conc(b.profile) !== conc(profile)) problems.push(`concurrency: baseline ${conc(b.profile)}, result ${conc(profile)}`)
  // Measurement settings (api, model, prompts per concurrency, warmup, ignore_eos) against the newest refresh.
  const newest = b.refreshes.at(-1)?.fingerprint
  if (newest) {
    const reported = new Set(['target', 'shapes', 'concurrency'])
    for (const d of diffFingerprint(newest, resultFingerprint(result))) {
      if (!reported.has(d.field)) problems.push(`${d.field}: baseline ${d.baseline}, result ${d.candidate}`)
    }
  }
  if (problems.length > 0) {
    throw new UsageError(
      `${source} was measured with a different gated sweep than baseline ${b.name}:\n${problems.map((p) => `  ${p}`).join('\n')}`,
      'Run the same sweep as the baseline, or start a new history with --reset (or a new baseline file) for the new configuration.',
    )
  }
}

/**
 * One host per history: the gate's spread must be one machine's (gate/host-history.ts), so a
 * refresh from another machine, other GPUs, another driver or CUDA starts a new history
 * (`--reset`) instead. The refresh is compared with every refresh kept, not only the newest: one
 * that could not see a field (an unknown driver) must not let a refresh with another value in
 * behind it. A refresh that shows no GPU where the history saw some, or the reverse, cannot show
 * it is the history's host either.
 */
function assertSameHost(b: Baseline, result: ResultFile, source: string): void {
  if (b.refreshes.length === 0) return
  const advice =
    "A baseline history holds one host, so the gate's spread is that machine's. Start a new history on this host with servegate baseline update --reset (the Action: mode refresh with reset: true), or refresh on the history's host."
  for (let i = b.refreshes.length - 1; i >= 0; i--) {
    const r = b.refreshes[i]!
    const changes = hostFingerprintChanges(r.env, result.env)
    if (changes.length === 0) continue
    const which = i === b.refreshes.length - 1 ? '' : ` since its refresh ${i + 1} of ${b.refreshes.length} (${r.at})`
    throw new UsageError(
      `${source} was measured on another host than baseline ${b.name}'s history: ${describeChanges(changes)}${which} (history: ${describeHost(r.env)})`,
      advice,
    )
  }
  const sawGpus = b.refreshes.some((r) => showsGpus(r.env))
  if (sawGpus !== showsGpus(result.env)) {
    const newest = b.refreshes.at(-1)!
    throw new UsageError(
      sawGpus
        ? `${source} shows no GPU (nvidia-smi saw none, or the server ran on another machine) while baseline ${b.name}'s history was measured on GPUs (${describeHost(newest.env)}): nothing shows it is the history's host`
        : `${source} was measured on GPUs (${describeHost(result.env)}) while baseline ${b.name}'s history shows none (nvidia-smi saw none, or its server ran on another machine): nothing shows it is the history's host`,
      advice,
    )
  }
}

function describeTarget(t: Baseline['target']): string {
  return `${t.metric} p${t.percentile} ≤ ${t.threshold_ms} ms`
}
