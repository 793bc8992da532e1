import { describe, expect, it } from 'vitest'
import { renderVerdictText } from '../../src/report/verdict-text.js'
import { costOf } from '../../src/gate/cost.js'
import { compareToBaseline } from '../../src/gate/compare.js'
import type { Baseline } from '../../src/gate/types.js'
import { appendRefresh } from '../../src/gate/refresh.js'
import { pipeDay } from '../gate/fixtures.js'
import { BLIND, UNDECIDED, REGRESSION } from '../gate/verdict-fixture.js'

describe('renderVerdictText', () => {
  it('prints a status word, aligned columns with regressions first, environment changes and reasons', () => {
    expect(renderVerdictText(REGRESSION)).toMatchInlineSnapshot(`
      "servegate verdict: REGRESSION
        environment: the host is unchanged since the baseline; the repository changed: engine vllm 0.9.0 → vllm 0.9.1
        1 gated metric regressed: p95 ITL 4096×512 c=16.

      gated:
        STATUS       METRIC                           BASELINE   CANDIDATE   CHANGE    TOL     BAR      σ    MDC     N
        regression   p95 ITL 4096×512 c=16            20.04 ms    23.10 ms  +15.3 %  5.0 %  +5.0 %  1.2 %  7.1 %  30/3
        improvement  throughput at target 4096×512  1002 tok/s  1181 tok/s  +17.8 %  5.0 %  −4.8 %  1.5 %  7.0 %  30/3
        pass         p95 ITL 4096×512 c=1             10.02 ms    10.10 ms   +0.8 %  5.0 %  +5.0 %  1.2 %  7.1 %  30/3

      reported, not gated:
        STATUS     METRIC                 BASELINE  CANDIDATE  CHANGE    TOL     BAR      σ    MDC     N
        undecided  p95 TTFT 4096×512 c=1  150.0 ms   157.0 ms  +4.7 %  5.0 %  +5.0 %  1.2 %  7.1 %  30/3

      environment changes:
        repository  engine  vllm 0.9.0 → vllm 0.9.1

      why:
        - p95 ITL 4096×512 c=16: +15.3 %, beyond the bar of +5.0 %
      "
    `)
  })

  it('shows missing figures as dashes and the confirmation hint', () => {
    expect(renderVerdictText(UNDECIDED)).toMatchInlineSnapshot(`
      "servegate verdict: UNDECIDED
        1 of 2 gated metrics were measured but could not be decided; this is not a pass, and the check fails. 6 more repeats would likely settle it.

      gated:
        STATUS     METRIC                 BASELINE  CANDIDATE  CHANGE    TOL     BAR      σ    MDC     N
        missing    p95 ITL 4096×512 c=1   10.00 ms          –       –  5.0 %       –      –      –  30/0
        undecided  p95 ITL 4096×512 c=16  20.00 ms   20.10 ms  +4.1 %  5.0 %  +5.0 %  1.2 %  7.1 %  30/3

      why:
        - undecided: every row could see a regression of the promised size, but a change lies between the pass threshold and the bar; the check fails (more repeats or a reference command decide it)
        - p95 ITL 4096×512 c=1: missing — candidate has no runs for this point
        - 6 more repeats of the gated sweep would likely settle it; decide over all runs
      "
    `)
  })

  it("marks a blind row's MDC and shows each row's tolerance under TOL", () => {
    expect(renderVerdictText(BLIND)).toMatchInlineSnapshot(`
      "servegate verdict: UNDECIDED
        1 of 2 gated metrics were measured but could not be decided; this is not a pass, and the check fails. The gate was blind on 1 of them: it could not have seen a regression of the size it promises.

      gated:
        STATUS     METRIC                 BASELINE  CANDIDATE  CHANGE     TOL      BAR      σ           MDC     N
        undecided  p95 ITL 4096×512 c=1   20.00 ms   20.10 ms  −1.2 %   5.0 %  +16.8 %  5.9 %  24.8 % blind  30/3
        pass       p95 ITL 4096×512 c=16  20.00 ms   20.10 ms  +2.1 %  10.0 %  +14.2 %  4.1 %        21.3 %  30/3

      why:
        - undecided and blind: p95 ITL 4096×512 c=1 (MDC 24.8 % > 15 %) could not have shown a regression of the size its limit promises (gate.max_mdc_pct), so the check fails; more refreshes, more repeats or a reference command give the gate power
        - p95 ITL 4096×512 c=1: undecided — blind: the smallest change this row would catch 90 % of the time is 24.8 %, more than 15 %; more repeats, more refreshes (3 so far) or a reference command would give it power
      "
    `)
  })

  it('aligns every row of a table to the same width', () => {
    const lines = renderVerdictText(REGRESSION).split('\n')
    const start = lines.indexOf('gated:') + 1
    const table = lines.slice(start, start + 4)
    // The N column is right-aligned: every row ends at the same column.
    expect(new Set(table.map((l) => l.length)).size).toBe(1)
  })
})

describe('renderVerdictText of the blame verdicts', () => {
  let b: Baseline | null = null
  for (let d = 0; d < 3; d++) b = appendRefresh(b, pipeDay(d), { name: 'gate' })

  it('prints BROKEN with the broken rows first and the evidence under why', () => {
    const text = renderVerdictText(compareToBaseline(b!, pipeDay(5, 1, { run: (c, r) => (c === 4 && r === 1 ? { outTokens: 10 } : {}) })))
    expect(text).toMatch(/^servegate verdict: BROKEN\n {2}The candidate broke .* in \d+ rows?; nothing was certified\./)
    const gated = text.slice(text.indexOf('gated:'), text.indexOf('reported, not gated:')).split('\n').slice(2, -2)
    expect(gated[0]).toMatch(/^ {2}broken +p95 ITL 64×16 c=4 /)
    expect(text).toMatch(/- p95 ITL 64×16 c=4: broken — .*run 1: output_len_mismatch/)
  })

  it('prints INCOMPLETE and IMPROVEMENT with their own summaries', () => {
    const incomplete = renderVerdictText(compareToBaseline(b!, pipeDay(5, 1, { skip: (c, r) => c === 16 && r === 2 })))
    expect(incomplete).toMatch(/^servegate verdict: INCOMPLETE\n {2}The candidate run is incomplete/)
    expect(incomplete).toMatch(/repeat 2: the curve stopped early \(measured c=1, 4 of 1, 4, 16\)/)
    const better = renderVerdictText(compareToBaseline(b!, pipeDay(5, 1 / 1.3)))
    expect(better).toMatch(/^servegate verdict: IMPROVEMENT\n {2}All 4 gated metrics are within their bars and \d improved\./)
  })
})

describe('renderVerdictText with a cost', () => {
  it('states the cost in one line under the summary, and nothing else moves', () => {
    const cost = costOf({ engineStarts: 14, pointRuns: 83 }, 97.04, null, false)
    const summary = '  1 gated metric regressed: p95 ITL 4096×512 c=16.\n'
    expect(renderVerdictText({ ...REGRESSION, cost })).toBe(
      renderVerdictText(REGRESSION).replace(summary, `${summary}  cost: 14 engine starts, 83 point-runs, 97.0 GPU-minutes\n`),
    )
    expect(renderVerdictText(REGRESSION)).not.toContain('cost:')
  })
})
