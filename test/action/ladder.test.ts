import { describe, expect, it } from 'vitest'
import { run } from '../../src/action.js'
import { CWD, fakeDeps, type FakeOptions } from './fake-deps.js'
import { verdict } from './fixtures.js'

// The Action's escalation ladder with typed fakes: each compareStarts / runAB call returns the
// next verdict of the list, so every path through baseline → more candidate starts, or A/B, is driven exactly.
const HEAD = '1a2b3c4d5e6f7a8b9c0d1a2b3c4d5e6f7a8b9c0d'
const PR = {
  pull_request: { number: 7, head: { repo: { full_name: 'acme/infer', fork: false }, sha: HEAD }, base: { repo: { full_name: 'acme/infer', fork: false } } },
}
const BASELINE = `${CWD}/baselines/gate.json`
const REFERENCE = 'vllm serve base-model --port {port}'
const gate = (o: FakeOptions = {}) =>
  fakeDeps({
    existing: [BASELINE],
    payload: PR,
    ...o,
    inputs: { config: 'servegate.yml', serve: 'vllm serve pr-model --port {port}', 'reference-serve': REFERENCE, ...o.inputs },
  })

describe('the escalation ladder in gate mode', () => {
  it('climbs from a row the stored baseline left open straight to A/B, and publishes the A/B verdict with why and what it cost', async () => {
    const { deps, rec } = gate({ verdicts: [verdict('undecided'), verdict('regression')] })
    await run(deps)
    // The gated sweep (the candidate's first start, one run per point: an A/B may follow), then the A/B
    // with the reference as A: no start of the candidate alone.
    expect(rec.sweeps.map((c) => c.repeats)).toEqual([1])
    expect(rec.summary).toContain("The first sweep ran one run per point (the sweep's repeats: 3)")
    expect(rec.abRuns).toHaveLength(1)
    expect(rec.resolveInputs.some((i) => i.flags.serve === REFERENCE)).toBe(true)
    expect(rec.outputs.get('verdict')).toBe('regression')
    expect(rec.failed).toEqual(['servegate gate tripped: regression in p95 ITL 128×32 c=16'])
    expect(rec.summary).toMatch(
      /Escalated to A\/B: the stored baseline left p95 ITL 128×32 c=16 between the boundaries \(against baselines\/gate\.json the verdict was undecided\)/,
    )
    expect(rec.summary).toMatch(/The ladder cost \d+\.\d GPU-minutes/)
  })

  it('stops at a pass against the stored baseline: no further start, no A/B', async () => {
    const { deps, rec } = gate({ verdicts: [verdict('pass')] })
    await run(deps)
    expect(rec.sweeps).toHaveLength(1)
    expect(rec.abRuns).toHaveLength(0)
    expect(rec.outputs.get('verdict')).toBe('pass')
    expect(rec.failed).toEqual([])
  })

  it('confirms a regression against the stored baseline side by side before blaming the PR: the A/B pass stands', async () => {
    const { deps, rec } = gate({ verdicts: [verdict('regression'), verdict('pass')] })
    await run(deps)
    expect(rec.sweeps).toHaveLength(1)
    expect(rec.abRuns).toHaveLength(1)
    expect(rec.outputs.get('verdict')).toBe('pass')
    expect(rec.failed).toEqual([])
    expect(rec.summary).toContain(
      'Escalated to A/B: the stored baseline shows a regression (p95 ITL 128×32 c=16), confirmed side by side before the PR is blamed',
    )
  })

  it('without a reference, gives an open row more starts of the candidate, one run per point each, until it is decided', async () => {
    const { deps, rec } = gate({ inputs: { 'reference-serve': '' }, verdicts: [verdict('undecided'), verdict('undecided'), verdict('pass')] })
    await run(deps)
    // The first sweep, then two fresh starts of the candidate's engine (each sweep starts it anew), one repeat each.
    expect(rec.sweeps.map((c) => c.repeats)).toEqual([1, 1, 1])
    expect(rec.abRuns).toHaveLength(0)
    expect(rec.outputs.get('verdict')).toBe('pass')
    expect(rec.failed).toEqual([])
    expect(rec.summary).toContain("The candidate's engine was started 3 times (one run per point after the first sweep)")
    expect(rec.summary).toMatch(/cost: 3 engine starts, /)
    // Rows, not sweeps: the later starts measure only the open row's point (c = 16), not c = 1 as well.
    expect(rec.sweepPoints).toEqual([null, ['128x32@c16'], ['128x32@c16']])
  })

  it('without a reference and with confirm off, an open row stands undecided and fails the check', async () => {
    const { deps, rec } = gate({ inputs: { 'reference-serve': '', confirm: 'false' }, verdicts: [verdict('undecided'), verdict('pass')] })
    await run(deps)
    // One look and no step after it: the sweep keeps its repeats, which that look draws its spread from.
    expect(rec.sweeps.map((c) => c.repeats)).toEqual([3])
    expect(rec.summary).not.toContain('The first sweep ran one run per point')
    expect(rec.outputs.get('verdict')).toBe('undecided')
    expect(rec.failed).toHaveLength(1)
  })

  it('gives a row the stored centre leaves blind no more starts: no number of them would decide it', async () => {
    const blind = verdict('undecided', { blind: ['p95 ITL 128×32 c=16'] })
    const { deps, rec } = gate({ inputs: { 'reference-serve': '' }, verdicts: [blind, verdict('pass')] })
    await run(deps)
    expect(rec.sweeps.map((c) => c.repeats)).toEqual([1])
    expect(rec.outputs.get('verdict')).toBe('undecided')
  })

  it('ends the ladder on a broken candidate: re-measuring the reference cannot repair it', async () => {
    const { deps, rec } = gate({ verdicts: [verdict('broken')] })
    await run(deps)
    expect(rec.abRuns).toHaveLength(0)
    expect(rec.outputs.get('verdict')).toBe('broken')
  })
})
