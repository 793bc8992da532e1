/**
 * Whether the host under the model changed between a baseline's refresh and a candidate: the
 * serving machine itself (host name, machine id, CPU model and count, GPU UUIDs, ./host-identity.ts),
 * its GPUs, driver, CUDA, maximum clocks, and its kernel and platform (the host-blamed fields of
 * ./env-diff.ts). A change there can move the numbers as much as the pull request can, so the gate
 * says so before anything else. A side that saw the GPUs where the other could not (no nvidia-smi,
 * a server on another machine) cannot show that the host is the same: that counts as a change
 * too, never as "unchanged". Pure.
 */
import type { EnvRecord } from '../types.js'
import { describeChanges, diffEnv, isKnownChange } from './env-diff.js'
import { IDENTITY_FIELD_NAMES } from './host-identity.js'

export { maxClocks } from './env-diff.js'

export interface HostChange {
  /** What changed: `driver`, `CUDA`, `GPU clocks`, `kernel/platform`, `GPU`, `GPU count`, or an identity field (`host name`, `machine id`, …). */
  field: string
  /** `unknown` on the side that could not see a GPU fact the other side saw. */
  baseline: string
  candidate: string
}

/** The GPU facts a side must show when the other does: without them nothing says the GPUs are the same. */
const GPU_FACTS: readonly string[] = ['GPU', 'GPU count', 'driver', 'CUDA']

const known = (v: string): boolean => v !== 'unknown' && v !== ''

/**
 * The host fields that differ between the baseline's environment (its newest refresh) and the
 * candidate's: every host field both sides recorded, and every GPU fact one side saw and the other
 * could not. An identity field only one side recorded (a baseline written before servegate
 * recorded the machine) proves nothing and is left out; so is a field neither side could see.
 */
export function hostChanges(baselineEnv: EnvRecord, candidateEnv: EnvRecord): HostChange[] {
  return diffEnv(baselineEnv, candidateEnv)
    .changes.filter((c) => c.blame === 'host' && (isKnownChange(c) || (GPU_FACTS.includes(c.field) && (known(c.baseline) || known(c.candidate)))))
    .map(({ field, baseline, candidate }) => ({ field, baseline, candidate }))
}

/** `driver 550.54 → 560.28; CUDA 12.4 → 12.6` (a host name is said to change, not named). */
export const describeHostChanges = describeChanges

/** Whether the host changed between the baseline's newest refresh and the candidate (false without a refresh). */
export function hostChangedSince(baseline: { refreshes: ReadonlyArray<{ env: EnvRecord }> }, candidate: { env: EnvRecord }): boolean {
  const newest = baseline.refreshes.at(-1)
  return newest !== undefined && hostChanges(newest.env, candidate.env).length > 0
}

/**
 * Why a host change leaves the verdict unmeasured, in one clause: another machine, a host that
 * changed, or one whose GPUs a side could not see. The caller adds the advice.
 */
export function hostChangeCause(changes: readonly HostChange[]): string {
  const what = describeHostChanges(changes)
  if (changes.some((c) => IDENTITY_FIELD_NAMES.includes(c.field)))
    return `another machine than the baseline's served the candidate (${what}), so the stored baseline cannot tell the pull request's effect from the machine's (a runner label of the baseline's machine alone keeps the gate on it)`
  if (changes.every((c) => !known(c.baseline) || !known(c.candidate)))
    return `one side could not see the GPUs the other saw (${what}: no nvidia-smi, or a server on another machine), so nothing shows the host is the baseline's`
  return `the host changed since the baseline (${what}), so the stored baseline cannot tell the pull request's effect from the host's`
}

/**
 * A line for a verdict whose two sides both ran the server on a machine servegate could not see
 * (a remote base URL): no host change can be shown there, and none can be ruled out. Null otherwise.
 */
export function unseenHostNote(baselineEnv: EnvRecord, candidateEnv: EnvRecord): string | null {
  const remote = (e: EnvRecord): boolean => e.server_host?.location === 'remote'
  if (!remote(candidateEnv) || !remote(baselineEnv)) return null
  return "both sides' servers ran on a machine servegate could not see (a base URL on another host): a change of that machine can be neither shown nor ruled out; run servegate on the serving host to record it"
}
