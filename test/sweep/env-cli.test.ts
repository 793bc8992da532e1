import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { startSim, SIM_ENGINE_NAME, type SimHandle } from '../../src/sim/index.js'
import type { ResultFile } from '../../src/types.js'
import { HARNESS_VERSION } from '../../src/version.js'
import { fakeNvidiaSmiScript, pathWith } from '../env/fake-nvidia-smi.js'
import { expectNoValidRun, readResult, runCli } from './cli-child.js'

// Issue 4: "`env` in the result contains the simulator's engine version and model revision,
// and nvidia-smi figures when a fake nvidia-smi is put on PATH; with none present the GPU
// fields say unknown". The child's PATH is only the fake's directory (or an empty one).
describe('the environment a sweep records', () => {
  let sim: SimHandle
  let dir: string
  const withSmi = pathWith(fakeNvidiaSmiScript())
  const withoutSmi = pathWith(null)
  const results: { smi?: ResultFile; none?: ResultFile } = {}
  const stdout: { smi?: string } = {}

  const sweep = async (name: 'smi' | 'none', path: string): Promise<void> => {
    const out = join(dir, `${name}.json`)
    const r = await runCli(
      [
        'run',
        '--base-url',
        sim.url,
        '--input-len',
        '64',
        '--output-len',
        '8',
        '--concurrency',
        '2',
        '--repeats',
        '1',
        '--prompts-per-concurrency',
        '2',
        '--warmup',
        '0',
        '--serve-command',
        'servegate sim --profile default',
        '--out',
        out,
      ],
      { env: { PATH: path, CI: '1', SERVEGATE_CONTAINER_DIGEST: 'sha256:0123abcd' } },
    )
    // Runs of 4 requests are too few to be valid, so a sweep that ran to its end exits 1.
    expectNoValidRun(r, out)
    results[name] = readResult(out)!
    if (name === 'smi') stdout.smi = r.stdout
  }

  beforeAll(async () => {
    sim = await startSim({ profile: 'default', timeScale: 0.5 })
    dir = mkdtempSync(join(tmpdir(), 'servegate-env-'))
    await sweep('smi', withSmi.dir)
    await sweep('none', withoutSmi.dir)
  }, 60_000)

  afterAll(async () => {
    await sim?.close()
    withSmi.cleanup()
    withoutSmi.cleanup()
    if (dir) rmSync(dir, { recursive: true, force: true })
  })

  it("records the simulator's engine name and version and its model revision", () => {
    for (const r of [results.smi!, results.none!]) {
      expect(r.env.engine).toEqual({ name: SIM_ENGINE_NAME, version: HARNESS_VERSION })
      expect(r.env.model).toMatchObject({ id: 'servegate/sim-model', revision: 'sim-profile-default' })
    }
  })

  it('records the container digest from the environment and the serve command given', () => {
    expect(results.none!.env.container_digest).toBe('sha256:0123abcd')
    expect(results.none!.env.serve_command).toBe('servegate sim --profile default')
  })

  it('records GPU names, count, driver, CUDA version and clocks from nvidia-smi on PATH', () => {
    expect(results.smi!.env.gpu).toEqual({
      names: ['NVIDIA H100 80GB HBM3', 'NVIDIA H100 80GB HBM3'],
      count: 2,
      driver_version: '550.54.15',
      cuda_version: '12.4',
      clocks: 'GPU0 SM 1410/1980 MHz, memory 2619/2619 MHz (current/max); GPU1 SM 1980/1980 MHz, memory 2619/2619 MHz (current/max)',
    })
    expect(stdout.smi).toContain('GPU: 2× NVIDIA H100 80GB HBM3 (driver 550.54.15, CUDA 12.4)')
  })

  it('samples the GPUs during each run and flags the throttled, shared GPU the fake reports', () => {
    const run = results.smi!.points[0]!.runs[0]!
    expect(run.gpu).not.toBeNull()
    expect(run.gpu!.find((g) => g.index === 0)).toMatchObject({
      sm_clock_mhz: 1410,
      max_sm_clock_mhz: 1980,
      throttle_reasons: ['sw_power_cap', 'hw_thermal_slowdown'],
      foreign_processes: 1,
    })
    expect(run.validity.issues.map((i) => i.code)).toEqual(expect.arrayContaining(['gpu_throttled', 'gpu_shared']))
  })

  it('says unknown for every GPU field when no nvidia-smi is on PATH, and samples nothing', () => {
    expect(results.none!.env.gpu).toEqual({ names: [], count: 'unknown', driver_version: 'unknown', cuda_version: 'unknown', clocks: 'unknown' })
    const run = results.none!.points[0]!.runs[0]!
    expect(run.gpu).toBeNull()
    expect(run.validity.issues.map((i) => i.code)).not.toContain('gpu_throttled')
  })
})
