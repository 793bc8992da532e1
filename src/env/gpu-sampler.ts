/**
 * Samples GPU health with nvidia-smi while a run is under way, so a throttled
 * or shared GPU can invalidate the run (validity codes gpu_throttled, gpu_shared).
 */
import type { GpuSample } from '../types.js'
import type { ExecFn } from './exec.js'
import { queryGpuSamples, type SampleState, type ServerProcesses } from './nvidia-smi.js'
import type { PgidReader } from './process-group.js'

export interface GpuSampler {
  /** Stops sampling and returns every sample taken (one per GPU per tick); [] when nvidia-smi is absent. */
  stop(): GpuSample[]
  /** Like stop(), but first waits for a query already under way, so a short run keeps its sample. */
  stopAndWait(): Promise<GpuSample[]>
}

/** Starts sampling now and then every `intervalMs` ms; see ServerProcesses for what counts as foreign. */
export function startGpuSampler(exec: ExecFn, intervalMs: number, opts: { server?: ServerProcesses; pgidOf?: PgidReader } = {}): GpuSampler {
  const server = opts.server ?? { kind: 'unknown' }
  const samples: GpuSample[] = []
  const state: SampleState = { reasonPrefix: undefined }
  let stopped = false
  let absent = false
  let inFlight: Promise<void> | null = null

  const tick = (): void => {
    // Never overlap queries: a slow nvidia-smi must not pile up processes.
    if (stopped || absent || inFlight) return
    inFlight = queryGpuSamples(exec, server, state, opts.pgidOf)
      .then((got) => {
        if (got.length === 0 && samples.length === 0) absent = true // no nvidia-smi: stop asking
        if (!stopped) samples.push(...got)
      })
      .catch(() => undefined)
      .finally(() => {
        inFlight = null
      })
  }
  tick()
  const timer = setInterval(tick, Math.max(50, intervalMs))
  // Sampling must never keep the process alive.
  timer.unref()

  const stop = (): GpuSample[] => {
    stopped = true
    clearInterval(timer)
    return [...samples]
  }
  return {
    stop,
    async stopAndWait() {
      clearInterval(timer)
      if (inFlight) await inFlight
      return stop()
    },
  }
}
