/**
 * One host per baseline history (issue case 7): a history that mixes GPUs judged a candidate on
 * the new GPU against the old GPUs' spread and centre, and `baseline update` appended a refresh
 * from other hardware without a word. Results come from the pipeline's own summarizer
 * (pipelineResult); only the recorded environment differs between hosts.
 */
import { describe, expect, it } from 'vitest'
import { compareToBaseline } from '../../src/gate/compare.js'
import { refreshesOnHost } from '../../src/gate/host-history.js'
import { DEFAULT_FAIL_ON, gateExit } from '../../src/gate/outcome.js'
import type { Baseline } from '../../src/gate/types.js'
import { appendRefresh, refreshFromResult } from '../../src/gate/refresh.js'
import type { EnvRecord, ResultFile } from '../../src/types.js'
import { pipeDay } from './fixtures.js'

const H100 = (e: EnvRecord): void => {
  e.gpu = { ...e.gpu, names: ['NVIDIA H100 80GB HBM3', 'NVIDIA H100 80GB HBM3'], driver_version: '575.51', cuda_version: '12.9' }
}
/** Day `d` on the fixture's 2 × B200 host, or on 2 × H100 (another GPU model, driver and CUDA). */
function on(host: 'b200' | 'h100', d: number, factor = 1): ResultFile {
  const r = pipeDay(d, factor)
  if (host === 'h100') H100(r.env)
  return r
}

/**
 * Three refreshes on the old GPU (the B200 host here is the slower one: factor 1.3) and then one
 * on the new, faster H100, as a history written before updates kept one host looks. The store now
 * refuses that append, so it is put together from the same refreshes the store makes.
 */
function mixedHistory(h100Refreshes = 1): Baseline {
  let b: Baseline | null = null
  for (const d of [0, 1, 2]) b = appendRefresh(b, on('b200', d, 1.3), { name: 'gate' })
  const h100 = Array.from({ length: h100Refreshes }, (_, i) => refreshFromResult(on('h100', 3 + i)))
  return { ...b!, refreshes: [...b!.refreshes, ...h100] }
}

