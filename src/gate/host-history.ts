/**
 * One host per baseline history. A spread measured on other GPUs says nothing
 * about the noise of this one: a history of three refreshes on one GPU model
 * and one on another judged a candidate on the new GPU against the old GPUs'
 * spread and centre. So the gate draws its spread only from the refreshes of
 * the candidate's host, and `baseline update` refuses to mix hosts in one
 * history. The host is the machine that served the model (its identity,
 * ./host-identity.ts: host name, machine id, CPU model and count, GPU UUIDs)
 * and what the environment record says its GPUs are: model and count (the
 * declared `--gpus` count when given, so a remote server whose GPUs nvidia-smi
 * cannot see is the host its operator declared), driver and CUDA. As in
 * ./host-change.ts, a side that could not see a field (`unknown`) proves no
 * change there; `baseline update` also refuses a refresh that shows no GPU
 * where the history saw some, or the reverse. Pure.
 */
import type { EnvRecord } from '../types.js'
import { describeChanges, diffEnv, isKnownChange } from './env-diff.js'
import { IDENTITY_FIELD_NAMES, servingMachine } from './host-identity.js'
import type { Baseline, BaselineRefresh } from './types.js'

/** The part of the host that is the machine itself (env-diff.ts field names); driver and CUDA are software on it. */
const MACHINE_FIELDS: readonly string[] = ['GPU', 'GPU count', ...IDENTITY_FIELD_NAMES]
/** The environment fields that name the host of a baseline history. */
const HOST_FIELDS: readonly string[] = [...MACHINE_FIELDS, 'driver', 'CUDA']

export interface HostFieldChange {
  /** An env-diff.ts field name: `GPU`, `GPU count`, `driver`, `CUDA`, or an identity field (`host name`, …). */
  field: string
  baseline: string
  candidate: string
}

/** The host fields (the machine, its GPU model and count, driver, CUDA) that both environments recorded and that differ. */
export function hostFingerprintChanges(from: EnvRecord, to: EnvRecord): HostFieldChange[] {
  return diffEnv(from, to).changes.flatMap((c) =>
    HOST_FIELDS.includes(c.field) && isKnownChange(c) ? [{ field: c.field, baseline: c.baseline, candidate: c.candidate }] : [],
  )
}

/** `GPU NVIDIA H100 (count 2), driver 570.86, CUDA 12.8, machine 3f2a9c1d0b7e5a64` (the machine id's hash, when known; never the host name). */
export function describeHost(env: EnvRecord): string {
  const names = env.gpu.names.length === 0 ? 'unknown' : [...new Set(env.gpu.names)].join(', ')
  const id = servingMachine(env)?.machine_id_sha256 ?? 'unknown'
  return `GPU ${names} (count ${env.gpu.count}), driver ${env.gpu.driver_version}, CUDA ${env.gpu.cuda_version}${id === 'unknown' ? '' : `, machine ${id}`}`
}

/**
 * The refreshes the gate may draw its spread from for a candidate measured in `candidate`: those
 * on the same GPUs (model and count), and of them those on the same driver and CUDA when there
 * are any. When only the driver or CUDA changed since every refresh, the same GPUs' refreshes
 * still judge it: that is how a scheduled watch sees what a driver bump did (the verdict names
 * the host change first, github/host-notice.ts). `note` says what was left out, and why none is
 * left; null when every refresh was kept.
 */
export function refreshesOnHost<R extends Pick<BaselineRefresh, 'env'>>(
  refreshes: readonly R[],
  candidate: EnvRecord,
  name: string,
): { refreshes: R[]; note: string | null } {
  const changes = refreshes.map((r) => hostFingerprintChanges(r.env, candidate))
  const sameMachine = refreshes.filter((_, i) => !changes[i]!.some((c) => MACHINE_FIELDS.includes(c.field)))
  const sameHost = refreshes.filter((_, i) => changes[i]!.length === 0)
  const kept = sameHost.length > 0 ? sameHost : sameMachine
  if (kept.length === refreshes.length) return { refreshes: kept, note: null }
  const here = describeHost(candidate)
  if (kept.length === 0) {
    const newest = changes.at(-1) ?? []
    return {
      refreshes: kept,
      note:
        `none of the ${refreshes.length} refreshes of baseline ${name} was measured on this host (${here}; ${describeChanges(newest)} since its newest refresh): ` +
        "there is no spread of this machine to judge against, so no metric is decided. Record a baseline on this host (servegate baseline update --reset, or the Action's refresh mode with reset: true).",
    }
  }
  const where = sameHost.length > 0 ? `this host (${here})` : `these GPUs (${here.replace(/, driver .*$/, '')})`
  return {
    refreshes: kept,
    note: `the spread is drawn from the ${kept.length} of ${refreshes.length} refreshes of baseline ${name} measured on ${where}; the others were measured on another host`,
  }
}

/**
 * The engine starts a sequential row draws its σ from on `candidate`'s host: the baseline's
 * noise history (starts kept for their spread alone) and its refreshes, oldest first, with the
 * same host rule as refreshesOnHost. Never the centre: that is the refreshes' alone.
 */
export function spreadOnHost(baseline: Pick<Baseline, 'refreshes' | 'noise_history' | 'name'>, candidate: EnvRecord): BaselineRefresh[] {
  return refreshesOnHost([...(baseline.noise_history ?? []), ...baseline.refreshes], candidate, baseline.name).refreshes
}
