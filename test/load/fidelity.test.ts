/**
 * Fidelity: the client's per-token gaps against the server's true send gaps,
 * and its TTFT against the server's own, with the server in its own process
 * (CLOCK_MONOTONIC is shared, so both sides' hrtime compare directly).
 *
 * Bounds: measured on the project's 2-core machine while other jobs shared it
 * (load average 2.5–4.5), then widened for a noisy runner. Measured, C=64 ×
 * 20 ms: |ITL error| p50 0.03–0.13 ms, p99 2.0–4.5 ms. C=16: TTFT overhead p50
 * 0.65–1.13 ms, of which the response path (first token sent → timestamped)
 * p50 0.06–0.52 ms; the rest is the server's HTTP front end taking the 16
 * requests of a round one after another.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { runPoint } from '../../src/load/run-point.js'
import { absPercentile, itlErrorsMs, signedPercentile, ttftOverheadsMs, ttftPathsMs } from './ground-truth.js'
import { plan } from './plan-fixture.js'
import { startServerProcess, type ServerProcess } from './server-process.js'

let server: ServerProcess
beforeAll(async () => {
  server = await startServerProcess({ ttftMs: 30, itlMs: 20 })
})
afterAll(async () => {
  await server.close()
})

describe('client fidelity against the server ground truth', () => {
  // Best of up to five runs of ~1 s: a neighbour's CPU stalls the client (or the server between
  // its timestamp and its write) for several ms, which alone moves p99 (beside a busy loop one run
  // in two measured p99 6.1-7.8 ms, the next 3.6). What the client adds is what the quietest run
  // shows; five in a row over the bound is a real fault.
  it('measures ITL at C=64 × 20 ms within |error| p50 ≤ 0.5 ms and p99 ≤ 6 ms over ≥ 1000 gaps', async () => {
    const C = 64
    let best: { p50: number; p99: number; median: number } | null = null
    for (let attempt = 0; attempt < 5 && (best === null || best.p50 > 0.5 || best.p99 > 6); attempt++) {
      const run = await runPoint({
        warmup: plan(server.url, C, `fw${attempt}`, 8),
        measured: plan(server.url, C * 2, `fm${attempt}`, 24),
        concurrency: C,
        workers: 1,
      })
      expect(run.records.every((r) => r.error === null && r.contentChunks === 24)).toBe(true)
      const errs = itlErrorsMs(run.records)
      expect(errs.length).toBeGreaterThanOrEqual(1000)
      const seen = { p50: absPercentile(errs, 50), p99: absPercentile(errs, 99), median: signedPercentile(errs, 50) }
      console.info(
        `fidelity C=64×20ms: |ITL error| p50 ${seen.p50.toFixed(3)} ms, p99 ${seen.p99.toFixed(3)} ms over ${errs.length} gaps; client ${JSON.stringify(run.client)}`,
      )
      if (best === null || seen.p99 < best.p99) best = seen
    }
    expect(best!.p50).toBeLessThanOrEqual(0.5)
    expect(best!.p99).toBeLessThanOrEqual(6)
    // No drift: the median signed error is near zero (a clock or unit slip would not be).
    expect(Math.abs(best!.median)).toBeLessThan(0.3)
  })

  it('adds at most 2.5 ms (p50) to TTFT at C=16, of which the client read path at most 1 ms', async () => {
    const C = 16
    // Best of up to three runs: a neighbour on a shared 2-core host adds its own stalls to the
    // delay measured; the client's overhead is what remains in the quietest run.
    let best: { p50: number; readP50: number } | null = null
    for (let attempt = 0; attempt < 3 && (best === null || best.p50 > 2.5 || best.readP50 > 1); attempt++) {
      const epochNs = process.hrtime.bigint()
      const run = await runPoint({
        warmup: plan(server.url, C, `tw${attempt}`, 4),
        measured: plan(server.url, C * 4, `tm${attempt}`, 4),
        concurrency: C,
        workers: 1,
        epochNs,
      })
      const arrivals = new Map((await server.requests()).map((r) => [r.id, BigInt(r.arrivalNs)]))
      const over = ttftOverheadsMs(run.records, arrivals)
      expect(over).toHaveLength(C * 4)
      const p50 = signedPercentile(over, 50)
      const { requestPath, responsePath } = ttftPathsMs(run.records, arrivals, epochNs)
      const readP50 = signedPercentile(responsePath, 50)
      console.info(
        `fidelity C=16 (attempt ${attempt + 1}): TTFT overhead p50 ${p50.toFixed(3)} ms, p99 ${signedPercentile(over, 99).toFixed(3)} ms; ` +
          `request path p50 ${signedPercentile(requestPath, 50).toFixed(3)} ms, response path p50 ${readP50.toFixed(3)} ms`,
      )
      // Each path is a real delay: never negative (no token is seen before it is sent).
      expect(signedPercentile(requestPath, 0)).toBeGreaterThan(0)
      expect(signedPercentile(responsePath, 0)).toBeGreaterThan(0)
      if (best === null || p50 < best.p50) best = { p50, readP50 }
    }
    expect(best!.readP50).toBeLessThanOrEqual(1)
    // The total includes the server's front end taking 16 simultaneous requests one by one.
    expect(best!.p50).toBeLessThanOrEqual(2.5)
  })
})
