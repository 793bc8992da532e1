import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startSim, type SimHandle } from '../../src/sim/index.js'
import type { FaultKind } from '../../src/sim/options.js'
import { expectNoValidRun, readResult, startCli } from './cli-child.js'

/** Peak resident memory of a running process, MiB, sampled from /proc until it exits (null where /proc is absent). */
function trackRss(pid: number): { peak: () => number | null; stop: () => void } {
  let peak: number | null = null
  const t = setInterval(() => {
    try {
      const kb = Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1])
      if (Number.isFinite(kb)) peak = Math.max(peak ?? 0, kb / 1024)
    } catch {
      // exited
    }
  }, 50)
  return { peak: () => peak, stop: () => clearInterval(t) }
}

// Issue 11's acceptance: against each misbehaving simulator mode, `servegate run` ends within
// the deadline plus a few seconds, counts the run's errors by kind, and its memory stays bounded.
// Half the requests misbehave (seeded, so the preflight probes are served cleanly); the request
// deadline is 2 s. An endless stream that the deadline did not cut would hold its slot forever.
// The 16 requests go out as one wave (C=16), so a case waits out one deadline, not four.
const DEADLINE_S = 2
const CONCURRENCY = 16
const REQUESTS = 16
// The servegate process (node, tsx, the load thread) peaks near 200 MiB here; an 8 MiB line
// buffered per stream, or arrivals without bound, would go far past this.
const RSS_BOUND_MIB = 400
const CASES: Array<{ kind: FaultKind; errorKind: string }> = [
  { kind: 'keepalive', errorKind: 'deadline' },
  { kind: 'overrun', errorKind: 'overrun' },
  { kind: 'trickle', errorKind: 'deadline' },
  { kind: 'huge-line', errorKind: 'malformed' },
]

describe('servegate run against a misbehaving server', () => {
  let dir: string
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'servegate-hostile-'))
  })
  afterAll(() => {
    if (dir) rmSync(dir, { recursive: true, force: true })
  })

  for (const c of CASES) {
    it(`${c.kind}: ends by the deadline, counts ${c.errorKind}, stays under ${RSS_BOUND_MIB} MiB`, async () => {
      let sim: SimHandle | null = null
      try {
        sim = await startSim({ ttftMs: 5, itlMs: 5, seed: 3, faults: [{ kind: c.kind, rate: 0.5 }], faultIntervalMs: 50 })
        const out = join(dir, `${c.kind}.json`)
        const t0 = Date.now()
        const run = startCli([
          'run',
          '--base-url',
          sim.url,
          '--input-len',
          '16',
          '--output-len',
          '16',
          '--concurrency',
          String(CONCURRENCY),
          '--repeats',
          '1',
          '--prompts-per-concurrency',
          String(REQUESTS / CONCURRENCY),
          '--warmup',
          '0',
          '--request-timeout',
          String(DEADLINE_S),
          '--out',
          out,
        ])
        const rss = trackRss(run.child.pid!)
        const r = await run.done
        rss.stop()
        const wallS = (Date.now() - t0) / 1000
        // Half the requests failed: the run is invalid, so the sweep has no valid run and exits 1.
        expectNoValidRun(r, out)
        // The bound set for 16 requests at C=4 (at most 4 waves of a 2 s deadline, plus start-up);
        // at C=16 the run waits out one wave of it.
        expect(wallS).toBeLessThan(4 * DEADLINE_S + 15)
        const res = readResult(out)!
        const runRes = res.points[0]!.runs[0]!
        expect(runRes.failed).toBeGreaterThan(0)
        expect(runRes.completed + runRes.failed).toBe(REQUESTS)
        expect(runRes.errors).toEqual({ [c.errorKind]: runRes.failed })
        expect(runRes.validity.issues.map((i) => i.code)).toContain('requests_failed')
        expect(r.stdout + r.stderr).not.toMatch(/crashed/)
        const peak = rss.peak()
        console.log(`${c.kind}: ${wallS.toFixed(1)} s, peak RSS ${peak?.toFixed(0) ?? 'unknown'} MiB, errors ${JSON.stringify(runRes.errors)}`)
        if (peak !== null) expect(peak).toBeLessThan(RSS_BOUND_MIB)
      } finally {
        await sim?.close()
      }
    }, 90_000)
  }
})
