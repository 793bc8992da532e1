import { describe, expect, it } from 'vitest'
import type { ExecFn } from '../../src/env/exec.js'
import { queryGpuInventory } from '../../src/env/nvidia-smi.js'
import { describeHostChanges, hostChanges, maxClocks } from '../../src/gate/host-change.js'
import { hostNotice } from '../../src/github/host-notice.js'
import { appendRefresh, baselineFromResult } from '../../src/store/baseline.js'
import type { EnvRecord } from '../../src/types.js'
import { env, result } from '../action/fixtures.js'

/** What nvidia-smi prints on a host with this driver, CUDA and per-GPU clocks (SM cur, SM max, mem cur, mem max). */
function smi(driver: string, cuda: string, clocks: Array<[number, number, number, number]>): ExecFn {
  return async (_cmd, args) => {
    if (args.length === 0) return { stdout: `| NVIDIA-SMI ${driver}      Driver Version: ${driver}      CUDA Version: ${cuda}     |\n` }
    return { stdout: clocks.map((c, i) => `${i}, NVIDIA H100 80GB HBM3, ${driver}, ${c.join(', ')}`).join('\n') + '\n' }
  }
}

/** An environment as collectEnv records it on such a host (the GPU inventory from the real nvidia-smi parser). */
async function hostEnv(o: { driver?: string; cuda?: string; clocks?: Array<[number, number, number, number]>; platform?: string; hostname?: string } = {}): Promise<EnvRecord> {
  const gpu = await queryGpuInventory(smi(o.driver ?? '550.54.15', o.cuda ?? '12.4', o.clocks ?? [[1410, 1980, 2619, 2619], [1980, 1980, 2619, 2619]]))
  return env({ gpu, host: { hostname: o.hostname ?? 'gpu-runner-1', platform: o.platform ?? 'linux x64 6.8.0-45-generic', cpus: 64 } })
}

describe('hostChanges', () => {
  it('finds nothing between two runs on the same host, even when the current clocks moved with load', async () => {
    const before = await hostEnv({ clocks: [[1980, 1980, 2619, 2619], [1980, 1980, 2619, 2619]] })
    const after = await hostEnv({ clocks: [[345, 1980, 1593, 2619], [1410, 1980, 2619, 2619]], hostname: 'gpu-runner-7' })
    expect(hostChanges(before, after)).toEqual([])
  })

  it('names a driver and CUDA upgrade, old → new', async () => {
    const changes = hostChanges(await hostEnv(), await hostEnv({ driver: '560.28.03', cuda: '12.6' }))
    expect(changes).toEqual([
      { field: 'driver', baseline: '550.54.15', candidate: '560.28.03' },
      { field: 'CUDA', baseline: '12.4', candidate: '12.6' },
    ])
    expect(describeHostChanges(changes)).toBe('driver 550.54.15 → 560.28.03; CUDA 12.4 → 12.6')
  })

  it('names a change of the maximum (application) clocks and of the kernel', async () => {
    const changes = hostChanges(await hostEnv(), await hostEnv({ clocks: [[1410, 1755, 2619, 2619], [1755, 1755, 2619, 2619]], platform: 'linux x64 6.11.0-1-generic' }))
    expect(changes.map((c) => c.field)).toEqual(['GPU clocks', 'kernel/platform'])
    expect(changes[0]).toEqual({
      field: 'GPU clocks',
      baseline: 'GPU0 SM max 1980, memory max 2619 MHz; GPU1 SM max 1980, memory max 2619 MHz',
      candidate: 'GPU0 SM max 1755, memory max 2619 MHz; GPU1 SM max 1755, memory max 2619 MHz',
    })
    expect(changes[1]).toEqual({ field: 'kernel/platform', baseline: 'linux x64 6.8.0-45-generic', candidate: 'linux x64 6.11.0-1-generic' })
  })

  it('does not call a side that could not see the GPUs (no nvidia-smi) a host change', async () => {
    const blind = env({ gpu: await queryGpuInventory(async () => null), host: { hostname: 'x', platform: 'linux x64 6.8.0-45-generic', cpus: 8 } })
    expect(hostChanges(await hostEnv(), blind)).toEqual([])
    expect(hostChanges(blind, await hostEnv({ driver: '560.28.03' }))).toEqual([])
  })

  it('keeps clocks it cannot parse as they are, so a change still shows', () => {
    expect(maxClocks('unknown')).toBe('unknown')
    expect(maxClocks('some other format')).toBe('some other format')
  })
})

describe('hostNotice', () => {
  const baselineOn = async (e: EnvRecord) => baselineFromResult({ ...result(), env: e }, 'gate')

  it('says the host changed and that a change may be the host\'s when the verdict rests on the baseline', async () => {
    const notice = hostNotice(await baselineOn(await hostEnv()), await hostEnv({ driver: '560.28.03' }), false)
    expect(notice).toBe("⚠ host changed since the baseline (driver 550.54.15 → 560.28.03): a change may be the host's, not this PR's.")
  })

  it('says the reference was re-measured when the verdict is A/B', async () => {
    const notice = hostNotice(await baselineOn(await hostEnv()), await hostEnv({ cuda: '12.6' }), true)
    expect(notice).toMatch(/^⚠ host changed since the baseline \(CUDA 12\.4 → 12\.6\): the reference engine was re-measured on this runner/)
  })

  it("compares with the baseline's newest refresh, not an older one", async () => {
    const old = await baselineOn(await hostEnv())
    const both = appendRefresh(old, { ...result(), env: { ...(await hostEnv({ driver: '560.28.03' })), finished_at: '2025-01-02T00:10:00Z' } }, { name: 'gate' })
    expect(hostNotice(both, await hostEnv({ driver: '560.28.03' }), false)).toBeNull()
    expect(hostNotice(both, await hostEnv(), false)).toContain('driver 560.28.03 → 550.54.15')
  })

  it('is null on the same host and without a baseline', async () => {
    expect(hostNotice(await baselineOn(await hostEnv()), await hostEnv(), false)).toBeNull()
    expect(hostNotice(null, await hostEnv(), false)).toBeNull()
  })
})
