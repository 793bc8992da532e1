import { describe, expect, it } from 'vitest'
import type { ConfigFile } from '../../src/config/schema.js'
import { termDifferences, termsNotice, withBaseTerms } from '../../src/github/base-terms.js'
import { configJudgement, judgeByConfig } from '../../src/github/input-terms.js'

const base: ConfigFile = {
  server: { base_url: 'http://127.0.0.1:8000' },
  target: { metric: 'tpot', percentile: 95, threshold_ms: 50 },
  sweeps: { gate: { shapes: [{ input_len: 64, output_len: 16 }], concurrency: [1, 16] } },
  gate: { tolerance_pct: { itl: 5 }, max_failed_requests: 0 },
}

describe('the terms of the gate', () => {
  it('takes target, gate, the sweeps, seed, goodput and the request deadline from the base, the server under test from the PR', () => {
    // Case 5: the PR narrows the gated sweep to c=1, 4 and brackets it; the base's list and placement apply.
    const sweeps = { gate: { shapes: [{ input_len: 64, output_len: 16 }], concurrency: [1, 4], placement: 'bracket' as const } }
    const pr: ConfigFile = {
      server: { base_url: 'http://127.0.0.1:9000', request_timeout: 5 },
      sweeps,
      seed: 3,
      goodput: { tpot: 500 },
      gate: { tolerance_pct: { itl: 500 }, fail_on: 'never', confirm: false },
    }
    const withSlo: ConfigFile = { ...base, server: { ...base.server, request_timeout: 600 }, seed: 1, goodput: { tpot: 50 } }
    expect(withBaseTerms(pr, withSlo)).toEqual({
      server: { base_url: 'http://127.0.0.1:9000', request_timeout: 600 },
      sweeps: base.sweeps,
      seed: 1,
      goodput: { tpot: 50 },
      target: base.target,
      gate: base.gate,
    })
  })

  it('drops terms the base does not set, so the defaults apply rather than the PR', () => {
    expect(withBaseTerms({ gate: { tolerance_pct: { itl: 500 } } }, { sweeps: base.sweeps })).toEqual({ sweeps: base.sweeps })
    expect(withBaseTerms({ gate: { tolerance_pct: { itl: 500 } }, server: { request_timeout: 1 }, seed: 4 }, null)).toEqual({})
    expect(withBaseTerms({ server: { base_url: 'http://h:1', request_timeout: 1 } }, base)).toEqual({ ...base, server: { base_url: 'http://h:1' } })
  })

  it('names each changed term, ignoring key order', () => {
    const reordered: ConfigFile = {
      ...base,
      gate: { max_failed_requests: 0, tolerance_pct: { itl: 5 } },
      target: { threshold_ms: 50, percentile: 95, metric: 'tpot' },
    }
    expect(termDifferences(reordered, base)).toEqual([])
    expect(termDifferences({ ...base, gate: { tolerance_pct: { itl: 500 } } }, base)).toEqual(['gate.max_failed_requests', 'gate.tolerance_pct'])
    expect(termDifferences({ ...base, target: { metric: 'itl', percentile: 95, threshold_ms: 50 } }, base)).toEqual(['target.metric'])
    expect(termDifferences({ sweeps: base.sweeps }, base)).toEqual([
      'target.metric',
      'target.percentile',
      'target.threshold_ms',
      'gate.max_failed_requests',
      'gate.tolerance_pct',
    ])
    const narrowed = { gate: { ...base.sweeps!['gate']!, concurrency: [1, 4], placement: 'bracket' as const } }
    expect(termDifferences({ ...base, sweeps: narrowed, server: { request_timeout: 5 }, seed: 2 }, base)).toEqual([
      'sweeps.gate.concurrency',
      'sweeps.gate.placement',
      'seed',
      'server.request_timeout',
    ])
    expect(termDifferences({ ...base, sweeps: { ...base.sweeps, tiny: narrowed.gate } }, base)).toEqual(['sweeps.tiny'])
    // The server under test is the PR's to change.
    expect(termDifferences({ ...base, server: { base_url: 'http://elsewhere:1', command: 'vllm serve m --port {port}' } }, base)).toEqual([])
  })

  it('says nothing when nothing changed, and otherwise that the new terms apply once merged', () => {
    expect(termsNotice([], 'main')).toBeNull()
    expect(termsNotice(['gate.tolerance_pct'], 'main (abc)')).toEqual({
      title: "servegate: this pull request changes the gate's terms",
      message: 'This pull request changes gate.tolerance_pct. The gate used the versions on main (abc); the new terms apply once this pull request is merged.',
    })
  })

  it('says so when a run by hand or a merge queue changes them, naming the base branch', () => {
    expect(termsNotice(['sweeps.gate.concurrency'], 'main (abc)', 'run')).toEqual({
      title: "servegate: this run changes the gate's terms",
      message: "This run's checkout changes sweeps.gate.concurrency. The gate used the versions on main (abc); the new terms apply once they are on main.",
    })
  })
})

