import { describe, expect, it } from 'vitest'
import { compareAB, invalidSlotLines } from '../../src/gate/ab-verdict.js'
import type { ResultFile } from '../../src/types.js'
import { pipelineResult, wiggle } from './fixtures.js'

// Slot r of a side is its repeat r (1-based, as servegate ab writes them).
const side = (factor: number, run?: Parameters<typeof pipelineResult>[0]['run']): ResultFile => {
  const r = pipelineResult({
    concurrency: [1, 4, 16],
    repeats: 4,
    itl: (c, rep) => wiggle(({ 1: 10, 4: 20, 16: 80 } as Record<number, number>)[c]!, 0, rep) * factor,
    ...(run ? { run } : {}),
  })
  for (const p of r.points) for (const x of p.runs) x.repeat += 1
  return r
}

const SHARED = { code: 'gpu_shared' as const, detail: 'Something else was using the GPU during the run: GPU 0 (NVIDIA H200) had up to 1 other process.' }

describe("the A/B verdict names B's troubles", () => {
  it('names B in a regression', () => {
    const v = compareAB(side(1), side(1.2))
    expect(v.verdict).toBe('regression')
    expect(v.reasons[0]).toMatch(/^B regressed: .*p95 ITL /)
  })

  it("calls B's spoiled runs unmeasured, naming B and the slot", () => {
    const b = side(1)
    for (const p of b.points) for (const r of p.runs) r.validity = { valid: false, issues: [SHARED] }
    const v = compareAB(side(1), b)
    expect(v.verdict).toBe('unmeasured')
    expect(v.reasons[0]).toMatch(
      /^unmeasured: B \(the candidate\) was not measured cleanly: B's runs in slot 2 are invalid: gpu_shared \(GPU 0 \(NVIDIA H200\) had up to 1 other process\); B's runs in slot 3 /,
    )
    expect(v.reasons.join('\n')).not.toContain('baseline refresh')
  })

  it("keeps B's failed requests beyond the budget broken, naming B", () => {
    const v = compareAB(
      side(1),
      side(1, () => ({ failed: 3 })),
    )
    expect(v.verdict).toBe('broken')
    expect(v.reasons[0]).toMatch(/^broken: B \(the candidate\) broke: B's run in slot 2 at 64x16@c1: 3 requests failed/)
  })

  it('gives a reference with no valid run its own verdict, never the refusal of a baseline refresh', () => {
    const a = side(1)
    for (const p of a.points) for (const r of p.runs) r.validity = { valid: false, issues: [SHARED] }
    const v = compareAB(a, side(1))
    expect(v.verdict).toBe('unmeasured')
    expect(v.reasons[0]).toMatch(/^unmeasured: the reference A broke or was spoiled/)
  })

  it('writes one line per spoiled slot of a one-slot result', () => {
    const b = side(1)
    const one = { ...b, points: b.points.map((p) => ({ ...p, runs: p.runs.slice(0, 1).map((r) => ({ ...r, validity: { valid: false, issues: [SHARED] } })) })) }
    expect(invalidSlotLines('B', 3, one)).toEqual(["B's runs in slot 3 are invalid: gpu_shared (GPU 0 (NVIDIA H200) had up to 1 other process)"])
    expect(invalidSlotLines('B', 3, b)).toEqual([])
  })
})
