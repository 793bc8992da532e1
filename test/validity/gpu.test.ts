import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { SimHandle } from '../../src/sim/index.js'
import { codes, detail, fakeNvidiaSmi, measure, point, sim, type FakeGpu } from './harness.js'

// GPU health comes from nvidia-smi sampled during the run; here a stand-in
// nvidia-smi on PATH reports what a throttled or shared GPU would.
describe('GPU health on real runs with a fake nvidia-smi', () => {
  let handle: SimHandle
  beforeAll(async () => {
    handle = await sim({ ttftMs: 10, itlMs: 5 })
  })
  afterAll(() => handle?.close())

  const healthy: FakeGpu = { utilizationPct: 95, smClockMhz: 1950, maxSmClockMhz: 1965, reasons: [], pids: [4242] }
  async function runWith(gpu: FakeGpu, seed: number) {
    const smi = fakeNvidiaSmi(gpu)
    try {
      return await measure(handle, point({ concurrency: 4, outputLen: 32, numPrompts: 48, seed }), { gpuPath: smi.dir })
    } finally {
      smi.cleanup()
    }
  }

  it('records samples and finds nothing wrong with a healthy, unshared GPU', async () => {
    const run = await runWith(healthy, 1)
    expect(run.gpu?.length).toBeGreaterThan(0)
    expect(run.gpu?.[0]).toMatchObject({ name: 'NVIDIA B200', utilization_pct: 95, throttle_reasons: [], foreign_processes: 0 })
    expect(codes(run)).not.toContain('gpu_throttled')
    expect(codes(run)).not.toContain('gpu_shared')
  }, 30_000)

  it('flags power-cap and thermal throttling as gpu_throttled, naming the reasons', async () => {
    const run = await runWith({ ...healthy, smClockMhz: 1200, reasons: ['sw_power_cap', 'hw_thermal_slowdown'] }, 2)
    expect(codes(run)).toContain('gpu_throttled')
    expect(codes(run)).not.toContain('gpu_shared')
    const n = run.gpu!.length
    expect(detail(run, 'gpu_throttled')).toContain(`GPU 0 (NVIDIA B200) reported sw_power_cap in ${n} of ${n} samples`)
    expect(detail(run, 'gpu_throttled')).toContain('hw_thermal_slowdown')
    expect(detail(run, 'gpu_throttled')).toMatch(/SM clock at 1200 of 1965 MHz under load/)
  }, 30_000)

  it('flags a foreign process on the GPU as gpu_shared', async () => {
    const run = await runWith({ ...healthy, pids: [4242, 9999] }, 3)
    expect(codes(run)).toContain('gpu_shared')
    expect(codes(run)).not.toContain('gpu_throttled')
    expect(detail(run, 'gpu_shared')).toMatch(/GPU 0 \(NVIDIA B200\) had up to 1 other process/)
  }, 30_000)
})
