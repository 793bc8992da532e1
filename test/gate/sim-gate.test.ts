import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { resolveConfig } from '../../src/config/resolve.js'
import { fingerprintOf } from '../../src/gate/fingerprint.js'
import { compareToBaseline } from '../../src/gate/compare.js'
import type { Baseline } from '../../src/gate/types.js'
import { startSim, type SimOptions } from '../../src/sim/index.js'
import { appendRefresh } from '../../src/store/baseline.js'
import { readResultFile } from '../../src/store/result-file.js'
import { runSweep } from '../../src/sweep/run-sweep.js'
import type { ResultFile } from '../../src/types.js'
import { rejudge } from '../fixtures/rejudge.js'

// Real sweeps against the deterministic simulator on 127.0.0.1: the failed-request
// budget and speculative-decoding chunks, end to end through the summarizer.
let dir: string
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'servegate-sim-gate-'))
})
afterAll(() => {
  if (dir) rmSync(dir, { recursive: true, force: true })
})

async function sweep(name: string, sim: Partial<SimOptions>, flags: Record<string, string>): Promise<ResultFile> {
  const handle = await startSim({ ttftMs: 20, seed: 11, ...sim })
  const out = join(dir, `${name}.json`)
  try {
    const cfg = resolveConfig({ file: null, filePath: null, flags: { baseUrl: handle.url, inputLen: '32', repeats: '2', out, ...flags }, env: {} })
    await runSweep(cfg, { log: () => {} })
  } finally {
    await handle.close()
  }
  const raw = await readResultFile(out)
  // The sweep stores the fingerprint in the result it writes.
  expect(raw.fingerprint).toEqual(fingerprintOf(raw))
  return rejudge(raw)
}


describe('the failed-request budget against the simulator', () => {
  // C = 16 × 12 prompts = 192 requests a run: 0.5 % of failures is about one request.
  const flags = { outputLen: '8', concurrency: '16', promptsPerConcurrency: '12' }
  let baseline: Baseline

  beforeAll(async () => {
    baseline = appendRefresh(null, await sweep('base', { itlMs: 10 }, flags), { name: 'budget' })
  }, 120_000)

  it('keeps runs with failures within the budget and breaks the candidate beyond it', async () => {
    const few = await sweep('few', { itlMs: 10, faults: [{ kind: 'http500', rate: 0.005 }] }, flags)
    const many = await sweep('many', { itlMs: 10, faults: [{ kind: 'http500', rate: 0.05 }] }, flags)
    const runsOf = (r: ResultFile) => r.points.flatMap((p) => p.runs)

    // A budget of as many failures as the run with the most had: every run is within it.
    const most = Math.max(...runsOf(few).map((r) => r.failed))
    expect(most).toBeGreaterThan(0)
    const kept = compareToBaseline(baseline, few, { maxFailedRequests: most })
    expect(kept.verdict).not.toBe('broken')
    const itl = kept.rows.find((r) => r.key === 'itl_p95@32x8@c16')!
    expect(itl.n_candidate).toBe(2)
    expect(itl.notes.some((n) => /requests? failed .* within the at most \d+ allowed/.test(n))).toBe(true)

    // 5 % is beyond both the default 1 % share and that count.
    expect(runsOf(many).every((r) => r.failed > most)).toBe(true)
    const v = compareToBaseline(baseline, many, { maxFailedRequests: most })
    expect(v.verdict).toBe('broken')
    expect(compareToBaseline(baseline, many).verdict).toBe('broken')
    expect(v.reasons.join('\n')).toMatch(/p95 ITL 32×8 c=16: broken — .*requests failed \(\d+\.\d %\), beyond the at most \d+ allowed/)
  }, 120_000)
})

describe('speculative decoding against the simulator', () => {
  // Every chunk gap 6 ms with one token; the candidate streams 3 tokens per chunk every 15 ms:
  // per-chunk ITL up 150 %, per-token ITL and TPOT down by a sixth.
  const flags = { outputLen: '33', concurrency: '1,4', promptsPerConcurrency: '12' }

  it('gates ITL per token, so fewer larger chunks do not read as an ITL regression', async () => {
    const baseline = appendRefresh(null, await sweep('one-token', { itlMs: 6 }, flags), { name: 'spec' })
    const cand = await sweep('three-tokens', { itlMs: 15, tokensPerChunk: 3 }, flags)
    expect(cand.fingerprint?.tokens_per_chunk['32x33@c1']).toBe(3)
    expect(baseline.refreshes[0]!.fingerprint?.tokens_per_chunk['32x33@c1']).toBe(1)
    const v = compareToBaseline(baseline, cand)
    const itl = v.rows.find((r) => r.key === 'itl_p95@32x33@c1')!
    expect(itl.label).toBe('p95 ITL per token 32×33 c=1')
    expect(itl.notes[0]).toMatch(/^tokens per chunk changed from 1\.0 to 3\.0/)
    expect(['improvement', 'pass']).toContain(itl.status)
    expect(v.verdict).not.toBe('regression')
    expect(v.reasons.join('\n')).toMatch(/p95 ITL is gated per token there/)
    // Per chunk it would have been a regression: the per-chunk ITL rose far beyond the 5 % tolerance.
    // (Medians: a loaded test host stretches the 6 ms gaps' tail more than their middle.)
    const perChunk = (r: ResultFile) => r.points.find((p) => p.concurrency === 1)!.runs[0]!.itl_ms.p50!
    const before = rejudge(await readResultFile(join(dir, 'one-token.json')))
    expect(perChunk(cand) / perChunk(before)).toBeGreaterThan(1.3)
  }, 120_000)
})
