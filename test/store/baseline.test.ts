import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { UsageError } from '../../src/errors.js'
import { parseBaseline, readBaseline, writeBaseline } from '../../src/store/baseline.js'
import { appendNoise, appendRefresh, baselineFromResult, profileOf, resetKeepingNoise } from '../../src/gate/refresh.js'
import { compareStarts } from '../../src/gate/seq-baseline.js'
import { dayResult, makeResult, makeEnv } from '../gate/fixtures.js'

let dir: string
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'servegate-baseline-'))
})
afterEach(async () => {
  await rm(dir, { recursive: true, force: true })
})

describe('baselineFromResult', () => {
  it('stores the target, the gated profile and per-run figures under metric keys', () => {
    const b = baselineFromResult(makeResult({ itl: { 16: [20, 21, 22], 1: [10, 11, 12] }, tput: [900, 1000, 1100] }), 'gate', 'abc')
    expect(b.schema).toBe('servegate.baseline/v1')
    expect(b.name).toBe('gate')
    expect(b.profile).toEqual({ shapes: [{ input_len: 4096, output_len: 512 }], concurrency: [1, 16] })
    const r = b.refreshes[0]!
    expect(r.commit).toBe('abc')
    expect(r.at).toBe('2025-01-01T01:00:00.000Z')
    expect(r.runs['itl_p95@4096x512@c16']).toEqual([20, 21, 22])
    expect(r.runs['tput_at_target@4096x512']).toEqual([900, 1000, 1100])
    expect(r.runs['out_tok@4096x512@c1']).toEqual([512, 512, 512])
    expect(r.invalid).toEqual([])
  })

  it('leaves invalid runs out of the figures and records why', () => {
    const res = makeResult({
      itl: { 1: [10, 11, 12] },
      run: (_c, rep) => (rep === 1 ? { invalid: ['gpu_shared'] } : {}),
    })
    const r = baselineFromResult(res, 'g').refreshes[0]!
    expect(r.runs['itl_p95@4096x512@c1']).toEqual([10, 12])
    // Throughput at target of repeat 1 inherits the invalid point.
    expect(r.runs['tput_at_target@4096x512']).toEqual([1000, 1000])
    expect(r.invalid).toEqual([
      { scope: '4096x512@c1', repeat: 1, codes: ['gpu_shared'] },
      { scope: '4096x512', repeat: 1, codes: ['gpu_shared'] },
    ])
  })

  it('stores an unreachable target as zero throughput', () => {
    const r = baselineFromResult(makeResult({ itl: { 1: [10, 10] }, tput: [null, 800] }), 'g').refreshes[0]!
    expect(r.runs['tput_at_target@4096x512']).toEqual([0, 800])
  })

  it('refuses a result without a single valid run', () => {
    const res = makeResult({ itl: { 1: [10] }, run: () => ({ invalid: ['client_saturated'] }) })
    expect(() => baselineFromResult(res, 'g')).toThrow(/has no valid runs/)
  })
})

describe('appendRefresh', () => {
  it('appends newest last and trims the history to maxHistory', () => {
    let b = appendRefresh(null, dayResult(0), { name: 'gate', maxHistory: 3 })
    for (let d = 1; d < 5; d++) b = appendRefresh(b, dayResult(d), { maxHistory: 3 })
    expect(b.refreshes.map((r) => r.at)).toEqual(['2025-01-03T01:00:00.000Z', '2025-01-04T01:00:00.000Z', '2025-01-05T01:00:00.000Z'])
    expect(b.name).toBe('gate')
  })

  it('keeps ten refreshes by default', () => {
    let b = appendRefresh(null, dayResult(0), { name: 'gate' })
    for (let d = 1; d < 12; d++) b = appendRefresh(b, dayResult(d))
    expect(b.refreshes).toHaveLength(10)
    expect(b.refreshes[0]!.at).toBe('2025-01-03T01:00:00.000Z')
  })

  it.each([
    [
      'target',
      makeResult({ itl: { 1: [10], 16: [20] }, target: { metric: 'tpot', percentile: 95, threshold_ms: 40 } }),
      /target: baseline tpot p95 ≤ 50 ms, result tpot p95 ≤ 40 ms/,
    ],
    ['concurrency', makeResult({ itl: { 1: [10], 64: [30] } }), /concurrency: baseline 1, 16, result 1, 64/],
    ['shapes', makeResult({ itl: { 1: [10], 16: [20] }, shape: { input_len: 1024, output_len: 128 } }), /shapes: baseline 4096x512, result 1024x128/],
  ])('rejects a result with a different %s as a usage error, never appending it', (_what, res, message) => {
    const b = baselineFromResult(dayResult(0), 'gate')
    const err = (() => {
      try {
        appendRefresh(b, res, { source: 'new.json' })
      } catch (e) {
        return e
      }
      return null
    })()
    expect(err).toBeInstanceOf(UsageError)
    expect((err as Error).message).toMatch(/new\.json was measured with a different gated sweep than baseline gate/)
    expect((err as Error).message).toMatch(message)
  })

  it('rejects a non-positive history length', () => {
    expect(() => appendRefresh(null, dayResult(0), { maxHistory: 0 })).toThrow(/--max-history 0: expected a positive integer/)
  })
})

describe('profileOf', () => {
  it('sorts shapes and concurrencies', () => {
    expect(profileOf(makeResult({ itl: { 64: [1], 4: [1] } })).concurrency).toEqual([4, 64])
  })
})

