import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { parseSimFlags } from '../../src/cli/sim.js'
import { UsageError } from '../../src/errors.js'
import { nowNs } from '../../src/sim/clock.js'
import { createHostDrift, DRIFT_FILE_CHECK_MS } from '../../src/sim/drift.js'
import { startSim, type SimHandle } from '../../src/sim/index.js'
import { completionBody, gapsMs, percentile, post } from './sim-client.js'

let dir = ''
let sims: SimHandle[] = []
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'servegate-drift-'))
})
afterEach(async () => {
  await Promise.all(sims.map((s) => s.close()))
  sims = []
  rmSync(dir, { recursive: true, force: true })
})

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms))
const MIN = 60e9
/** One check interval plus a margin for the time the constructor's own check took (ns). */
const STEP = (DRIFT_FILE_CHECK_MS + 10) * 1e6

/** Median client-side gap (ms) of one streamed request of `tokens` tokens. */
async function medianItl(s: SimHandle, tokens: number): Promise<number> {
  const r = await post(`${s.url}/v1/completions`, completionBody(8, tokens))
  expect(r.error).toBeNull()
  return percentile(gapsMs(r.tokenChunkNs), 50)
}

describe('host drift factor (pure)', () => {
  it('is 1 without a file or a rate', () => {
    const d = createHostDrift({ driftFile: null, driftPerMin: 0 }, 0, () => {})
    expect(d.factor(10 * MIN)).toBe(1)
  })

  it('grows linearly with wall minutes since start at driftPerMin', () => {
    const d = createHostDrift({ driftFile: null, driftPerMin: 0.02 }, 1e9, () => {})
    expect(d.factor(1e9)).toBe(1)
    expect(d.factor(1e9 + 0.5 * MIN)).toBeCloseTo(1.01, 12)
    expect(d.factor(1e9 + 3 * MIN)).toBeCloseTo(1.06, 12)
  })

  it('reads the factor from the file, treats a missing file as 1 and multiplies it with the rate', () => {
    const file = join(dir, 'drift')
    const t0 = nowNs()
    const d = createHostDrift({ driftFile: file, driftPerMin: 0.1 }, t0, () => {})
    expect(d.factor(t0)).toBe(1)
    writeFileSync(file, '1.2\n')
    const later = t0 + STEP
    expect(d.factor(later)).toBeCloseTo(1.2 * (1 + (0.1 * STEP) / MIN), 12)
    rmSync(file)
    expect(d.factor(later + STEP)).toBeCloseTo(1 + (0.1 * 2 * STEP) / MIN, 12)
  })

  it('looks at the file at most once per check interval', () => {
    const file = join(dir, 'drift')
    writeFileSync(file, '1.1')
    const t0 = nowNs()
    const d = createHostDrift({ driftFile: file, driftPerMin: 0 }, t0, () => {})
    expect(d.factor(t0)).toBe(1.1)
    writeFileSync(file, '1.3')
    expect(d.factor(t0 + 1e6)).toBe(1.1)
    expect(d.factor(t0 + STEP)).toBe(1.3)
  })

  it('refuses a file that does not hold a number > 0 at start, naming the file', () => {
    const file = join(dir, 'drift')
    writeFileSync(file, 'fast')
    expect(() => createHostDrift({ driftFile: file, driftPerMin: 0 }, nowNs(), () => {})).toThrow(UsageError)
    expect(() => createHostDrift({ driftFile: file, driftPerMin: 0 }, nowNs(), () => {})).toThrow(`--drift-file ${file}: "fast" is not a number > 0`)
  })

  it('keeps the last factor on a bad or empty write while running, warning once per bad text', () => {
    const file = join(dir, 'drift')
    writeFileSync(file, '1.25')
    const warnings: string[] = []
    const t0 = nowNs()
    const d = createHostDrift({ driftFile: file, driftPerMin: 0 }, t0, (l) => warnings.push(l))
    const step = STEP
    writeFileSync(file, '')
    expect(d.factor(t0 + step)).toBe(1.25)
    writeFileSync(file, '-3')
    expect(d.factor(t0 + 2 * step)).toBe(1.25)
    writeFileSync(file, ' -3 ')
    expect(d.factor(t0 + 3 * step)).toBe(1.25)
    expect(warnings).toEqual([`--drift-file ${file}: "-3" is not a number > 0 (the step-time factor); keeping 1.25`])
    writeFileSync(file, '0.9')
    expect(d.factor(t0 + 4 * step)).toBe(0.9)
  })
})

