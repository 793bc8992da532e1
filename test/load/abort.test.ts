import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { resolveConfig } from '../../src/config/resolve.js'
import { startSim, type SimHandle } from '../../src/sim/index.js'
import { LoadAborted, runPoint } from '../../src/load/run-point.js'
import { SweepCancelled, runSweep } from '../../src/sweep/run-sweep.js'
import { plan } from './plan-fixture.js'
import type { ResultFile } from '../../src/types.js'

// A cancelled job must stop the load at once (not after the point), keep every
// finished run, and drop the run it cut instead of summarising it.
describe('runSweep with an abort signal', () => {
  let sim: SimHandle
  let dir: string
  beforeAll(async () => {
    // Deterministic: every request takes 5 ms + 60 × 20 ms ≈ 1.2 s whatever the load.
    sim = await startSim({ ttftMs: 5, itlMs: 20 })
    dir = mkdtempSync(join(tmpdir(), 'servegate-abort-'))
  })
  afterAll(async () => {
    await sim?.close()
    if (dir) rmSync(dir, { recursive: true, force: true })
  })

  const cfgFor = (out: string, workers: string) =>
    resolveConfig({
      file: null,
      filePath: null,
      flags: {
        baseUrl: sim.url,
        inputLen: '16',
        outputLen: '60',
        concurrency: '2,4',
        repeats: '1',
        promptsPerConcurrency: '3',
        warmup: '0',
        workers,
        out: join(dir, out),
      },
      env: {},
    })

  it.each([0, 1])('runPoint with %i worker thread(s) stops sending and cuts the streams in flight', async (workers) => {
    sim.clearTraces()
    const abort = new AbortController()
    let abortedAt = 0n
    // A worker thread takes a while to start under a loaded CPU: cancel once the server has seen both streams.
    const poll = setInterval(() => {
      if (sim.traces().length >= 2 && abortedAt === 0n) {
        abortedAt = process.hrtime.bigint()
        abort.abort()
      }
    }, 20)
    const err = await runPoint({
      concurrency: 2,
      workers,
      warmup: [],
      measured: plan(sim.url, 10, `w${workers}`, 60, 'servegate/sim-model'),
      priority: null,
      signal: abort.signal,
    }).then(
      () => null,
      (e: unknown) => e,
    )
    clearInterval(poll)
    expect(err).toBeInstanceOf(LoadAborted)
    // Ten requests at C = 2 take ~6 s: the cancel must not wait for the first wave (1.2 s) to end.
    expect(Number(process.hrtime.bigint() - abortedAt) / 1e6).toBeLessThan(1000)
    await new Promise((r) => setTimeout(r, 100))
    expect(sim.traces().length).toBe(2)
    expect(sim.traces().every((t) => !t.complete && t.completionTokens < 60)).toBe(true)
  })

  it.each([
    ['one worker thread', '1'],
    ['auto workers', 'auto'],
  ])('cuts the requests in flight with %s, keeps the finished run and drops the cut one', async (_where, workers) => {
    const out = `abort-${workers}.json`
    const abort = new AbortController()
    let abortedAt = 0n
    const sweep = runSweep(cfgFor(out, workers), {
      log: () => {},
      signal: abort.signal,
      onPointStart: (_p, i) => {
        // The second point (C = 4, 12 requests ≈ 3 waves of 1.2 s): cancel once its first streams run.
        if (i !== 1) return
        sim.clearTraces()
        const poll = setInterval(() => {
          if (sim.traces().length < 4) return
          clearInterval(poll)
          abortedAt = process.hrtime.bigint()
          abort.abort()
        }, 20)
      },
    })
    const err = await sweep.then(
      () => null,
      (e: unknown) => e,
    )
    const stoppedMs = Number(process.hrtime.bigint() - abortedAt) / 1e6
    expect(err).toBeInstanceOf(SweepCancelled)
    expect(err).toMatchObject({ done: 1, planned: 2 })
    // The point had ~3 s left; a cancel honoured only between points would wait for it.
    expect(stoppedMs).toBeLessThan(1000)
    const saved = JSON.parse(readFileSync(join(dir, out), 'utf8')) as ResultFile
    expect(saved.points.map((p) => [p.concurrency, p.runs.length])).toEqual([[2, 1]])
    // The server saw the streams of the cut point end early: no request ran to completion after the cancel.
    await new Promise((r) => setTimeout(r, 100))
    const cut = sim.traces().filter((t) => !t.complete)
    expect(cut.length).toBeGreaterThanOrEqual(1)
    expect(cut.every((t) => t.completionTokens < 60)).toBe(true)
  })

  it('refuses to start a point once the signal has fired, naming what is saved', async () => {
    const abort = new AbortController()
    abort.abort()
    const err = await runSweep(cfgFor('pre.json', 'auto'), { log: () => {}, signal: abort.signal }).then(
      () => null,
      (e: unknown) => e,
    )
    expect(err).toBeInstanceOf(SweepCancelled)
    expect((err as Error).message).toBe(
      `Sweep interrupted after 0 of 2 runs; finished runs are saved in ${join(dir, 'pre.json')}, the run in progress was dropped.`,
    )
  })
})
