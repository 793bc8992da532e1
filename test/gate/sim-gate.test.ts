import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { resolveConfig } from '../../src/config/resolve.js'
import { fingerprintOf } from '../../src/gate/fingerprint.js'
import { compareToBaseline } from '../../src/gate/compare.js'
import type { Baseline } from '../../src/gate/types.js'
import { startSim, type SimOptions } from '../../src/sim/index.js'
import { appendRefresh } from '../../src/gate/refresh.js'
import { readResultFile, writeResultFile } from '../../src/store/result-file.js'
import { runSweep } from '../../src/sweep/run-sweep.js'
import type { ResultFile } from '../../src/types.js'
import { expectHonest, measureAgain, spoiledRuns } from '../fixtures/honest-verdict.js'

// Real sweeps against the deterministic simulator on 127.0.0.1: the failed-request
// budget and speculative-decoding chunks, end to end through the summarizer. This host's
// CPUs are shared: a sweep whose client saturated is measured again (at most twice), and a
// gated row it still leaves without two valid runs makes the verdict unmeasured, which the
// assertions demand then. Of the attempts, the one with the fewest runs the host spoiled is kept;
// one whose every run the host spoiled (nothing measured) is measured again up to three times more.
let dir: string
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'servegate-sim-gate-'))
})
afterAll(() => {
  if (dir) rmSync(dir, { recursive: true, force: true })
})

async function sweep(name: string, sim: Partial<SimOptions>, flags: Record<string, string>): Promise<ResultFile> {
  const out = join(dir, `${name}.json`)
  let raw: ResultFile | null = null
  let last: ResultFile | null = null
  for (let attempt = 0; measureAgain(attempt, raw); attempt++) {
    const handle = await startSim({ ttftMs: 20, seed: 11, ...sim })
    try {
      const cfg = resolveConfig({
        file: null,
        filePath: null,
        flags: { baseUrl: handle.url, inputLen: '32', repeats: '2', hostRetries: '2', out, ...flags },
        env: {},
      })
      await runSweep(cfg, { log: () => {} })
    } finally {
      await handle.close()
    }
    last = await readResultFile(out)
    if (raw === null || spoiledRuns(last) < spoiledRuns(raw)) raw = last
  }
  if (raw !== last) await writeResultFile(out, raw!)
  // The sweep stores the fingerprint in the result it writes.
  expect(raw!.fingerprint).toEqual(fingerprintOf(raw!))
  return raw!
}

describe('the failed-request budget against the simulator', () => {
  // C = 16 × 12 prompts = 192 requests a run: 0.5 % of failures is about one request. What is
  // judged here is the failure count (seeded per request) against a one-refresh baseline, whose
  // bar no timing noise reaches: 10 ms to the first token and 5 ms between tokens keep each run
  // near half a second.
  const flags = { outputLen: '8', concurrency: '16', promptsPerConcurrency: '12' }
  const fast = { ttftMs: 10, itlMs: 5 }
  let baseline: Baseline

  beforeAll(async () => {
    baseline = appendRefresh(null, await sweep('base', fast, flags), { name: 'budget' })
  }, 120_000)

  it('keeps runs with failures within the budget and breaks the candidate beyond it', async () => {
    const few = await sweep('few', { ...fast, faults: [{ kind: 'http500', rate: 0.005 }] }, flags)
    const many = await sweep('many', { ...fast, faults: [{ kind: 'http500', rate: 0.05 }] }, flags)
    const runsOf = (r: ResultFile) => r.points.flatMap((p) => p.runs)

    // A budget of as many failures as the run with the most had: every run is within it.
    const most = Math.max(...runsOf(few).map((r) => r.failed))
    expect(most).toBeGreaterThan(0)
    const kept = compareToBaseline(baseline, few, { maxFailedRequests: most })
    // The same engine: never broken; unmeasured only where the host spoiled a gated row.
    const keptVerdict = expectHonest(kept, ['pass', 'improvement', 'undecided'], { baseline })
    const itl = kept.rows.find((r) => r.key === 'itl_p95@32x8@c16')!
    if (keptVerdict !== 'unmeasured') expect(itl.n_candidate).toBe(2)
    expect(itl.notes.some((n) => /requests? failed .* within the at most \d+ allowed/.test(n))).toBe(true)

    // 5 % is beyond both the default 1 % share and that count.
    expect(runsOf(many).every((r) => r.failed > most)).toBe(true)
    const v = compareToBaseline(baseline, many, { maxFailedRequests: most })
    // Broken outranks unmeasured: a busy host cannot hide it.
    expectHonest(v, 'broken', { baseline })
    expectHonest(compareToBaseline(baseline, many), 'broken', { baseline })
    expect(v.reasons.join('\n')).toMatch(/p95 ITL 32×8 c=16: broken — .*requests failed \(\d+\.\d %\), beyond the at most \d+ allowed/)
  }, 120_000)
})

