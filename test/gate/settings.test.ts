import { describe, expect, it } from 'vitest'
import { optionsFromGateSettings } from '../../src/gate/settings.js'

describe('optionsFromGateSettings', () => {
  it('turns percent per family into fractions per metric kind', () => {
    expect(optionsFromGateSettings({ tolerancePct: { itl: 5, throughput: 7.5 }, maxFailedRequests: null })).toEqual({
      tolerances: { itl_p95: 0.05, tput_at_target: 0.075, output_tput: 0.075 },
    })
  })

  it('leaves the gate its defaults when nothing is configured', () => {
    expect(optionsFromGateSettings({ tolerancePct: {}, maxFailedRequests: null })).toEqual({})
  })

  it('passes the failed-request budget on as a per-run count', () => {
    expect(optionsFromGateSettings({ tolerancePct: {}, maxFailedRequests: 3 })).toEqual({ maxFailedRequests: 3 })
  })
})
