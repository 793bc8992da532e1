/**
 * Whether the host under the GPUs changed between a baseline's refresh and a
 * candidate: driver, CUDA, the GPUs' maximum clocks, and the kernel and
 * platform (the host-blamed fields of ./env-diff.ts). A change there can move
 * the numbers as much as the pull request can, so the gate says so before
 * anything else. Pure.
 */
import type { EnvRecord } from '../types.js'
import { describeChanges, diffEnv, isKnownChange } from './env-diff.js'

export { maxClocks } from './env-diff.js'

export interface HostChange {
  /** What changed: `driver`, `CUDA`, `GPU clocks`, `kernel/platform` (and `GPU`, `GPU count`). */
  field: string
  baseline: string
  candidate: string
}

/**
 * The host fields that differ between the baseline's environment (its newest refresh) and the
 * candidate's. A side that could not see a field (`unknown`, e.g. no nvidia-smi, or a server on
 * another machine) proves no change, so that field is left out.
 */
export function hostChanges(baselineEnv: EnvRecord, candidateEnv: EnvRecord): HostChange[] {
  return diffEnv(baselineEnv, candidateEnv)
    .changes.filter((c) => c.blame === 'host' && isKnownChange(c))
    .map(({ field, baseline, candidate }) => ({ field, baseline, candidate }))
}

/** `driver 550.54 → 560.28; CUDA 12.4 → 12.6` */
export const describeHostChanges = describeChanges

/** Whether the host changed between the baseline's newest refresh and the candidate (false without a refresh). */
export function hostChangedSince(baseline: { refreshes: ReadonlyArray<{ env: EnvRecord }> }, candidate: { env: EnvRecord }): boolean {
  const newest = baseline.refreshes.at(-1)
  return newest !== undefined && hostChanges(newest.env, candidate.env).length > 0
}
