import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { dealByShare, splitEven } from '../../src/load/deal.js'
import { resolveWorkers, runPoint, workersWarning } from '../../src/load/run-point.js'
import { LOAD_WORKER_BUNDLE_NAME, LOAD_WORKER_ENV, workerEntry } from '../../src/load/worker-entry.js'
import { plan } from './plan-fixture.js'
import { startStreamServer, type StreamServerHandle } from './stream-server.mjs'

let server: StreamServerHandle
beforeAll(async () => {
  server = await startStreamServer({ ttftMs: 10, itlMs: 4 })
})
afterAll(async () => {
  await server.close()
})

describe('runPoint', () => {
  // The lanes run workers bundled at the start of the test run (LOAD_WORKER_ENV); 'tsx' runs the sources' own path once.
  it.each([0, 2, 'tsx'] as const)('with workers=%s runs warmup first, then returns every measured record in plan order', async (mode) => {
    const before = server.requests().length
    const warmup = plan(server.url, 5, `w${mode}`, 3)
    const measured = plan(server.url, 20, `m${mode}`, 6)
    const workers = mode === 'tsx' ? 1 : mode
    const built = process.env[LOAD_WORKER_ENV]
    if (mode === 'tsx') delete process.env[LOAD_WORKER_ENV]
    let run: Awaited<ReturnType<typeof runPoint>>
    try {
      run = await runPoint({ warmup, measured, concurrency: 5, workers })
    } finally {
      if (built !== undefined) process.env[LOAD_WORKER_ENV] = built
    }
    expect(run.concurrency).toBe(5)
    expect(run.warmupRequests).toBe(5)
    expect(run.records.map((r) => r.id)).toEqual(measured.map((r) => r.id))
    expect(run.records.every((r) => r.error === null && r.contentChunks === 6)).toBe(true)
    expect(run.client.workers).toBe(workers)
    expect(run.startMs).toBe(Math.min(...run.records.map((r) => r.startMs)))
    expect(run.endMs).toBeGreaterThan(run.startMs)
    expect(run.client.eventsPerSecond).toBeGreaterThan(0)
    expect(run.client.meanInFlight).toBeGreaterThan(4)
    expect(run.client.meanInFlight).toBeLessThanOrEqual(5)
    expect(Date.parse(run.finishedAt)).toBeGreaterThanOrEqual(Date.parse(run.startedAt))
    // The server saw no measured request before every warmup request had ended.
    const log = server.requests().slice(before)
    const lastWarmEnd = Math.max(...log.filter((r) => r.id.startsWith('w')).map((r) => r.closeMs))
    const firstMeasured = Math.min(...log.filter((r) => r.id.startsWith('m')).map((r) => r.openMs))
    expect(firstMeasured).toBeGreaterThanOrEqual(lastWarmEnd)
  })

  it.each([0, 2])('with workers=%i calls beforeMeasure between warmup and measurement, and measures on the warmed connections', async (workers) => {
    const before = server.requests().length
    const acceptedBefore = server.stats().accepted
    let seenAtHook: Array<{ id: string; closeMs: number }> = []
    const warmup = plan(server.url, 6, `hw${workers}`, 3)
    const measured = plan(server.url, 18, `hm${workers}`, 4)
    await runPoint({
      warmup,
      measured,
      concurrency: 6,
      workers,
      beforeMeasure: async () => {
        await new Promise((r) => setTimeout(r, 20))
        seenAtHook = server.requests().slice(before)
      },
    })
    // Every warmup request had ended and no measured one had been sent when the hook ran.
    expect(seenAtHook.map((r) => r.id).sort()).toEqual(warmup.map((r) => r.id).sort())
    expect(seenAtHook.every((r) => Number.isFinite(r.closeMs))).toBe(true)
    // The measured requests reused the warmup's keep-alive connections: one per slot, not two.
    expect(server.stats().accepted - acceptedBefore).toBe(6)
  })

  it('splits C across workers so the server still sees C streams at once', async () => {
    server.resetStats()
    await runPoint({ warmup: [], measured: plan(server.url, 14, 'split', 8), concurrency: 7, workers: 2 })
    expect(server.stats().maxOpen).toBe(7)
  })
})

describe('workersWarning', () => {
  it.each([
    ['auto', 2, false],
    [1, 2, false],
    [2, 2, true],
    [4, 8, false],
    [5, 8, true],
  ] as const)('--workers %s on %i cores warns: %s', (workers, cores, warns) => {
    const w = workersWarning(workers, cores)
    expect(w !== null).toBe(warns)
    if (w !== null) expect(w).toContain(`--workers auto would use ${cores <= 2 ? 1 : cores / 2}`)
  })
})

describe('resolveWorkers', () => {
  it.each([
    [0, 64, 16, 0],
    [3, 64, 2, 3],
    [8, 4, 16, 4], // never more threads than streams
    ['auto', 256, 1, 1],
    ['auto', 256, 2, 1],
    ['auto', 16, 8, 1],
    ['auto', 128, 8, 2],
    ['auto', 256, 8, 4],
    ['auto', 1024, 64, 8],
  ] as const)('workers=%s at C=%i on %i cores → %i', (workers, c, cores, expected) => {
    expect(resolveWorkers(workers, c, cores)).toBe(expected)
  })
})

describe('splitEven and dealByShare', () => {
  it('splits 7 into 3 parts as 3, 2, 2', () => {
    expect(splitEven(7, 3)).toEqual([3, 2, 2])
  })
  it('deals items in proportion to each share, interleaved', () => {
    expect(dealByShare([0, 1, 2, 3, 4, 5], [2, 1])).toEqual([
      [0, 2, 3, 5],
      [1, 4],
    ])
    expect(dealByShare(['a', 'b', 'c'], [1, 1, 1])).toEqual([[0], [1], [2]])
  })
})

describe('workerEntry', () => {
  it('loads worker.ts through tsx when running from sources', () => {
    const src = new URL('../../src/load/run-point.ts', import.meta.url).href
    const e = workerEntry(src, {})
    expect(e.url.href).toBe(new URL('../../src/load/worker.ts', import.meta.url).href)
    expect(e.tsxApi).toMatch(/^file:.*tsx.*\.mjs$/)
  })
  it(`loads the worker ${LOAD_WORKER_ENV} names when running from sources, and ignores it when bundled`, () => {
    const src = new URL('../../src/load/run-point.ts', import.meta.url).href
    const built = join(tmpdir(), 'build', 'load-worker.js')
    expect(workerEntry(src, { [LOAD_WORKER_ENV]: built })).toEqual({ url: pathToFileURL(built), tsxApi: null })
    const dir = mkdtempSync(join(tmpdir(), 'sg-dist-'))
    const bundle = pathToFileURL(join(dir, 'cli.js')).href
    expect(workerEntry(bundle, { [LOAD_WORKER_ENV]: built })).toEqual({ url: new URL('./worker.js', bundle), tsxApi: null })
  })
  it('uses load-worker.js beside the bundle when it exists, else worker.js', () => {
    const dir = mkdtempSync(join(tmpdir(), 'sg-dist-'))
    const bundle = pathToFileURL(join(dir, 'cli.js')).href
    expect(workerEntry(bundle)).toEqual({ url: new URL('./worker.js', bundle), tsxApi: null })
    writeFileSync(join(dir, LOAD_WORKER_BUNDLE_NAME), '')
    expect(workerEntry(bundle)).toEqual({ url: new URL(`./${LOAD_WORKER_BUNDLE_NAME}`, bundle), tsxApi: null })
  })
})
