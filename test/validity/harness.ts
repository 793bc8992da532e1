/**
 * Runs real points through measurePoint against an in-process simulator on
 * 127.0.0.1, the way `servegate run` measures one point, so the validity
 * tests see exactly what a user's result file would carry.
 */
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { startSim, type SimHandle, type SimOptions } from '../../src/sim/index.js'
import { measurePoint, type MeasureContext } from '../../src/sweep/measure-point.js'
import { createExec } from '../../src/env/exec.js'
import { startGpuSampler } from '../../src/env/gpu-sampler.js'
import type { PlanPoint } from '../../src/plan/plan.js'
import type { RunResult, ValidityCode } from '../../src/types.js'

export interface PointSpec {
  concurrency: number
  inputLen?: number
  outputLen: number
  /** Measured requests (default 4 × C). */
  numPrompts?: number
  /** Warmup requests (default 0). */
  warmup?: number
  seed?: number
  repeat?: number
}

/** A plan point as buildPlan would make it. */
export function point(spec: PointSpec): PlanPoint {
  const inputLen = spec.inputLen ?? 32
  const repeat = spec.repeat ?? 1
  return {
    key: `${inputLen}x${spec.outputLen}@c${spec.concurrency}#r${repeat}`,
    shape: { inputLen, outputLen: spec.outputLen },
    concurrency: spec.concurrency,
    repeat,
    seed: spec.seed ?? 12345,
    numPrompts: spec.numPrompts ?? 4 * spec.concurrency,
    warmupRequests: spec.warmup ?? 0,
  }
}

/** Start a deterministic simulator with these knobs (model-time TTFT/ITL in ms). */
export function sim(opts: Partial<SimOptions> & { ttftMs: number; itlMs: number }): Promise<SimHandle> {
  return startSim({ port: 0, host: '127.0.0.1', ...opts })
}

/** Measure one point against `handle`; `gpuPath` is a directory holding a fake nvidia-smi (else no GPU). */
export function measure(handle: SimHandle, p: PlanPoint, opts: { workers?: MeasureContext['workers']; gpuPath?: string } = {}): Promise<RunResult> {
  const exec = opts.gpuPath === undefined ? null : createExec({ env: { PATH: opts.gpuPath } })
  return measurePoint(p, {
    root: handle.url,
    model: 'servegate/sim-model',
    api: 'completions',
    apiKey: null,
    workers: opts.workers ?? 'auto',
    idleTimeoutMs: 10_000,
    sampleGpu: () => {
      if (exec === null) return { stop: () => [] }
      const s = startGpuSampler(exec, 100)
      return { stop: () => s.stopAndWait() }
    },
  })
}

/** Validity codes of a run, in rule order. */
export const codes = (run: RunResult): ValidityCode[] => run.validity.issues.map((i) => i.code)

/** The detail of one code ('' when absent). */
export const detail = (run: RunResult, code: ValidityCode): string => run.validity.issues.find((i) => i.code === code)?.detail ?? ''

export interface FakeGpu {
  utilizationPct: number
  smClockMhz: number
  maxSmClockMhz: number
  /** Active clock-event reasons by field suffix, e.g. 'sw_power_cap'. */
  reasons: string[]
  /** Compute processes on the GPU: the server is the first, any further one is foreign. */
  pids: number[]
}

// Field order of the throttle-reason columns servegate asks for (src/env/nvidia-smi.ts).
const REASON_FIELDS = [
  'gpu_idle',
  'applications_clocks_setting',
  'sw_power_cap',
  'hw_slowdown',
  'hw_thermal_slowdown',
  'hw_power_brake_slowdown',
  'sw_thermal_slowdown',
  'sync_boost',
]

/** A directory with an executable stand-in `nvidia-smi` describing one GPU; cleanup() removes it. */
export function fakeNvidiaSmi(gpu: FakeGpu): { dir: string; cleanup(): void } {
  const dir = mkdtempSync(join(tmpdir(), 'servegate-validity-smi-'))
  const reasons = REASON_FIELDS.map((f) => (gpu.reasons.includes(f) ? 'Active' : 'Not Active')).join(', ')
  const row = `0, GPU-aaa, NVIDIA B200, ${gpu.utilizationPct}, ${gpu.smClockMhz}, ${gpu.maxSmClockMhz}, 900.00, 70, ${reasons}`
  const apps = gpu.pids.map((p) => `'GPU-aaa, ${p}, proc${p}'`).join(' ')
  const script = `#!/bin/sh
case "$*" in
  *--query-compute-apps*) ${apps ? `printf '%s\\n' ${apps}` : 'true'} ;;
  *clocks_event_reasons.gpu_idle*) printf '%s\\n' '${row}' ;;
  *) echo 'Field is not a valid field to query.' >&2; exit 2 ;;
esac
`
  const file = join(dir, 'nvidia-smi')
  writeFileSync(file, script)
  chmodSync(file, 0o755)
  return { dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) }
}
