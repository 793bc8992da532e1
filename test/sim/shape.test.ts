import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startSim, type SimHandle, type TokenTrace } from '../../src/sim/index.js'
import { BUILTIN_PROFILES } from '../../src/sim/profiles.js'
import { completionBody, gapsMs, makeAgent, percentile, post } from './sim-client.js'
import { virtualRun } from './virtual-sweep.js'

const TIME_SCALE = 0.5

interface Point {
  c: number
  ttftP50: number
  itlP50: number
  itlP99: number
  tokPerS: number
}

/** Closed loop at concurrency c; figures in model ms from the simulator's ground truth. */
async function measure(sim: SimHandle, c: number, agent: ReturnType<typeof makeAgent>): Promise<Point> {
  sim.clearTraces()
  const user = async (u: number): Promise<void> => {
    for (let k = 0; k < 2; k++) {
      const r = await post(
        `${sim.url}/v1/completions`,
        completionBody(1024, 64, { prompt: Array.from({ length: 1024 }, (_, i) => (u * 131 + k * 17 + i) % 40000) }),
        { agent },
      )
      expect(r.error).toBeNull()
    }
  }
  await Promise.all(Array.from({ length: c }, (_, u) => user(u)))
  const traces: TokenTrace[] = sim.traces()
  expect(traces).toHaveLength(2 * c)
  const start = traces.reduce((m, t) => (t.engineArrivalNs < m ? t.engineArrivalNs : m), traces[0]?.engineArrivalNs ?? 0n)
  const end = traces.reduce((m, t) => ((t.chunkSendNs.at(-1) ?? 0n) > m ? (t.chunkSendNs.at(-1) as bigint) : m), 0n)
  const tokens = traces.reduce((a, t) => a + t.completionTokens, 0)
  const model = (ms: number): number => ms / TIME_SCALE
  return {
    c,
    ttftP50: model(
      percentile(
        traces.map((t) => Number((t.chunkSendNs[0] as bigint) - t.engineArrivalNs) / 1e6),
        50,
      ),
    ),
    itlP50: model(
      percentile(
        traces.flatMap((t) => gapsMs(t.chunkSendNs)),
        50,
      ),
    ),
    itlP99: model(
      percentile(
        traces.flatMap((t) => gapsMs(t.chunkSendNs)),
        99,
      ),
    ),
    tokPerS: tokens / (model(Number(end - start) / 1e6) / 1000),
  }
}

describe('the default profile has the shape of a continuous-batching GPU server', () => {
  let sim: SimHandle
  const agent = makeAgent(256)
  const points: Point[] = []
  beforeAll(async () => {
    sim = await startSim({ profile: 'default', timeScale: TIME_SCALE, seed: 1 })
    for (const c of [1, 8, 32, 128]) points.push(await measure(sim, c, agent))
    if (process.env.SIM_DEBUG) console.table(points)
  }, 60_000)
  afterAll(async () => {
    await sim.close()
    await agent.close()
  })

  it('raises ITL p50 and TTFT p50 with concurrency', () => {
    const [p1, p8, p32, p128] = points as [Point, Point, Point, Point]
    // Neighbouring low points differ by less than timer noise at this time scale; compare wide steps.
    expect(p32.itlP50).toBeGreaterThan(p1.itlP50)
    expect(p128.itlP50).toBeGreaterThan(p32.itlP50)
    expect(p128.itlP50).toBeGreaterThan(2 * p8.itlP50)
    for (let i = 1; i < points.length; i++) expect(points[i]?.ttftP50).toBeGreaterThan(points[i - 1]?.ttftP50 ?? 0)
  })

  it('raises throughput with concurrency, then flattens', () => {
    const [p1, p8, p32, p128] = points as [Point, Point, Point, Point]
    expect(p8.tokPerS / p1.tokPerS).toBeGreaterThan(3)
    expect(p32.tokPerS).toBeGreaterThan(p8.tokPerS)
    // Quadrupling users from 32 to 128 gains far less than going from 1 to 8.
    expect(p128.tokPerS / p32.tokPerS).toBeLessThan(1.6)
  })

  it('puts p99 ITL well above p50 when prefills share steps with decodes', () => {
    // At 8 and 32 users prefills are intermittent, so they stand out; at 128 most steps carry one.
    for (const p of points.slice(1, 3)) expect(p.itlP99).toBeGreaterThan(2 * p.itlP50)
    for (const p of points.slice(1)) expect(p.itlP99).toBeGreaterThan(p.itlP50)
  })

  it('at 4096 in / 512 out, crosses a 50 ms p95 TPOT between C = 64 and C = 256 (virtual time)', () => {
    const profile = BUILTIN_PROFILES.default
    if (!profile) throw new Error('no default profile')
    const at = (c: number): number => virtualRun(profile, c, 4096, 512, 2).tpotP95
    expect(at(1)).toBeCloseTo(10, 0)
    expect(at(64)).toBeLessThan(50)
    expect(at(256)).toBeGreaterThan(50)
  })
})