describe("the base config's judgement wins over the workflow's inputs", () => {
  const strict = configJudgement(
    { gate: { fail_on: ['regression', 'broken', 'incomplete', 'not_comparable', 'unmeasured', 'undecided'], confirm: true } },
    'servegate.yml on main (abc)',
  )
  const defaults = { failOn: ['regression', 'broken', 'incomplete', 'not_comparable'] as const, confirm: true }

  it('reads gate.fail_on as a list or as the input spells it, and gate.confirm', () => {
    expect(strict).toEqual({
      failOn: ['regression', 'broken', 'incomplete', 'not_comparable', 'unmeasured', 'undecided'],
      confirm: true,
      source: 'servegate.yml on main (abc)',
    })
    // The retired word reads as the two verdicts it became.
    expect(configJudgement({ gate: { fail_on: 'regression, inconclusive' } }, 'f').failOn).toEqual(['regression', 'unmeasured', 'undecided'])
    expect(configJudgement({ gate: { fail_on: 'regression, broken' } }, 'f').failOn).toEqual(['regression', 'broken'])
    expect(configJudgement({ gate: {} }, 'f')).toEqual({ failOn: null, confirm: null, source: 'f' })
    expect(() => configJudgement({ gate: { fail_on: 'slower' } }, 'f')).toThrow(/gate\.fail_on in f/)
  })

  it('refuses an input that would let a verdict pass that the base fails, with a warning, and uses the base', () => {
    const j = judgeByConfig({ failOn: ['regression'], confirm: false }, { failOn: true, confirm: true }, strict)
    expect(j.failOn).toEqual(strict.failOn)
    expect(j.confirm).toBe(true)
    expect(j.warnings).toEqual([
      'the input fail-on "regression" would let broken, incomplete, not_comparable, unmeasured, undecided pass, which gate.fail_on in servegate.yml on main (abc) fails: refused; the step fails on regression,broken,incomplete,not_comparable,unmeasured,undecided.',
      'the input confirm: false would skip the confirmation repeats gate.confirm: true in servegate.yml on main (abc) asks for: refused; an undecided verdict runs them.',
    ])
    expect(judgeByConfig({ failOn: [], confirm: true }, { failOn: true, confirm: false }, strict).warnings[0]).toMatch(/^the input fail-on "never" would let/)
  })

  it('applies the base judgement silently where the workflow set no input, and leaves the inputs alone where the base sets none', () => {
    expect(judgeByConfig({ ...defaults, failOn: [...defaults.failOn] }, { failOn: false, confirm: false }, strict)).toEqual({
      failOn: strict.failOn,
      confirm: true,
      warnings: [],
    })
    const none = configJudgement(null, 'f')
    expect(judgeByConfig({ failOn: ['regression'], confirm: false }, { failOn: true, confirm: true }, none)).toEqual({
      failOn: ['regression'],
      confirm: false,
      warnings: [],
    })
  })
})