describe('servegate sim drift flags', () => {
  it('passes --drift-file and --drift-per-min to the simulator', () => {
    expect(parseSimFlags({ driftFile: '/tmp/x', driftPerMin: '0.04' })).toMatchObject({ driftFile: '/tmp/x', driftPerMin: 0.04 })
  })

  it('rejects a negative drift rate with the flag named', () => {
    expect(() => parseSimFlags({ driftPerMin: '-1' })).toThrow('--drift-per-min "-1": expected a number ≥ 0')
  })
})

describe('simulated host drift', () => {
  // Deterministic mode schedules chunk k at an absolute time, so the median gap is the
  // configured ITL × factor to within the timer's ~1 ms, even on a busy machine.
  it('writing 1.2 into the drift file makes the measured ITL 20 % longer on every simulator reading it', { retry: 2, timeout: 30_000 }, async () => {
    const file = join(dir, 'host-drift')
    const a = await startSim({ ttftMs: 5, itlMs: 20, driftFile: file })
    const b = await startSim({ ttftMs: 5, itlMs: 20, driftFile: file, seed: 1 })
    sims.push(a, b)
    const before = await Promise.all([medianItl(a, 25), medianItl(b, 25)])
    writeFileSync(file, '1.2')
    await sleep(DRIFT_FILE_CHECK_MS + 50)
    const after = await Promise.all([medianItl(a, 25), medianItl(b, 25)])
    for (const [i, base] of before.entries()) {
      expect(base).toBeGreaterThan(19)
      expect(base).toBeLessThan(21.5)
      expect(after[i]! / base).toBeGreaterThan(1.14)
      expect(after[i]! / base).toBeLessThan(1.26)
    }
  })

  it("stretches the batching engine's steps by the file's factor too", { retry: 2, timeout: 30_000 }, async () => {
    const file = join(dir, 'host-drift')
    writeFileSync(file, '1')
    const s = await startSim({ profile: 'default', seed: 3, jitterCv: 1e-9, driftFile: file })
    sims.push(s)
    await medianItl(s, 10) // warm-up
    let base = Infinity
    for (let i = 0; i < 3; i++) base = Math.min(base, await medianItl(s, 60))
    writeFileSync(file, '1.2')
    await sleep(DRIFT_FILE_CHECK_MS + 50)
    let slow = Infinity
    for (let i = 0; i < 3; i++) slow = Math.min(slow, await medianItl(s, 60))
    // A busy host adds a roughly fixed delay per step to both sides, pulling the ratio towards 1.
    expect(slow / base).toBeGreaterThan(1.13)
    expect(slow / base).toBeLessThan(1.26)
  })

  it('--drift-per-min makes a later request slower than an early one', { retry: 2, timeout: 30_000 }, async () => {
    // 30 per minute = +50 % per second: the second request, 1 s in, runs about 1.5× slower.
    const s = await startSim({ ttftMs: 1, itlMs: 10, driftPerMin: 30 })
    sims.push(s)
    const early = await medianItl(s, 10)
    await sleep(1000 - 100)
    const late = await medianItl(s, 10)
    expect(early).toBeLessThan(11.5)
    expect(late / early).toBeGreaterThan(1.35)
    expect(late / early).toBeLessThan(1.75)
  })
})
