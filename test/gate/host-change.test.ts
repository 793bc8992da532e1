import { describe, expect, it } from 'vitest'
import type { ExecFn } from '../../src/env/exec.js'
import { queryGpuInventory } from '../../src/env/nvidia-smi.js'
import { blameEnvChanges, diffEnv } from '../../src/gate/env-diff.js'
import { resultFingerprint } from '../../src/gate/fingerprint.js'
import { describeHostChanges, hostChanges, maxClocks } from '../../src/gate/host-change.js'
import { hostNotice } from '../../src/github/host-notice.js'
import { baselineFromResult, refreshFromResult } from '../../src/gate/refresh.js'
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
async function hostEnv(
  o: { driver?: string; cuda?: string; clocks?: Array<[number, number, number, number]>; platform?: string; hostname?: string } = {},
): Promise<EnvRecord> {
  const gpu = await queryGpuInventory(
    smi(
      o.driver ?? '550.54.15',
      o.cuda ?? '12.4',
      o.clocks ?? [
        [1410, 1980, 2619, 2619],
        [1980, 1980, 2619, 2619],
      ],
    ),
  )
  return env({ gpu, host: { hostname: o.hostname ?? 'gpu-runner-1', platform: o.platform ?? 'linux x64 6.8.0-45-generic', cpus: 64 } })
}

describe('hostChanges', () => {
  it('finds nothing between two runs on the same host, even when the current clocks moved with load', async () => {
    const before = await hostEnv({
      clocks: [
        [1980, 1980, 2619, 2619],
        [1980, 1980, 2619, 2619],
      ],
    })
    const after = await hostEnv({
      clocks: [
        [345, 1980, 1593, 2619],
        [1410, 1980, 2619, 2619],
      ],
      hostname: 'gpu-runner-7',
    })
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
    const changes = hostChanges(
      await hostEnv(),
      await hostEnv({
        clocks: [
          [1410, 1755, 2619, 2619],
          [1755, 1755, 2619, 2619],
        ],
        platform: 'linux x64 6.11.0-1-generic',
      }),
    )
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

  it("says the host changed and that a change may be the host's when the verdict rests on the baseline", async () => {
    const notice = hostNotice(await baselineOn(await hostEnv()), await hostEnv({ driver: '560.28.03' }), false)
    expect(notice).toBe(
      "⚠ Host changed: driver 550.54.15 → 560.28.03 since the baseline; the repository is unchanged. The pull request may not be the cause: a change may be the host's.",
    )
  })

  it('says the reference was re-measured when the verdict is A/B', async () => {
    const notice = hostNotice(await baselineOn(await hostEnv()), await hostEnv({ cuda: '12.6' }), true)
    expect(notice).toMatch(
      /^⚠ Host changed: CUDA 12\.4 → 12\.6 since the baseline; the repository is unchanged\. The reference engine was re-measured on this runner/,
    )
  })

  it("compares with the baseline's newest refresh, not an older one", async () => {
    const old = await baselineOn(await hostEnv())
    // A history from before baseline update kept one host per history (the store now refuses this append without --reset).
    const both = {
      ...old,
      refreshes: [
        ...old.refreshes,
        refreshFromResult({ ...result(), env: { ...(await hostEnv({ driver: '560.28.03' })), finished_at: '2025-01-02T00:10:00Z' } }),
      ],
    }
    expect(hostNotice(both, await hostEnv({ driver: '560.28.03' }), false)).toBeNull()
    expect(hostNotice(both, await hostEnv(), false)).toContain('driver 560.28.03 → 550.54.15')
  })

  it('is null on the same host and without a baseline', async () => {
    expect(hostNotice(await baselineOn(await hostEnv()), await hostEnv(), false)).toBeNull()
    expect(hostNotice(null, await hostEnv(), false)).toBeNull()
  })
})

describe("blameEnvChanges: every change is the host's, the repository's or the harness's", () => {
  const diff = (a: EnvRecord, b: EnvRecord) => diffEnv(a, b).changes

  it('says first when only the host changed, and that the repository did not', async () => {
    const b = blameEnvChanges(diff(await hostEnv({ driver: '570.86.10' }), await hostEnv({ driver: '575.51.03' })))
    expect(b.host.map((c) => c.field)).toEqual(['driver'])
    expect(b.repository).toEqual([])
    expect(b.headline).toBe('driver 570.86.10 → 575.51.03 since the baseline; the repository is unchanged')
  })

  it('sets host changes apart from repository changes when both moved', async () => {
    const before = await hostEnv()
    const after = {
      ...(await hostEnv({ platform: 'linux x64 6.11.0-1-generic' })),
      serve_command: 'vllm serve m --max-num-seqs 128',
      container_digest: 'sha256:bbbb',
    }
    const b = blameEnvChanges(diff({ ...before, serve_command: 'vllm serve m', container_digest: 'sha256:aaaa' }, after))
    expect(b.host.map((c) => c.field)).toEqual(['kernel/platform'])
    expect(b.repository.map((c) => c.field)).toEqual(['container digest', 'serve command'])
    expect(b.headline).toMatch(
      /^the host changed since the baseline \(kernel\/platform linux x64 6\.8\.0-45-generic → linux x64 6\.11\.0-1-generic\) and so did the repository \(container digest sha256:aaaa → sha256:bbbb; serve command/,
    )
  })

  it('blames the repository alone when the host is the same', async () => {
    const b = blameEnvChanges(diff(await hostEnv(), { ...(await hostEnv()), engine: { name: 'vllm', version: '0.11.1' } }), 'since refresh 5')
    expect(b.headline).toMatch(/^the host is unchanged since refresh 5; the repository changed: engine vllm \S+ → vllm 0\.11\.1$/)
  })

  it('names a servegate upgrade as the harness', async () => {
    const a = await hostEnv()
    const b = blameEnvChanges(diff(a, { ...a, harness: { ...a.harness, version: '9.9.9' } }))
    expect(b.harness.map((c) => c.field)).toEqual(['servegate'])
    expect(b.headline).toMatch(/→ 9\.9\.9 since the baseline \(the harness\); the host and the repository are unchanged$/)
  })

  it('proves nothing from a side that could not see a field, and says nothing when nothing changed', async () => {
    const blind = { ...(await hostEnv()), gpu: { names: [], count: 'unknown' as const, driver_version: 'unknown', cuda_version: 'unknown', clocks: 'unknown' } }
    const changes = diff(await hostEnv(), blind)
    expect(changes.length).toBeGreaterThan(0)
    expect(blameEnvChanges(changes).headline).toBeNull()
    expect(blameEnvChanges(diff(await hostEnv(), await hostEnv())).headline).toBeNull()
  })

  it("counts a change of measurement settings as the repository's config", async () => {
    const r = result()
    const fp = resultFingerprint(r)
    const changes = diffEnv(r.env, r.env, { baseline: fp, candidate: { ...fp, model: 'other/model' } }).changes
    expect(changes).toEqual([{ field: 'config: model', baseline: fp.model, candidate: 'other/model', blame: 'repository' }])
  })
})
