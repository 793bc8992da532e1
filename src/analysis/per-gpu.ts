/**
 * The field's per-GPU and per-user figures (InferenceX rows, the throughput
 * per GPU vs interactivity frontier). Pure.
 *
 * - GPUs: the count recorded in the environment (nvidia-smi on a local
 *   server, else `--gpus N` / config `server.gpus`); unknown stays unknown and
 *   no per-GPU figure is printed for it.
 * - Interactivity: 1000 / TPOT ms, in tokens per second per user.
 */
import type { EnvRecord } from '../types.js'

/** The GPUs serving the model, or null when not known. */
export function gpuCount(env: Pick<EnvRecord, 'gpu'>): number | null {
  const n = env.gpu.count
  return typeof n === 'number' && Number.isInteger(n) && n > 0 ? n : null
}

/** A total divided over the GPUs; null when either is unknown. */
export function perGpu(total: number | null | undefined, gpus: number | null): number | null {
  if (total === null || total === undefined || !Number.isFinite(total) || gpus === null) return null
  return total / gpus
}

/** Tokens per second per user at a TPOT (ms); null for a missing or non-positive TPOT. */
export function interactivity(tpotMs: number | null | undefined): number | null {
  if (tpotMs === null || tpotMs === undefined || !Number.isFinite(tpotMs) || tpotMs <= 0) return null
  return 1000 / tpotMs
}