describe('baseline files', () => {
  it('round-trips through write and read', async () => {
    const b = appendRefresh(baselineFromResult(dayResult(0), 'gate'), dayResult(1))
    const path = join(dir, 'baselines', 'gate.json')
    await writeBaseline(path, b)
    expect(await readBaseline(path)).toEqual(b)
  })

  it('says a truncated baseline is truncated', async () => {
    const text = JSON.stringify(baselineFromResult(dayResult(0), 'gate'))
    await writeFile(join(dir, 'b.json'), text.slice(0, text.length - 40))
    await expect(readBaseline(join(dir, 'b.json'))).rejects.toThrow(/b\.json is not valid JSON: the file ends early/)
  })

  it('names the schema of a wrong file and points a result file to baseline update', () => {
    expect(() => parseBaseline(dayResult(0), 'r.json')).toThrow(
      'r.json is not a servegate baseline: schema is "servegate.result/v1", expected "servegate.baseline/v1"',
    )
    expect(() => parseBaseline([], 'x.json')).toThrow('x.json is not a servegate baseline: expected a JSON object')
  })

  it('lists every field problem of a corrupt baseline', () => {
    const json = JSON.parse(JSON.stringify(baselineFromResult(dayResult(0), 'gate'))) as Record<string, any>
    json.refreshes[0].runs['itl_p95@4096x512@c1'] = [10, 'x']
    json.profile.concurrency = []
    json.tolerances = { itl: 0.05 }
    let msg = ''
    try {
      parseBaseline(json, 'baselines/gate.json')
    } catch (e) {
      msg = (e as Error).message
    }
    expect(msg).toContain('baselines/gate.json is not a valid servegate baseline:')
    expect(msg).toContain('refreshes.0.runs.itl_p95@4096x512@c1.1: Invalid input: expected number, received string')
    expect(msg).toMatch(/profile\.concurrency: Too small/)
    expect(msg).toMatch(/tolerances: Unrecognized key: "itl"/)
  })
})

describe('the noise history: starts kept for the spread alone', () => {
  const ats = (rs: readonly { at: string }[] | undefined): string[] => (rs ?? []).map((r) => r.at.slice(0, 10))

  it('keeps a refresh that leaves the history as a noise start, up to maxNoise', () => {
    let b = appendRefresh(null, dayResult(0), { name: 'gate', maxHistory: 2, maxNoise: 2 })
    for (let d = 1; d < 5; d++) b = appendRefresh(b, dayResult(d), { maxHistory: 2, maxNoise: 2 })
    expect(ats(b.refreshes)).toEqual(['2025-01-04', '2025-01-05'])
    expect(ats(b.noise_history)).toEqual(['2025-01-02', '2025-01-03'])
    // It survives a write and a read: the file's schema holds it.
    expect(parseBaseline(JSON.parse(JSON.stringify(b)), 'b.json').noise_history).toHaveLength(2)
  })

  it('appendNoise keeps a start beside the refreshes, with the same checks as a refresh', () => {
    const b = appendNoise(baselineFromResult(dayResult(0), 'gate'), dayResult(1), { source: 'watch.json' })
    expect(ats(b.refreshes)).toEqual(['2025-01-01'])
    expect(ats(b.noise_history)).toEqual(['2025-01-02'])
    expect(() => appendNoise(b, makeResult({ itl: { 1: [10], 64: [30] } }), { source: 'watch.json' })).toThrow(
      /watch.json was measured with a different gated sweep than baseline gate:\n {2}concurrency: baseline 1, 16, result 1, 64/,
    )
    const elsewhere = dayResult(2)
    elsewhere.env = makeEnv((e) => {
      e.gpu.driver_version = '999.1'
    })
    expect(() => appendNoise(b, elsewhere, { source: 'watch.json' })).toThrow(/watch.json was measured on another host than baseline gate's history: driver/)
  })

  it('a reset starts the centre afresh and keeps the old starts of this host and sweep for the spread', () => {
    let old = appendRefresh(null, dayResult(0), { name: 'gate' })
    old = appendRefresh(old, dayResult(1))
    old = appendNoise(old, dayResult(2))
    const reset = resetKeepingNoise(old, dayResult(5, 1.3), { name: 'gate' })
    expect(ats(reset.refreshes)).toEqual(['2025-01-06'])
    expect(ats(reset.noise_history)).toEqual(['2025-01-03', '2025-01-01', '2025-01-02'])
    // Another sweep has other rows: nothing of it is kept.
    expect(resetKeepingNoise(old, makeResult({ itl: { 1: [10], 64: [30] } }), { name: 'gate' }).noise_history).toBeUndefined()
    expect(resetKeepingNoise(null, dayResult(5), { name: 'gate' }).noise_history).toBeUndefined()
  })

  it("draws a sequential row's σ from the noise history too, never its centre", () => {
    const one = baselineFromResult(dayResult(0), 'gate')
    // Thirty noise starts, each 20 % slower: they would move a centre far, and must not.
    let deep = one
    for (let d = 1; d <= 30; d++) deep = appendNoise(deep, dayResult(d, 1.2))
    const candidate = dayResult(40)
    const row = (b: typeof one) => compareStarts(b, candidate, {}, () => 0).rows.find((r) => r.key === 'itl_p95@4096x512@c16')!
    expect(row(deep).baseline).toBe(row(one).baseline)
    expect(row(one).history).toBe(1)
    expect(row(deep).history).toBe(31)
    // One refresh leans on the priors and their wide bound; thirty-one starts of small wiggles design σ narrower.
    expect(row(deep).sigma_pct!).toBeLessThan(row(one).sigma_pct!)
  })
})