describe('speculative decoding against the simulator', () => {
  // Every chunk gap 6 ms with one token; the candidate streams 3 tokens per chunk every 15 ms:
  // per-chunk ITL up 150 %, per-token ITL and TPOT down by a sixth. Both points stay: beside a
  // busy neighbour one of them alone was left undecided and blind, and the regression needs only
  // one of them to show it. Three runs a side: with two the spread has one degree of freedom, and
  // in a quiet CI run both points were blind (MDC 155 % and 527 %) to the 150 % rise.
  const flags = { outputLen: '33', concurrency: '1,4', promptsPerConcurrency: '12', repeats: '3' }

  it('gates ITL both between chunks and per token, so a change of chunking is never a silent switch', async () => {
    const baseline = appendRefresh(null, await sweep('one-token', { itlMs: 6 }, flags), { name: 'spec' })
    const cand = await sweep('three-tokens', { itlMs: 15, tokensPerChunk: 3 }, flags)
    expect(cand.fingerprint?.tokens_per_chunk['32x33@c1']).toBe(3)
    expect(baseline.refreshes[0]!.fingerprint?.tokens_per_chunk['32x33@c1']).toBe(1)
    const v = compareToBaseline(baseline, cand)
    const chunks = v.rows.find((r) => r.key === 'itl_p95@32x33@c1')!
    const perToken = v.rows.find((r) => r.key === 'itl_tok_p95@32x33@c1')!
    expect(chunks).toMatchObject({ label: 'p95 ITL 32×33 c=1', gated: true })
    expect(perToken).toMatchObject({ label: 'p95 ITL per token 32×33 c=1', gated: true })
    expect(chunks.notes[0]).toMatch(/^tokens per chunk changed from 1\.0 to 3\.0: the gaps between chunks are gated as measured/)
    expect(perToken.notes[0]).toMatch(/^tokens per chunk changed from 1\.0 to 3\.0 \(speculative decoding\?\)/)
    expect(v.reasons.join('\n')).toMatch(/p95 ITL is gated both between chunks and per token there/)
    // The gaps between chunks rose far beyond the 5 % tolerance: that is the regression, where it was measured.
    const verdict = expectHonest(v, 'regression', { baseline, shownBy: (label) => /^p95 ITL 32×33 c=/.test(label) })
    if (verdict === 'regression') {
      expect(v.regressions.some((l) => /^p95 ITL 32×33 c=/.test(l))).toBe(true)
      expect(v.regressions.some((l) => / per token /.test(l))).toBe(false)
    }
    // Per token the candidate is faster (5 ms against 6 ms): never a regression there. One refresh
    // on a loaded host may leave the row without power (undecided); it must then say why: blind, or a
    // change short of its bar.
    expect(perToken.status).not.toBe('regression')
    if (perToken.status === 'undecided') {
      const short = perToken.delta_pct !== null && perToken.bar_pct !== null && perToken.delta_pct < perToken.bar_pct
      expect(perToken.blind === true || short, `${perToken.label}: undecided at ${perToken.delta_pct} % with bar ${perToken.bar_pct} %`).toBe(true)
    } else if (!['invalid', 'unmeasured'].includes(perToken.status)) expect(['improvement', 'pass']).toContain(perToken.status)
    // (Medians: a loaded test host stretches the 6 ms gaps' tail more than their middle.)
    const perChunk = (r: ResultFile) => r.points.find((p) => p.concurrency === 1)!.runs[0]!.itl_ms.p50!
    const before = await readResultFile(join(dir, 'one-token.json'))
    expect(perChunk(cand) / perChunk(before)).toBeGreaterThan(1.3)
  }, 180_000)
})
