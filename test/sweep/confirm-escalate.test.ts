import { describe, expect, it } from 'vitest'
import { pointRepeats } from '../../src/gate/escalate.js'
import { mergeResults } from '../../src/gate/merge.js'
import { confirmVerdict } from '../../src/sweep/confirm.js'
import type { ResultFile } from '../../src/types.js'
import { pipelineResult, wiggle } from '../gate/fixtures.js'

// The Action's ladder without a reference gives an open PR more starts of the candidate; each
// measures only the points of the rows still open (gate/escalate.ts). Results by the pipeline's
// summarizer: p95 ITL 10 / 20 / 80 ms at c = 1 / 4 / 16, repeats numbered from 1.
const ITL: Record<number, number> = { 1: 10, 4: 20, 16: 80 }
const side = (rounds: number): ResultFile => {
  const r = pipelineResult({ concurrency: [1, 4, 16], repeats: rounds, itl: (c, rep) => wiggle(ITL[c]!, rep % 7, rep) })
  for (const p of r.points) for (const x of p.runs) x.repeat += 1
  for (const s of r.at_target) for (const x of s.runs) x.repeat += 1
  return r
}

describe('more candidate starts, rows not sweeps (the Action’s ladder without a reference)', () => {
  it('measures only the open points in a later start, and the merged file plans each point’s own repeats', async () => {
    const first = side(3)
    const asked: Array<ReadonlySet<string> | null> = []
    const { measured, extra } = await confirmVerdict(
      {
        // The sweep measures the points it is told to: here the one open point, c = 16, one repeat.
        runSweep: async (_cfg, deps) => {
          asked.push(deps.onlyPoints ?? null)
          const one = pipelineResult({ concurrency: [16], repeats: 1, itl: () => ITL[16]! })
          return { result: { ...one, config: { ...one.config, concurrency: [1, 4, 16] } } }
        },
        mergeResults,
        writeResultFile: async () => {},
        log: () => {},
      },
      { repeats: 3, seed: 1, out: 'x.json' } as never,
      first,
      'x.json',
      1,
      new Set(['64x16@c16']),
    )
    expect(asked).toEqual([new Set(['64x16@c16'])])
    // Its throughput at target was drawn through c = 16 alone: not the sweep's figure, dropped.
    expect(extra.at_target).toEqual([])
    expect(measured.points.map((p) => p.runs.map((r) => r.repeat))).toEqual([
      [1, 2, 3],
      [1, 2, 3],
      [1, 2, 3, 4],
    ])
    expect(pointRepeats(measured)).toEqual({ '64x16@c1': 3, '64x16@c4': 3, '64x16@c16': 4 })
    expect(measured.at_target[0]!.runs.map((r) => r.repeat)).toEqual([1, 2, 3])
  })
})
