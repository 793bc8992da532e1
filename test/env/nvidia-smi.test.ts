import { afterAll, describe, expect, it } from 'vitest'
import { startGpuSampler } from '../../src/env/gpu-sampler.js'
import { numberField, queryGpuInventory, queryGpuSamples, queryGpuUuids } from '../../src/env/nvidia-smi.js'
import { fakeNvidiaSmiScript, pathWith } from './fake-nvidia-smi.js'

describe('with a fake nvidia-smi on PATH', () => {
  const smi = pathWith(fakeNvidiaSmiScript())
  const old = pathWith(fakeNvidiaSmiScript({ oldDriver: true }))
  afterAll(() => {
    smi.cleanup()
    old.cleanup()
  })

  it('records GPU names, count, driver, CUDA version and clocks', async () => {
    expect(await queryGpuInventory(smi.exec)).toEqual({
      names: ['NVIDIA H100 80GB HBM3', 'NVIDIA H100 80GB HBM3'],
      count: 2,
      driver_version: '550.54.15',
      cuda_version: '12.4',
      clocks: 'GPU0 SM 1410/1980 MHz, memory 2619/2619 MHz (current/max); GPU1 SM 1980/1980 MHz, memory 2619/2619 MHz (current/max)',
    })
  })

  it('samples utilisation, clocks, power, temperature and the active throttle reasons per GPU', async () => {
    const [g0, g1] = await queryGpuSamples(smi.exec, { kind: 'unknown' })
    expect(g0).toEqual({
      index: 0,
      name: 'NVIDIA H100 80GB HBM3',
      utilization_pct: 97,
      sm_clock_mhz: 1410,
      max_sm_clock_mhz: 1980,
      power_w: 650.5,
      temperature_c: 81,
      throttle_reasons: ['sw_power_cap', 'hw_thermal_slowdown'],
      foreign_processes: 1,
    })
    expect(g1).toMatchObject({ index: 1, power_w: null, throttle_reasons: [], foreign_processes: 0 })
  })

  it.each([
    ['unknown: each process beyond one per GPU', { kind: 'unknown' as const }, [1, 0]],
    ['pids: every process not the server’s', { kind: 'pids' as const, pids: [111] }, [1, 0]],
    ['pids: none of them the server’s', { kind: 'pids' as const, pids: [999] }, [2, 1]],
    ['remote: every local process', { kind: 'remote' as const }, [2, 1]],
  ])('counts foreign processes (%s)', async (_, server, expected) => {
    expect((await queryGpuSamples(smi.exec, server)).map((s) => s.foreign_processes)).toEqual(expected)
  })

  it('falls back to clocks_throttle_reasons on drivers that do not know clocks_event_reasons', async () => {
    const [g0] = await queryGpuSamples(old.exec, { kind: 'unknown' })
    expect(g0!.throttle_reasons).toEqual(['sw_power_cap', 'hw_thermal_slowdown'])
  })

  it('keeps sampling in the background until stopped', async () => {
    const sampler = startGpuSampler(smi.exec, 50)
    await new Promise((r) => setTimeout(r, 300))
    const samples = await sampler.stopAndWait()
    expect(samples.length).toBeGreaterThanOrEqual(4)
    expect(samples.length % 2).toBe(0)
    expect(samples.map((s) => s.index).slice(0, 2)).toEqual([0, 1])
  })
})

describe('without nvidia-smi', () => {
  const none = pathWith(null)
  afterAll(() => none.cleanup())

  it('says unknown for every GPU field', async () => {
    expect(await queryGpuInventory(none.exec)).toEqual({ names: [], count: 'unknown', driver_version: 'unknown', cuda_version: 'unknown', clocks: 'unknown' })
  })

  it('takes no samples', async () => {
    expect(await queryGpuSamples(none.exec, { kind: 'unknown' })).toEqual([])
    const sampler = startGpuSampler(none.exec, 50)
    await new Promise((r) => setTimeout(r, 120))
    expect(await sampler.stopAndWait()).toEqual([])
  })
})

describe('numberField', () => {
  it.each([
    ['650.50', 650.5],
    ['[N/A]', null],
    ['[Not Supported]', null],
    ['', null],
    [undefined, null],
  ])('reads %s as %s', (raw, expected) => {
    expect(numberField(raw)).toBe(expected)
  })
})

describe('queryGpuUuids', () => {
  it("lists the GPUs' UUIDs as nvidia-smi prints them, and none from an answer that is not a list of UUIDs", async () => {
    const answer = (stdout: string | null) => async () => (stdout === null ? null : { stdout })
    expect(await queryGpuUuids(answer('GPU-8f3e2a1b-0c4d-4e5f-9a6b-7c8d9e0f1a2b\nGPU-1a2b3c4d-5e6f-4a7b-8c9d-0e1f2a3b4c5d\n'))).toEqual([
      'GPU-8f3e2a1b-0c4d-4e5f-9a6b-7c8d9e0f1a2b',
      'GPU-1a2b3c4d-5e6f-4a7b-8c9d-0e1f2a3b4c5d',
    ])
    expect(await queryGpuUuids(answer('MIG-8f3e2a1b-0c4d-4e5f-9a6b-7c8d9e0f1a2b\n'))).toEqual(['MIG-8f3e2a1b-0c4d-4e5f-9a6b-7c8d9e0f1a2b'])
    expect(await queryGpuUuids(answer('No devices were found\n'))).toEqual([])
    expect(await queryGpuUuids(answer(''))).toEqual([])
    expect(await queryGpuUuids(answer(null))).toEqual([])
  })
})
