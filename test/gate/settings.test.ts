import { describe, expect, it } from 'vitest'
import { parseConfigText } from '../../src/config/load.js'
import { configForResult, resolveConfig } from '../../src/config/resolve.js'
import { resolveGateOptions } from '../../src/gate/options.js'
import { gateSettingsOfResult, optionsFromGateSettings } from '../../src/gate/settings.js'

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

  it('turns gate.design_pct into the design fractions, and the gate keeps its default for kinds left out', () => {
    const opts = optionsFromGateSettings({ tolerancePct: {}, maxFailedRequests: null, designPct: { tput_at_target: 10, goodput: 12.5 } })
    expect(opts).toEqual({ design: { tput_at_target: 0.1, goodput: 0.125 } })
    expect(resolveGateOptions(null, opts).design).toEqual({ itl_p95: 0.1, tput_at_target: 0.1, goodput: 0.125 })
  })

  it('leaves the spend cap to the job: gate.max_gpu_minutes is no option of the decision rule', () => {
    expect(optionsFromGateSettings({ tolerancePct: {}, maxFailedRequests: null, maxGpuMinutes: 120 })).toEqual({})
  })
})

describe('gateSettingsOfResult', () => {
  const resolved = (gate: string) => resolveConfig({ file: parseConfigText(`gate: ${gate}\n`, 'sg.yaml'), filePath: 'sg.yaml', flags: {}, env: {} })

  it('reads back every setting a result recorded, design and spend cap included', () => {
    const cfg = resolved('{tolerance_pct: {itl: 4}, max_mdc_pct: 20, design_pct: {itl_p95: 8, tput_at_target: 12}, max_gpu_minutes: 240}')
    expect(cfg.gate.designPct).toEqual({ itl_p95: 8, tput_at_target: 12 })
    expect(gateSettingsOfResult(configForResult(cfg))).toEqual(cfg.gate)
  })

  it('ignores recorded designs and caps that are not positive numbers or name no metric kind', () => {
    const read = gateSettingsOfResult({ gate: { tolerance_pct: {}, design_pct: { itl_p95: 0, tput_at_target: '15', itl: 10 }, max_gpu_minutes: -1 } })
    expect(read).toEqual({ tolerancePct: {}, maxFailedRequests: null })
  })
})
