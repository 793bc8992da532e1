import { describe, expect, it } from 'vitest'
import type { ConfigFile } from '../../src/config/schema.js'
import { termDifferences, termsNotice, withBaseTerms } from '../../src/github/base-terms.js'

const base: ConfigFile = {
  server: { base_url: 'http://127.0.0.1:8000' },
  target: { metric: 'tpot', percentile: 95, threshold_ms: 50 },
  sweeps: { gate: { shapes: [{ input_len: 64, output_len: 16 }], concurrency: [1, 16] } },
  gate: { tolerance_pct: { itl: 5 }, max_failed_requests: 0 },
}

describe('the terms of the gate', () => {
  it('takes target and gate from the base and everything else from the PR', () => {
    const sweeps = { gate: { shapes: [{ input_len: 64, output_len: 16 }], concurrency: [1, 4] } }
    const pr: ConfigFile = { server: { base_url: 'http://127.0.0.1:9000' }, sweeps, gate: { tolerance_pct: { itl: 500 } } }
    expect(withBaseTerms(pr, base)).toEqual({ server: { base_url: 'http://127.0.0.1:9000' }, sweeps, target: base.target, gate: base.gate })
  })

  it('drops terms the base does not set, so the defaults apply rather than the PR', () => {
    expect(withBaseTerms({ gate: { tolerance_pct: { itl: 500 } } }, { sweeps: base.sweeps })).toEqual({})
    expect(withBaseTerms({ gate: { tolerance_pct: { itl: 500 } } }, null)).toEqual({})
  })

  it('names each changed term, ignoring key order', () => {
    const reordered: ConfigFile = { ...base, gate: { max_failed_requests: 0, tolerance_pct: { itl: 5 } }, target: { threshold_ms: 50, percentile: 95, metric: 'tpot' } }
    expect(termDifferences(reordered, base)).toEqual([])
    expect(termDifferences({ ...base, gate: { tolerance_pct: { itl: 500 } } }, base)).toEqual(['gate.max_failed_requests', 'gate.tolerance_pct'])
    expect(termDifferences({ ...base, target: { metric: 'itl', percentile: 95, threshold_ms: 50 } }, base)).toEqual(['target.metric'])
    expect(termDifferences({ sweeps: base.sweeps }, base)).toEqual(['target.metric', 'target.percentile', 'target.threshold_ms', 'gate.max_failed_requests', 'gate.tolerance_pct'])
  })

  it('says nothing when nothing changed, and otherwise that the new terms apply once merged', () => {
    expect(termsNotice([], 'main')).toBeNull()
    expect(termsNotice(['gate.tolerance_pct'], 'main (abc)')).toEqual({
      title: "servegate: this pull request changes the gate's terms",
      message: 'This pull request changes gate.tolerance_pct. The gate used the versions on main (abc); the new terms apply once this pull request is merged.',
    })
  })
})
