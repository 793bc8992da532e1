/**
 * The line a gate comment opens with when the host changed since the
 * baseline's newest refresh: driver, CUDA, GPU clocks or kernel. Pure.
 */
import { describeHostChanges, hostChanges } from '../gate/host-change.js'
import type { Baseline } from '../gate/types.js'
import type { EnvRecord } from '../types.js'

/**
 * `⚠ host changed since the baseline (driver 550.54 → 560.28): …`, or null when the host is the
 * same (or there is no refresh to compare with). `reMeasured`: the reference engine was measured
 * again on this runner, so the verdict does not rest on the baseline.
 */
export function hostNotice(baseline: Baseline | null, candidateEnv: EnvRecord, reMeasured: boolean): string | null {
  const newest = baseline?.refreshes[baseline.refreshes.length - 1]
  if (newest === undefined) return null
  const changes = hostChanges(newest.env, candidateEnv)
  if (changes.length === 0) return null
  const what = `⚠ host changed since the baseline (${describeHostChanges(changes)})`
  return reMeasured
    ? `${what}: the reference engine was re-measured on this runner, so the verdict compares both engines on the same host.`
    : `${what}: a change may be the host's, not this PR's.`
}
