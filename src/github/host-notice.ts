/**
 * The line a verdict opens with when the host changed since the baseline's
 * newest refresh: the serving machine, GPUs, driver, CUDA, GPU clocks or
 * kernel, none of which a pull request changes; or GPUs one side could not
 * see, so that nothing shows the host is the same. Pure.
 */
import { blameEnvChanges, diffEnv } from '../gate/env-diff.js'
import { describeHostChanges, hostChanges } from '../gate/host-change.js'
import type { Baseline } from '../gate/types.js'
import type { EnvRecord } from '../types.js'

/**
 * `⚠ Host changed: driver 550.54 → 560.28 since the baseline; the repository is unchanged. …`,
 * or null when the host is the same (or there is no refresh to compare with). `reMeasured`: the
 * reference engine was measured again on this runner, so the verdict does not rest on the baseline.
 */
export function hostNotice(baseline: Baseline | null, candidateEnv: EnvRecord, reMeasured: boolean): string | null {
  const newest = baseline?.refreshes[baseline.refreshes.length - 1]
  if (newest === undefined) return null
  const changes = hostChanges(newest.env, candidateEnv)
  if (changes.length === 0) return null
  const blame = blameEnvChanges(diffEnv(newest.env, candidateEnv).changes)
  const what =
    blame.host.length > 0 && blame.headline !== null
      ? `⚠ Host changed: ${blame.headline}`
      : `⚠ Host not shown to be the baseline's: ${describeHostChanges(changes)} (one side could not see the GPUs)`
  return reMeasured
    ? `${what}. The reference engine was re-measured on this runner, so the verdict compares both engines on the same host.`
    : `${what}. The pull request may not be the cause: a change may be the host's.`
}
