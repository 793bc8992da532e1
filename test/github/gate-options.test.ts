import { describe, expect, it } from 'vitest'
import { gateOptionsFrom } from '../../src/github/gate-options.js'

describe('gateOptionsFrom', () => {
  it('turns percent per family into fractions per metric kind', () => {
    expect(gateOptionsFrom({ tolerancePct: { itl: 5, throughput: 7.5 }, maxFailedRequests: null })).toEqual({
      tolerances: { itl_p95: 0.05, tput_at_target: 0.075, output_tput: 0.075 },
    })
  })

  it('leaves the gate its defaults when nothing is configured', () => {
    expect(gateOptionsFrom({ tolerancePct: {}, maxFailedRequests: null })).toEqual({})
  })

  it('passes the failed-request budget on as a per-run count', () => {
    expect(gateOptionsFrom({ tolerancePct: {}, maxFailedRequests: 3 })).toEqual({ maxFailedRequests: 3 })
  })
})