describe('the gate draws its spread only from refreshes of the candidate host', () => {
  it('a 30 % slower candidate on the new GPU is a regression, not a pass against the old GPU history', () => {
    const b = mixedHistory()
    const slow = on('h100', 5, 1.3)
    const v = compareToBaseline(b, slow)
    expect(v.verdict).toBe('regression')
    expect(gateExit(v.verdict, DEFAULT_FAIL_ON)).toBe(1)
    expect(v.reasons[0]).toBe(
      'the spread is drawn from the 1 of 4 refreshes of baseline gate measured on this host (GPU NVIDIA H100 80GB HBM3 (count 2), driver 575.51, CUDA 12.9); the others were measured on another host',
    )
    // Without the filter the old GPU's refreshes were the centre: the same candidate read as unchanged.
    const unfiltered = compareToBaseline({ ...b, refreshes: b.refreshes.map((r) => ({ ...r, env: slow.env })) }, slow)
    expect(unfiltered.verdict).toBe('pass')
  })

  it('an unchanged candidate on the new GPU still passes', () => {
    // One refresh on this host leaves every row blind (its MDC above 15 %): undecided, never a pass,
    // and never a regression against the old GPU's history either.
    const one = compareToBaseline(mixedHistory(), on('h100', 5))
    expect(one.verdict).toBe('undecided')
    expect(one.blind).toHaveLength(one.rows.filter((r) => r.gated).length)
    // Three refreshes on the new GPU give the rows power: the unchanged candidate passes.
    const three = compareToBaseline(mixedHistory(3), on('h100', 7))
    expect(three.verdict).toBe('pass')
    expect(three.reasons[0]).toMatch(/^the spread is drawn from the 3 of 6 refreshes of baseline gate measured on this host/)
  })

  it('prefers the same driver and CUDA; with none, the same GPUs judge it (a driver bump is still caught)', () => {
    const envs = (host: 'b200' | 'h100', mutate?: (e: EnvRecord) => void) => {
      const e = on(host, 0).env
      mutate?.(e)
      return { env: e }
    }
    const newDriver = (e: EnvRecord): void => void (e.gpu.driver_version = '580.1')
    const history = [envs('b200'), envs('b200', newDriver), envs('b200')]
    expect(refreshesOnHost(history, envs('b200', newDriver).env, 'gate').refreshes).toEqual([history[1]])
    const bumped = envs('b200', (e) => void (e.gpu.driver_version = '590.2')).env
    expect(refreshesOnHost(history, bumped, 'gate')).toEqual({
      refreshes: history,
      note: null,
    })
    // A side that could not see a field (no nvidia-smi) proves no other host.
    const blind = envs('b200', (e) => void (e.gpu = { ...e.gpu, names: [], driver_version: 'unknown', cuda_version: 'unknown' })).env
    expect(refreshesOnHost(history, blind, 'gate').refreshes).toEqual(history)
  })

  it('leaves no spread when no refresh is of the candidate GPUs, and says why', () => {
    const history = [{ env: on('b200', 0).env }]
    const r = refreshesOnHost(history, on('h100', 1).env, 'gate')
    expect(r.refreshes).toEqual([])
    expect(r.note).toMatch(
      /^none of the 1 refreshes of baseline gate was measured on this host .*GPU 2 × NVIDIA B200 → 2 × NVIDIA H100 80GB HBM3.*Record a baseline on this host \(servegate baseline update --reset/,
    )
  })
})

describe('baseline update keeps one host per history', () => {
  it('refuses a refresh from other GPUs, another driver or CUDA, naming what changed', () => {
    const b = appendRefresh(null, on('b200', 0), { name: 'gate' })
    expect(() => appendRefresh(b, on('h100', 1), { name: 'gate', source: 'r.json' })).toThrow(
      "r.json was measured on another host than baseline gate's history: GPU 2 × NVIDIA B200 → 2 × NVIDIA H100 80GB HBM3; driver 570.1 → 575.51; CUDA 12.8 → 12.9 (history: GPU NVIDIA B200 (count 2), driver 570.1, CUDA 12.8)",
    )
    const driver = on('b200', 1)
    driver.env.gpu.driver_version = '575.51'
    expect(() => appendRefresh(b, driver, { name: 'gate' })).toThrow(/another host .*: driver 570\.1 → 575\.51 /)
    const declared = on('b200', 1)
    declared.env.gpu.count = 4
    expect(() => appendRefresh(b, declared, { name: 'gate' })).toThrow(/GPU count 2 → 4/)
    // The same host appends.
    expect(appendRefresh(b, on('b200', 1), { name: 'gate' }).refreshes).toHaveLength(2)
  })

  it('compares with every refresh kept: one with an unknown driver lets no other driver in behind it', () => {
    let b = appendRefresh(null, on('b200', 0), { name: 'gate' })
    // nvidia-smi answered the names but not the driver on day 1 (a [N/A] field): the same GPUs, appended.
    const blurred = on('b200', 1)
    blurred.env.gpu.driver_version = 'unknown'
    b = appendRefresh(b, blurred, { name: 'gate' })
    const bumped = on('b200', 2)
    bumped.env.gpu.driver_version = '575.51'
    expect(() => appendRefresh(b, bumped, { name: 'gate', source: 'r.json' })).toThrow(
      "r.json was measured on another host than baseline gate's history: driver 570.1 → 575.51 since its refresh 1 of 2 (2025-01-01T01:00:00.000Z) (history: GPU NVIDIA B200 (count 2), driver 570.1, CUDA 12.8)",
    )
    expect(appendRefresh(b, on('b200', 2), { name: 'gate' }).refreshes).toHaveLength(3)
  })

  it('refuses a refresh from another machine of the same kind (another host name), naming no host', () => {
    const b = appendRefresh(null, on('b200', 0), { name: 'gate' })
    const other = on('b200', 1)
    other.env.host = { ...other.env.host, hostname: 'gpu-2' }
    expect(() => appendRefresh(b, other, { name: 'gate', source: 'r.json' })).toThrow(
      "r.json was measured on another host than baseline gate's history: host name changed (history: GPU NVIDIA B200 (count 2), driver 570.1, CUDA 12.8)",
    )
  })

  it('refuses a refresh that shows no GPU where the history saw some, and one that shows GPUs where it saw none', () => {
    const blind = (d: number): ResultFile => {
      const r = on('b200', d)
      r.env.gpu = { names: [], count: 'unknown', driver_version: 'unknown', cuda_version: 'unknown', clocks: 'unknown' }
      return r
    }
    expect(() => appendRefresh(appendRefresh(null, on('b200', 0), { name: 'gate' }), blind(1), { name: 'gate', source: 'r.json' })).toThrow(
      "r.json shows no GPU (nvidia-smi saw none, or the server ran on another machine) while baseline gate's history was measured on GPUs (GPU NVIDIA B200 (count 2), driver 570.1, CUDA 12.8): nothing shows it is the history's host",
    )
    expect(() => appendRefresh(appendRefresh(null, blind(0), { name: 'gate' }), on('b200', 1), { name: 'gate', source: 'r.json' })).toThrow(
      "r.json was measured on GPUs (GPU NVIDIA B200 (count 2), driver 570.1, CUDA 12.8) while baseline gate's history shows none (nvidia-smi saw none, or its server ran on another machine): nothing shows it is the history's host",
    )
    expect(appendRefresh(appendRefresh(null, blind(0), { name: 'gate' }), blind(1), { name: 'gate' }).refreshes).toHaveLength(2)
  })

  it('takes a remote server whose GPUs nvidia-smi cannot see as the host its --gpus declares', () => {
    const remote = (d: number, gpus: number): ResultFile => {
      const r = on('b200', d)
      r.env.gpu = { names: [], count: gpus, driver_version: 'unknown', cuda_version: 'unknown', clocks: 'unknown' }
      return r
    }
    const b = appendRefresh(null, remote(0, 2), { name: 'gate' })
    expect(appendRefresh(b, remote(1, 2), { name: 'gate' }).refreshes).toHaveLength(2)
    expect(() => appendRefresh(b, remote(1, 8), { name: 'gate' })).toThrow(/GPU count 2 → 8/)
  })
})
