import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import type { ExecFn } from '../../src/env/exec.js'
import { machineIdHash, serverHostOf, type LocalMachine } from '../../src/env/local-host.js'
import { queryGpuInventory, queryGpuUuids } from '../../src/env/nvidia-smi.js'
import { blameEnvChanges, diffEnv } from '../../src/gate/env-diff.js'
import { resultFingerprint } from '../../src/gate/fingerprint.js'
import { describeHostChanges, hostChangeCause, hostChangedSince, hostChanges, maxClocks } from '../../src/gate/host-change.js'
import { hostNotice } from '../../src/github/host-notice.js'
import { appendRefresh, baselineFromResult, refreshFromResult } from '../../src/gate/refresh.js'
import { compareToBaseline } from '../../src/gate/compare.js'
import { DEFAULT_FAIL_ON, gateExit } from '../../src/gate/outcome.js'
import type { Baseline } from '../../src/gate/types.js'
import { parseResult } from '../../src/store/result-file.js'
import type { EnvRecord, ResultFile } from '../../src/types.js'
import { env, result } from '../action/fixtures.js'

/** What nvidia-smi prints on a host with this driver, CUDA and per-GPU clocks (SM cur, SM max, mem cur, mem max). */
function smi(driver: string, cuda: string, clocks: Array<[number, number, number, number]>, uuids?: string[]): ExecFn {
  return async (_cmd, args) => {
    if (args.length === 0) return { stdout: `| NVIDIA-SMI ${driver}      Driver Version: ${driver}      CUDA Version: ${cuda}     |\n` }
    if (args[0] === '--query-gpu=uuid') return { stdout: (uuids ?? clocks.map((_, i) => `GPU-${i}a3c9e2f-7d1b-4b6e-9f0a-5c8d2e1f3b4${i}`)).join('\n') + '\n' }
    return { stdout: clocks.map((c, i) => `${i}, NVIDIA H100 80GB HBM3, ${driver}, ${c.join(', ')}`).join('\n') + '\n' }
  }
}

/** A machine as env/local-host.ts reads it: its name, the hash of its machine id, CPU model and count. */
function machine(o: { hostname?: string; machineId?: string; cpus?: number; platform?: string } = {}): LocalMachine {
  return {
    hostname: o.hostname ?? 'gpu-runner-1',
    machine_id_sha256: machineIdHash(o.machineId ?? '4c4c4544004d3510804bb4c04f4b4a31'),
    platform: o.platform ?? 'linux x64 6.8.0-45-generic',
    cpu_model: 'AMD EPYC 9654 96-Core Processor',
    cpus: o.cpus ?? 64,
  }
}

interface HostOptions {
  driver?: string
  cuda?: string
  clocks?: Array<[number, number, number, number]>
  platform?: string
  hostname?: string
  machineId?: string
  cpus?: number
  uuids?: string[]
}

/** An environment as collectEnv records it on such a host (GPUs and identity from the real nvidia-smi parsers and env/local-host.ts). */
async function hostEnv(o: HostOptions = {}): Promise<EnvRecord> {
  const exec = smi(
    o.driver ?? '550.54.15',
    o.cuda ?? '12.4',
    o.clocks ?? [
      [1410, 1980, 2619, 2619],
      [1980, 1980, 2619, 2619],
    ],
    o.uuids,
  )
  const m = machine(o)
  return env({
    gpu: await queryGpuInventory(exec),
    host: { hostname: m.hostname, platform: m.platform, cpus: m.cpus },
    server_host: serverHostOf(true, m, await queryGpuUuids(exec)),
  })
}

