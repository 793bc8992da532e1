import { describe, expect, it } from 'vitest'
import { buildFrontier, markFront, type FrontierPoint } from '../../src/report/frontier.js'
import { renderFrontierMermaid } from '../../src/report/frontier-mermaid.js'
import { appendRefresh } from '../../src/gate/refresh.js'
import { pipelineResult } from '../gate/fixtures.js'

// Built the way a sweep builds results: request records → summarizeRun → assessValidity.
// Per-chunk gap grows with load: 10 ms at C=1 … 70 ms at C=16 (the 50 ms target is crossed).
const gap: Record<number, number> = { 1: 10, 2: 12, 4: 20, 8: 40, 16: 70 }
const candidate = (factor = 1, gpus: number | 'unknown' = 2) =>
  pipelineResult({
    concurrency: [1, 2, 4, 8, 16],
    repeats: 3,
    itl: (c, r) => gap[c]! * factor * (1 + r * 0.01),
    env: (e) => {
      e.gpu.count = gpus
    },
  })

describe('buildFrontier', () => {
  it('gives each measured point its interactivity at p95 TPOT and its output tok/s per GPU (medians of valid runs)', () => {
    const r = candidate()
    const f = buildFrontier(r, null)
    expect(f.perGpu).toBe(true)
    expect(f.yLabel).toBe('output tok/s per GPU')
    const [shape] = f.shapes
    const cand = shape!.series[0]!
    expect(cand.role).toBe('candidate')
    expect(cand.points.map((p) => p.concurrency)).toEqual([1, 2, 4, 8, 16])
    for (const p of cand.points) {
      const runs = r.points.find((q) => q.concurrency === p.concurrency)!.runs
      const tpot = runs.map((x) => x.tpot_ms.p95!).sort((a, b) => a - b)[1]!
      const tput = runs.map((x) => x.output_throughput).sort((a, b) => a - b)[1]!
      expect(p.interactivity).toBeCloseTo(1000 / tpot, 9)
      expect(p.throughput).toBeCloseTo(tput / 2, 9)
    }
    expect(f.targetInteractivity).toBe(20)
    expect(f.targetLabel).toBe('p95 TPOT ≤ 50 ms ⇔ ≥ 20 tok/s/user')
    expect(cand.points.map((p) => p.meetsTarget)).toEqual([true, true, true, true, false])
  })

  it('plots the whole server and says so when the GPU count is unknown', () => {
    const f = buildFrontier(candidate(1, 'unknown'), null)
    expect(f.perGpu).toBe(false)
    expect(f.yLabel).toMatch(/whole server \(GPU count unknown: not per GPU\)/)
  })

  it('draws the baseline from its newest refresh, at its own GPU count', () => {
    const baseline = appendRefresh(null, candidate(0.8, 4), { name: 'b' })
    const f = buildFrontier(candidate(), baseline)
    const [cand, base] = f.shapes[0]!.series
    expect(base!.role).toBe('baseline')
    expect(base!.points).toHaveLength(5)
    // A faster baseline on twice the GPUs: more interactive, less per GPU.
    for (const [i, p] of base!.points.entries()) {
      expect(p.interactivity).toBeGreaterThan(cand!.points[i]!.interactivity)
      expect(p.throughput).toBeLessThan(cand!.points[i]!.throughput)
    }
  })

  it('marks the Pareto front: no other point both more interactive and faster', () => {
    const pt = (interactivity: number, throughput: number): FrontierPoint => ({
      concurrency: 0,
      tpotP95Ms: 1000 / interactivity,
      interactivity,
      throughput,
      onFront: false,
      meetsTarget: null,
    })
    const points = [pt(100, 10), pt(50, 40), pt(50, 30), pt(20, 60), pt(10, 50)]
    markFront(points)
    expect(points.map((p) => p.onFront)).toEqual([true, true, false, true, false])
  })
})

describe('renderFrontierMermaid', () => {
  it('draws one line per series over the shared concurrencies, labelled with interactivity, and tabulates every point', () => {
    const baseline = appendRefresh(null, candidate(0.9), { name: 'b' })
    const [md] = renderFrontierMermaid(buildFrontier(candidate(), baseline))
    expect(md).toContain('xychart-beta')
    expect(md).toMatch(
      /x-axis "concurrency · candidate tok\/s\/user at p95 TPOT" \["C=1 · \d+(\.\d)?", "C=2 · \d+(\.\d)?", "C=4 · \d+(\.\d)?", "C=8 · \d+(\.\d)?", "C=16 · \d+(\.\d)?"\]/,
    )
    expect(md).toMatch(/y-axis "output tok\/s per GPU" 0 --> \d+/)
    expect(md!.match(/^ {2}line \[/gm)).toHaveLength(2)
    expect(md).toContain('Lines: baseline (grey), candidate (blue).')
    expect(md).toContain('| C | candidate tok/s/user | candidate tok/s/GPU | baseline tok/s/user | baseline tok/s/GPU |')
    expect(md!.match(/^\| \d+ \|/gm)).toHaveLength(5)
    expect(md).toMatch(/^\| 16 \| [\d.]+ ✗ \|/m)
  })
})
