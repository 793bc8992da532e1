/**
 * The config file's gate tolerances (percent per metric family) as the gate
 * stage's options (fractions per metric kind). Pure.
 */
import type { GateSettings } from '../config/resolve.js'
import { optionsFromGateSettings } from '../gate/settings.js'
import type { GateOptions } from '../gate/types.js'

/** `gate.tolerance_pct` → GateOptions.tolerances and `gate.max_failed_requests` → maxFailedRequests; unset keys keep the gate's defaults. */
export function gateOptionsFrom(settings: GateSettings): Partial<GateOptions> {
  return optionsFromGateSettings(settings)
}
