import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { LoadAborted, runPoint } from '../../src/load/run-point.js'
import { acquireLoadWorker, idleLoadWorkers, releaseLoadWorker } from '../../src/load/worker-pool.js'
import { plan } from './plan-fixture.js'
import { startStreamServer, type StreamServerHandle } from './stream-server.mjs'

// Load threads serve a process's runs one after another (src/load/worker-pool.ts): a clean run gives
// its thread back, a failed or cancelled one terminates it, and each run measures on connections of its own.
let server: StreamServerHandle
beforeAll(async () => {
  server = await startStreamServer({ ttftMs: 10, itlMs: 4 })
})
afterAll(async () => {
  await server.close()
})

describe('load threads kept between runs', () => {
  it('hands the thread a run gave back to the next run', async () => {
    const w = acquireLoadWorker()
    const id = w.threadId
    releaseLoadWorker(w)
    const again = acquireLoadWorker()
    try {
      expect(again.threadId).toBe(id)
    } finally {
      releaseLoadWorker(again)
    }
  })

  it('runs run after run on one kept thread, each complete, and keeps it idle between them', async () => {
    for (const tag of ['a', 'b', 'c']) {
      const accepted = server.stats().accepted
      const measured = plan(server.url, 8, `pool-${tag}`, 5)
      const run = await runPoint({ warmup: plan(server.url, 2, `pool-w${tag}`, 2), measured, concurrency: 2, workers: 1 })
      // Connections of its own: the warmup opened one per slot and the measured requests used them, none of an earlier run's.
      expect(server.stats().accepted - accepted).toBe(2)
      expect(run.records.map((r) => r.id)).toEqual(measured.map((r) => r.id))
      expect(run.records.every((r) => r.error === null && r.contentChunks === 5)).toBe(true)
      expect(run.warmupRequests).toBe(2)
      expect(run.client.workers).toBe(1)
      expect(idleLoadWorkers()).toBeGreaterThanOrEqual(1)
    }
    // One thread served the three runs: no run left another behind.
    const idle = idleLoadWorkers()
    await runPoint({ warmup: [], measured: plan(server.url, 4, 'pool-d', 3), concurrency: 2, workers: 1 })
    expect(idleLoadWorkers()).toBe(idle)
  })

  it('terminates the threads of a cancelled run instead of keeping them', async () => {
    // The run takes one thread (a kept one if there is one): cut, it is terminated, so the pool ends one
    // short (or empty); kept, the pool would end as it began (or with the new thread).
    const before = idleLoadWorkers()
    const abort = new AbortController()
    const err = await runPoint({
      warmup: [],
      measured: plan(server.url, 40, 'pool-cut', 400),
      concurrency: 4,
      workers: 1,
      signal: abort.signal,
      beforeMeasure: async () => void setTimeout(() => abort.abort(), 50),
    }).catch((e: unknown) => e)
    expect(err).toBeInstanceOf(LoadAborted)
    expect(idleLoadWorkers()).toBe(Math.max(0, before - 1))
  })
})