/** The same host as collectEnv records it when nvidia-smi answers nothing (absent, or a broken driver). */
async function blindEnv(o: HostOptions = {}): Promise<EnvRecord> {
  const m = machine(o)
  return env({
    gpu: await queryGpuInventory(async () => null),
    host: { hostname: m.hostname, platform: m.platform, cpus: m.cpus },
    server_host: serverHostOf(true, m, await queryGpuUuids(async () => null)),
  })
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
    })
    expect(hostChanges(before, after)).toEqual([])
  })

  it('names another machine of the same kind (host name, machine id, CPU count, GPU UUIDs) a host change, without printing the host names', async () => {
    const other = await hostEnv({
      hostname: 'gpu-runner-7',
      machineId: '8e2f1c0a9b7d4e6f8a1b2c3d4e5f6a7b',
      cpus: 128,
      uuids: ['GPU-7f00aa11-2b3c-4d5e-8f90-a1b2c3d4e5f6', 'GPU-7f00aa11-2b3c-4d5e-8f90-a1b2c3d4e5f7'],
    })
    const changes = hostChanges(await hostEnv(), other)
    expect(changes.map((c) => c.field)).toEqual(['host name', 'machine id', 'CPUs', 'GPU UUIDs'])
    expect(changes[1]).toEqual({
      field: 'machine id',
      baseline: machineIdHash('4c4c4544004d3510804bb4c04f4b4a31'),
      candidate: machineIdHash('8e2f1c0a9b7d4e6f8a1b2c3d4e5f6a7b'),
    })
    expect(describeHostChanges(changes)).toMatch(/^host name changed; machine id [0-9a-f]{16} → [0-9a-f]{16}; CPUs 64 → 128; GPU UUIDs GPU-0a3c9e2f/)
    expect(describeHostChanges(changes)).not.toMatch(/gpu-runner/)
    expect(hostChangeCause(changes)).toMatch(/^another machine than the baseline's served the candidate \(host name changed; /)
  })

  it('names a change of the host name alone (the rest of the machine alike) a host change, and withholds both names', async () => {
    const baseline = await hostEnv()
    const candidate = await hostEnv({ hostname: 'gpu-runner-7' })
    expect(hostChanges(baseline, candidate)).toEqual([{ field: 'host name', baseline: '(withheld)', candidate: 'another (withheld)' }])
    // The verdict's table of environment changes, which a comment shows, carries no name either.
    expect(JSON.stringify(diffEnv(baseline, candidate).changes)).not.toMatch(/gpu-runner/)
  })

  it('leaves out the load host: load generated on another host against the same server is no host change', async () => {
    const here = await hostEnv()
    const shard = { ...here, host: { hostname: 'load-2', platform: 'linux arm64 6.11.0-1-generic', cpus: 8 } }
    expect(hostChanges(here, shard)).toEqual([])
  })

  it('reads the machine of a result written before servegate recorded it from its load host, when its server was on loopback', async () => {
    const old = { ...(await hostEnv()), server_host: undefined }
    expect(hostChanges(old, await hostEnv())).toEqual([])
    expect(hostChanges(old, await hostEnv({ hostname: 'gpu-runner-7' })).map((c) => c.field)).toEqual(['host name'])
    // On another address the old record proves no machine.
    const remoteOld = { ...old, base_url: 'http://10.0.0.7:8000' }
    expect(hostChanges(remoteOld, await hostEnv({ hostname: 'gpu-runner-7' })).filter((c) => c.field === 'host name')).toEqual([])
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

  it('calls a side that could not see the GPUs (no nvidia-smi) a change, never the same host, whichever side it is', async () => {
    const seen = hostChanges(await hostEnv(), await blindEnv())
    expect(seen).toEqual([
      { field: 'GPU', baseline: '2 × NVIDIA H100 80GB HBM3', candidate: 'unknown' },
      { field: 'GPU count', baseline: '2', candidate: 'unknown' },
      { field: 'driver', baseline: '550.54.15', candidate: 'unknown' },
      { field: 'CUDA', baseline: '12.4', candidate: 'unknown' },
    ])
    expect(hostChangeCause(seen)).toBe(
      "one side could not see the GPUs the other saw (GPU 2 × NVIDIA H100 80GB HBM3 → unknown; GPU count 2 → unknown; driver 550.54.15 → unknown; CUDA 12.4 → unknown: no nvidia-smi, or a server on another machine), so nothing shows the host is the baseline's",
    )
    expect(hostChanges(await blindEnv(), await hostEnv({ driver: '560.28.03' })).map((c) => c.field)).toEqual(['GPU', 'GPU count', 'driver', 'CUDA'])
    // Neither side seeing the GPUs shows no change of them (a CPU host, the simulator).
    expect(hostChanges(await blindEnv(), await blindEnv())).toEqual([])
  })

  it('keeps clocks it cannot parse as they are, so a change still shows', () => {
    expect(maxClocks('unknown')).toBe('unknown')
    expect(maxClocks('some other format')).toBe('some other format')
  })
})

// Real sweeps of the simulator (test/fixtures/gate-catalogue, scripts/gate-catalogue.ts): three refreshes
// and a candidate whose engine is 15 % slower, each recorded as a run on the machine given.
const CATALOGUE = join(import.meta.dirname, '..', 'fixtures', 'gate-catalogue')
const sweep = (name: string): ResultFile => parseResult(JSON.parse(readFileSync(join(CATALOGUE, `${name}.json`), 'utf8')), name)
/** `r` as collectEnv records it when the server ran on `m` (its load host that machine too). */
const on = (r: ResultFile, m: LocalMachine, uuids: string[] = []): ResultFile => ({
  ...r,
  env: { ...r.env, host: { hostname: m.hostname, platform: m.platform, cpus: m.cpus }, server_host: serverHostOf(true, m, uuids) },
})

describe('compareToBaseline on another machine than the baseline', () => {
  const runner1 = machine({ platform: 'linux x64 6.18.44-fc-v1272', cpus: 2 })
  // Another box of the same runner group: same kernel, another name, machine id and CPU count.
  const runner7 = machine({ hostname: 'gpu-runner-7', machineId: '8e2f1c0a9b7d4e6f8a1b2c3d4e5f6a7b', platform: 'linux x64 6.18.44-fc-v1272', cpus: 4 })
  let history: Baseline | null = null
  for (const n of ['base-1', 'base-2', 'base-3']) history = appendRefresh(history, on(sweep(n), runner1), { name: 'catalogue' })

  it("judges a 15 % slower engine on the baseline's machine a regression (the control)", () => {
    expect(compareToBaseline(history!, on(sweep('slower-15pct'), runner1)).verdict).toBe('regression')
  })

  it('calls the same slower engine on another machine unmeasured, never a regression charged to the PR, and says what to do', () => {
    const v = compareToBaseline(history!, on(sweep('slower-15pct'), runner7))
    expect(v.verdict).toBe('unmeasured')
    expect(v.regressions).toEqual([])
    expect(v.reasons[0]).toBe(
      `unmeasured: another machine than the baseline's served the candidate (host name changed; machine id ${runner1.machine_id_sha256} → ${runner7.machine_id_sha256}; CPUs 2 → 4), so the stored baseline cannot tell the pull request's effect from the machine's (a runner label of the baseline's machine alone keeps the gate on it); refresh the baseline on this host, or set gate.reference_command so the gate measures the base engine beside the PR`,
    )
    expect(v.reasons.join('\n')).not.toMatch(/gpu-runner/)
    expect(gateExit(v.verdict, DEFAULT_FAIL_ON)).toBe(1)
  })

  it('sends a host change to the A/B when the base branch names a reference engine', () => {
    expect(hostChangedSince(history!, on(sweep('slower-15pct'), runner7))).toBe(true)
    expect(hostChangedSince(history!, on(sweep('slower-15pct'), runner1))).toBe(false)
  })

  it('says so when both servers ran on a machine servegate could not see (a remote base URL)', () => {
    const remote = (r: ResultFile): ResultFile => ({ ...r, env: { ...r.env, server_host: serverHostOf(false, runner1, []) } })
    let far: Baseline | null = null
    for (const n of ['base-1', 'base-2', 'base-3']) far = appendRefresh(far, remote(sweep(n)), { name: 'catalogue' })
    const v = compareToBaseline(far!, remote(sweep('slower-15pct')))
    expect(v.reasons).toContain(
      "both sides' servers ran on a machine servegate could not see (a base URL on another host): a change of that machine can be neither shown nor ruled out; run servegate on the serving host to record it",
    )
  })
})

describe('compareToBaseline when one side could not see the GPUs', () => {
  const r = (e: EnvRecord): ResultFile => ({ ...result(), env: e })

  it('is not comparable when the baseline ran on GPUs and the candidate shows none', async () => {
    const v = compareToBaseline(baselineFromResult(r(await hostEnv()), 'gate'), r(await blindEnv()))
    expect(v.verdict).toBe('not_comparable')
    expect(v.reasons[0]).toBe(
      'not comparable: the baseline ran on GPUs (2 × NVIDIA H100 80GB HBM3) and the candidate shows none (nvidia-smi saw no GPU, or the server ran on another machine): nothing shows it ran on the same GPUs',
    )
  })

  it("is not comparable when the candidate's server is on a remote box and the baseline's GPUs were seen", async () => {
    const remote = { ...(await blindEnv()), base_url: 'http://10.0.0.7:8000', server_host: serverHostOf(false, machine(), []) }
    expect(compareToBaseline(baselineFromResult(r(await hostEnv()), 'gate'), r(remote)).verdict).toBe('not_comparable')
  })

  it('is unmeasured when the baseline could not see the GPUs the candidate shows', async () => {
    const v = compareToBaseline(baselineFromResult(r(await blindEnv()), 'gate'), r(await hostEnv()))
    expect(v.verdict).toBe('unmeasured')
    expect(v.reasons[0]).toMatch(/^unmeasured: one side could not see the GPUs the other saw \(GPU unknown → 2 × NVIDIA H100 80GB HBM3; /)
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

  it('says so when the candidate could not see the GPUs the baseline saw, and when another machine served it', async () => {
    expect(hostNotice(await baselineOn(await hostEnv()), await blindEnv(), false)).toBe(
      "⚠ Host not shown to be the baseline's: GPU 2 × NVIDIA H100 80GB HBM3 → unknown; GPU count 2 → unknown; driver 550.54.15 → unknown; CUDA 12.4 → unknown (one side could not see the GPUs). The pull request may not be the cause: a change may be the host's.",
    )
    expect(hostNotice(await baselineOn(await hostEnv()), await hostEnv({ hostname: 'gpu-runner-7' }), false)).toBe(
      "⚠ Host changed: host name changed since the baseline; the repository is unchanged. The pull request may not be the cause: a change may be the host's.",
    )
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
