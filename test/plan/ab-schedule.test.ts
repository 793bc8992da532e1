import { describe, expect, it } from 'vitest'
import {
  gpuMinutes,
  gpusHeld,
  modeWhy,
  parseGpuList,
  plannedStarts,
  residentProblem,
  roundsProblem,
  scheduleLines,
  slotOf,
  slotOrder,
} from '../../src/plan/ab-schedule.js'

describe('the A/B schedule', () => {
  it('starts a side afresh for every slot when exclusive, once for all its slots when resident', () => {
    const order = slotOrder(2)
    expect(order).toEqual(['A', 'B', 'B', 'A'])
    // A B B A: every slot its own start, so every round is an independent draw of the start offsets.
    expect(plannedStarts(order, 'exclusive')).toEqual([
      { side: 'A', slots: [1] },
      { side: 'B', slots: [2] },
      { side: 'B', slots: [3] },
      { side: 'A', slots: [4] },
    ])
    expect(plannedStarts(slotOrder(4), 'resident')).toEqual([
      { side: 'A', slots: [1, 4, 5, 8] },
      { side: 'B', slots: [2, 3, 6, 7] },
    ])
  })

  it('finds the slot of each repeat of a side', () => {
    const order = slotOrder(4)
    for (const side of ['A', 'B'] as const) {
      const slots = order.flatMap((s, i) => (s === side ? [i + 1] : []))
      expect([1, 2, 3, 4].map((r) => slotOf(side, r))).toEqual(slots)
    }
  })

  it('refuses fewer than 2 rounds, saying why', () => {
    expect(roundsProblem(2)).toBeNull()
    expect(roundsProblem(6)).toBeNull()
    for (const n of [0, 1, 2.5, NaN]) expect(roundsProblem(n)).toMatch(/at least 2 rounds \(the first look needs a round of each order, A B and B A\)/)
  })

  it('reads GPU lists of indices or UUIDs, refusing anything else in one line', () => {
    expect(parseGpuList('0,1', '--a-gpus')).toEqual(['0', '1'])
    expect(parseGpuList(' 2 , GPU-5d2e-aa ', '--b-gpus')).toEqual(['2', 'GPU-5d2e-aa'])
    expect(() => parseGpuList('', '--a-gpus')).toThrow('--a-gpus "": expected GPU indices or UUIDs')
    expect(() => parseGpuList('0,,1', '--a-gpus')).toThrow(/expected GPU indices/)
    expect(() => parseGpuList('0,0', '--a-gpus')).toThrow('a GPU is named twice')
  })

  it('allows resident engines only on disjoint GPUs where the host has GPUs', () => {
    expect(residentProblem('unknown', {})).toBeNull()
    expect(residentProblem(0, {})).toBeNull()
    expect(residentProblem(1, {})).toMatch(
      /^servegate ab: --resident: A and B would share this host's GPU: give each side GPUs of its own with --a-gpus and --b-gpus/,
    )
    expect(residentProblem(8, { A: ['0'] })).toMatch(/share this host's 8 GPUs/)
    expect(residentProblem(2, { A: ['0', '1'], B: ['1'] })).toMatch(/--a-gpus and --b-gpus both name GPU 1/)
    expect(residentProblem(2, { A: ['0'], B: ['1'] })).toBeNull()
    expect(
      residentProblem(1, {}, { resident: 'the input resident', aGpus: 'the input a-gpus', bGpus: 'the input b-gpus', maxRounds: 'the input max-rounds' }),
    ).toContain('with the input a-gpus and the input b-gpus')
  })

  it('counts GPU-minutes as wall minutes × GPUs held, and wall minutes when no GPU was seen', () => {
    expect(gpuMinutes(10, 8)).toBe(80)
    expect(gpuMinutes(10, 0)).toBe(10)
    expect(gpusHeld(8, { A: ['0'], B: ['1'] })).toBe(2)
    expect(gpusHeld(8, {})).toBe(8)
    expect(gpusHeld('unknown', { A: ['0', '1'] })).toBe(2)
    expect(gpusHeld('unknown', {})).toBe(0)
  })

  it('says which mode ran and why, and renders the schedule', () => {
    expect(modeWhy('exclusive', {}, ['A', 'B'])).toBe(
      "exclusive: the default; each side is started afresh for each of its slots and stopped before the other's",
    )
    expect(modeWhy('resident', { A: ['0'], B: ['1'] }, ['A', 'B'])).toBe('resident: --resident, A on GPUs 0, B on GPUs 1')
    expect(modeWhy('exclusive', {}, ['B'])).toContain('; A is a server given by URL, up for the whole job')
    const lines = scheduleLines({
      order: slotOrder(2),
      mode: 'exclusive',
      why: 'exclusive: x',
      starts: [{ side: 'A', slots: [1], ready_s: 2.5, wall_s: 30 }],
      gpus: 0,
      wall_minutes: 3,
      gpu_minutes: 3,
    })
    expect(lines).toEqual([
      'Mode: exclusive: x.',
      'Slots: 1:A 2:B 3:B 4:A.',
      'Engine starts (1): A for slot 1 (ready after 2.5 s, up 30 s).',
      'GPU-minutes: no GPU was seen on this host; the job took 3.00 wall minutes.',
    ])
  })
})
