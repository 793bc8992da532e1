import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { startSim, type SimHandle } from '../../src/sim/index.js'
import { resolveConfig } from '../../src/config/resolve.js'
import { runSweep } from '../../src/sweep/run-sweep.js'
import type { ResultFile } from '../../src/types.js'
import { hostSpoiled } from '../fixtures/honest-verdict.js'

// Issue 2's acceptance, as a user would check it: a deterministic server whose
// every token time is known, and a sweep whose numbers must match it. The workload is the
// smallest that every point still judges valid: 10 requests a slot (too_few_requests asks for
// 10 completed at C=1) of 16 tokens (150 gaps at C=1 against the 100 asked), ~0.4 s a request,
// so the sweep takes ~15 s instead of a minute; the accuracy bounds below are in ms and do not
// depend on how many requests measured them.
const PROMPTS_PER_CONCURRENCY = 10
const OUTPUT_LEN = 16
describe('a sweep against the deterministic simulator (TTFT 100 ms, ITL 20 ms)', () => {
  let sim: SimHandle
  let dir: string
  let result: ResultFile

  beforeAll(async () => {
    sim = await startSim({ ttftMs: 100, itlMs: 20 })
    dir = mkdtempSync(join(tmpdir(), 'servegate-det-'))
    const cfg = resolveConfig({
      file: null,
      filePath: null,
      flags: {
        baseUrl: sim.url,
        inputLen: '128',
        outputLen: String(OUTPUT_LEN),
        concurrency: '1,16,64',
        repeats: '1',
        promptsPerConcurrency: String(PROMPTS_PER_CONCURRENCY),
        out: join(dir, 'result.json'),
      },
      env: {},
    })
    // A sweep whose client a busy host kept off the CPU (client_saturated) is measured again, at most twice.
    for (let attempt = 0; attempt < 3 && (attempt === 0 || hostSpoiled(result)); attempt++) result = (await runSweep(cfg, { log: () => {} })).result
  }, 180_000)

  afterAll(async () => {
    await sim?.close()
    if (dir) rmSync(dir, { recursive: true, force: true })
  })

  it('measures one point per concurrency', () => {
    expect(result.points.map((p) => p.concurrency)).toEqual([1, 16, 64])
  })

  for (const c of [1, 16, 64]) {
    describe(`at C=${c}`, () => {
      const run = () => result.points.find((p) => p.concurrency === c)!.runs[0]!

      it(`completes ${PROMPTS_PER_CONCURRENCY} × C requests with none failed, after a discarded warmup`, () => {
        expect(run().num_prompts).toBe(PROMPTS_PER_CONCURRENCY * c)
        expect(run().completed).toBe(PROMPTS_PER_CONCURRENCY * c)
        expect(run().failed).toBe(0)
        expect(run().warmup_requests).toBeGreaterThan(0)
      })

      // The simulator's timers run in this test's own thread, so a busy neighbour makes the
      // server late too (103.7 ms at C=64 beside one busy loop). The client's own error is
      // pinned against the server's recorded send times in test/load/fidelity.test.ts; here the
      // sweep's wiring is checked with room for a late server.
      it('reports TTFT p50 within 5 ms above the server’s 100 ms', () => {
        expect(run().ttft_ms.p50).toBeGreaterThanOrEqual(100)
        expect(run().ttft_ms.p50).toBeLessThanOrEqual(105)
      })

      it('reports ITL p50 and TPOT p50 within 0.5 ms of 20 ms', () => {
        for (const v of [run().itl_ms.p50, run().tpot_ms.p50]) {
          expect(v).toBeGreaterThanOrEqual(19.5)
          expect(v).toBeLessThanOrEqual(20.5)
        }
      })

      it(`counts ${OUTPUT_LEN} output tokens per request by the server’s usage and by content chunks`, () => {
        expect(run().tokens.server_usage).toBe(OUTPUT_LEN * PROMPTS_PER_CONCURRENCY * c)
        expect(run().tokens.client_chunks).toBe(OUTPUT_LEN * PROMPTS_PER_CONCURRENCY * c)
      })

      it('is valid', () => {
        // A busy neighbour on this host can keep the load thread off the CPU: that is flagged, blamed
        // on the shared CPU (client_saturated saying so), and is the only issue a run may have here.
        const hostOnly = (i: { code: string; detail: string }) => i.code === 'client_saturated' && /the CPU was shared/.test(i.detail)
        expect(run().validity.issues.filter((i) => !hostOnly(i))).toEqual([])
      })
    })
  }
})
