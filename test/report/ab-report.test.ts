import { describe, expect, it } from 'vitest'
import type { AbOutcome } from '../../src/gate/ab-verdict.js'
import { costOf } from '../../src/gate/cost.js'
import { gpuMinutes, modeWhy, type AbSchedule } from '../../src/plan/ab-schedule.js'
import { renderAbMarkdown, renderAbText } from '../../src/report/ab-report.js'
import { result } from '../action/fixtures.js'
import { REGRESSION } from '../gate/verdict-fixture.js'

// Four rounds of exclusive slots, each start serving one slot, as run-ab records them.
const ORDER: AbSchedule['order'] = ['A', 'B', 'B', 'A']
const SCHEDULE: AbSchedule = {
  order: ORDER,
  mode: 'exclusive',
  why: modeWhy('exclusive', {}, ['A', 'B']),
  starts: ORDER.map((side, i) => ({ side, slots: [i + 1], ready_s: 42, wall_s: 400 })),
  gpus: 1,
  wall_minutes: 30,
  gpu_minutes: gpuMinutes(30, 1),
}

const outcome = (cost: AbOutcome['verdict']['cost']): AbOutcome => ({
  verdict: { ...REGRESSION, cost },
  a: result(),
  b: result(),
  paths: { a: 'ab/a.json', b: 'ab/b.json' },
  order: ORDER,
  schedule: SCHEDULE,
})

describe('the A/B report states the cost', () => {
  const line = 'cost: 4 engine starts, 8 point-runs, 30.0 GPU-minutes (cap 60)'
  const cost = costOf({ engineStarts: 4, pointRuns: 8 }, 30, 60, false)

  it('in verdict.md, once, under the verdict line and before the schedule', () => {
    const md = renderAbMarkdown(outcome(cost))
    expect(md).toMatch(/^### servegate A\/B verdict: REGRESSION\n/)
    expect(md.split(line).length - 1).toBe(1)
    expect(md.indexOf(line)).toBeLessThan(md.indexOf('**Schedule**'))
    expect(renderAbMarkdown(outcome(null))).not.toContain('cost:')
  })

  it('in the console text, under the verdict summary', () => {
    expect(renderAbText(outcome(cost))).toContain(`\n  1 gated metric regressed: p95 ITL 4096×512 c=16.\n  ${line}\n`)
  })
})
