/** The simulated engine's public API (what it simulates: docs/simulator.md). */
export { startSim, type SimHandle } from './server.js'
export {
  DEFAULT_SIM_OPTIONS,
  FAULT_KINDS,
  TAIL_FAULT_KINDS,
  TOKENIZE_DIALECTS,
  resolveSimOptions,
  type FaultKind,
  type FaultSpec,
  type SimOptions,
  type TailFaultKind,
  type TokenizeDialect,
} from './options.js'
export { BUILTIN_PROFILES, profileFromFile, resolveProfile, type SimProfile } from './profiles.js'
export type { TokenTrace } from './trace.js'
export { SIM_ENGINE_NAME } from './routes.js'
