import { describe, expect, it } from 'vitest'
import { compareToBaseline } from '../../src/gate/compare.js'
import { NOT_RECORDED, diffFingerprint, fingerprintOf, resultFingerprint, tokensPerChunkChanges, versionLine } from '../../src/gate/fingerprint.js'
import { appendRefresh } from '../../src/gate/refresh.js'
import { parseResult } from '../../src/store/result-file.js'
import { dayResult, pipeDay } from './fixtures.js'

describe('fingerprintOf', () => {
  it('names what was measured and how, from the recorded config and the runs', () => {
    expect(fingerprintOf(pipeDay(0))).toEqual({
      api: 'completions',
      model: 'org/model',
      shapes: ['64x16'],
      concurrency: [1, 4, 16],
      prompts_per_concurrency: 12,
      request_extras: 'none',
      tokenizer: 'server',
      warmup: 'auto',
      target: 'tpot p95 ≤ 50 ms',
      ignore_eos: true,
      tokens_per_chunk: { '64x16@c1': 1, '64x16@c4': 1, '64x16@c16': 1 },
      prompt_calibration: 'token_ids',
      load: 'closed',
      request_timeout: '124.064 s',
      workers: 'auto',
      harness: '0.1',
    })
  })

  it('covers the request deadline, the load threads and the version line (major.minor while 0.x)', () => {
    const fp = (config: Record<string, unknown>, version = '0.1.0') => {
      const r = pipeDay(0, 1, { config })
      r.harness.version = version
      return fingerprintOf(r)
    }
    const same = fp({})
    expect(diffFingerprint(same, fp({ request_timeout_s: 30 }))).toEqual([{ field: 'request deadline', baseline: '124.064 s', candidate: '30 s' }])
    expect(fp({ request_timeout_s: { '64x16': 124.064, '4096x512': 252.096 } }).request_timeout).toBe('4096x512 252.096 s, 64x16 124.064 s')
    expect(diffFingerprint(same, fp({ workers: 2 }))).toEqual([{ field: 'workers', baseline: 'auto', candidate: '2' }])
    expect(diffFingerprint(same, fp({}, '0.1.3'))).toEqual([])
    expect(diffFingerprint(fp({}, '0.1.3'), fp({}, '0.2.0'))).toEqual([{ field: 'servegate version', baseline: '0.1', candidate: '0.2' }])
    expect(versionLine('1.4.2')).toBe('1')
    expect(versionLine('1.0.0')).toBe(versionLine('1.9.3'))
    // A result that did not record a setting proves no difference in it.
    expect(diffFingerprint(same, fp({ request_timeout_s: undefined, workers: undefined }))).toEqual([])
  })

  it('refuses a baseline whose fingerprint predates the new fields, advising a refresh, in the gate and in baseline update', () => {
    // Three refreshes, so that the baseline with the fields recorded can pass (one alone is blind).
    let base = appendRefresh(null, pipeDay(0), { name: 'g' })
    for (const d of [1, 2]) base = appendRefresh(base, pipeDay(d), { name: 'g' })
    const newest = base.refreshes.at(-1)!
    const { request_timeout: _r, workers: _w, harness: _h, ...older } = newest.fingerprint!
    const stale = { ...base, refreshes: [...base.refreshes.slice(0, -1), { ...newest, fingerprint: older }] }
    const v = compareToBaseline(stale, pipeDay(3))
    expect(v.verdict).toBe('not_comparable')
    expect(v.reasons).toContain(`not comparable: measurement settings differ: request deadline: baseline ${NOT_RECORDED}, candidate 124.064 s`)
    expect(v.reasons.filter((r) => r.includes('refresh the baseline'))).toHaveLength(3)
    expect(() => appendRefresh(stale, pipeDay(3), { name: 'g' })).toThrow(/servegate version: baseline not recorded .*refresh the baseline/)
    // The same baseline with the fields recorded passes the same candidate.
    expect(compareToBaseline(base, pipeDay(3)).verdict).toBe('pass')
  })

  it('never compares closed-loop with open-loop results, nor two arrival processes', () => {
    const open = (rates: unknown[], burstiness = 1) =>
      fingerprintOf(pipeDay(0, 1, { config: { load: 'open', request_rates: rates, burstiness, max_concurrency: null, num_prompts: 200 } }))
    expect(diffFingerprint(fingerprintOf(pipeDay(0)), open([5, 'inf']))).toContainEqual({
      field: 'load',
      baseline: 'closed',
      candidate: 'open: rates 5, inf/s, burstiness 1, max concurrency none, 200 prompts',
    })
    expect(diffFingerprint(open([5]), open([5], 0.5)).map((d) => d.field)).toEqual(['load'])
    // A fingerprint stored before the load was recorded was closed loop.
    const { load: _dropped, ...older } = fingerprintOf(pipeDay(0))
    expect(diffFingerprint(older, fingerprintOf(pipeDay(0)))).toEqual([])
  })

  it('tells chat prompts calibrated to input_len tokens from uncalibrated ones, and skips files that did not record it', () => {
    const chat = (mode: string | undefined) =>
      fingerprintOf(
        pipeDay(0, 1, { config: { server: { base_url: 'http://127.0.0.1:8000', model: null, api: 'chat', api_key_env: null }, prompt_calibration: mode } }),
      )
    expect(diffFingerprint(chat('none'), chat('tokenize'))).toEqual([{ field: 'prompt calibration', baseline: 'none', candidate: 'tokenize' }])
    expect(diffFingerprint(chat(undefined), chat('tokenize'))).toEqual([])
  })

  it('rounds tokens per chunk to 0.1 from the server usage over the content chunks', () => {
    // 16 tokens in chunks of 3: 6 chunks, 2.67 tokens each.
    const fp = fingerprintOf(pipeDay(0, 1, { run: (c) => (c === 4 ? { tokensPerChunk: 3 } : {}) }))
    expect(fp.tokens_per_chunk['64x16@c4']).toBe(2.7)
    expect(tokensPerChunkChanges(fingerprintOf(pipeDay(0)), fp)).toEqual(new Map([['64x16@c4', { baseline: 1, candidate: 2.7 }]]))
  })

  it('derives a fingerprint for a result written before it was stored, equal to the stored one', () => {
    const r = pipeDay(2)
    const stored = r.fingerprint!
    const { fingerprint: _, ...old } = JSON.parse(JSON.stringify(r)) as typeof r
    void _
    const parsed = parseResult(old, 'old.json')
    expect(parsed.fingerprint).toBeUndefined()
    expect(resultFingerprint(parsed)).toEqual(stored)
    // And such a result still compares as before.
    const base = appendRefresh(null, pipeDay(0), { name: 'g' })
    expect(compareToBaseline(base, parsed).verdict).toBe(compareToBaseline(base, r).verdict)
  })

  it('skips settings an older file did not record, but names every one that differs', () => {
    const unknown = fingerprintOf(dayResult(0))
    expect(unknown).toMatchObject({ api: 'unknown', shapes: [], concurrency: [], prompts_per_concurrency: 'unknown', warmup: 'unknown' })
    expect(diffFingerprint(unknown, fingerprintOf(pipeDay(0)))).toEqual([])
    const other = fingerprintOf(pipeDay(0, 1, { config: { warmup: 4, prompts_per_concurrency: 6, server: { api: 'chat' } } }))
    expect(diffFingerprint(fingerprintOf(pipeDay(0)), other)).toEqual([
      { field: 'api', baseline: 'completions', candidate: 'chat' },
      { field: 'prompts per concurrency', baseline: '12', candidate: '6' },
      { field: 'warmup', baseline: 'auto', candidate: '4' },
    ])
  })
})
