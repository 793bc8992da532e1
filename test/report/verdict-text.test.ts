import { describe, expect, it } from 'vitest'
import { renderVerdictText } from '../../src/report/verdict-text.js'
import { INCONCLUSIVE, REGRESSION } from '../gate/verdict-fixture.js'

describe('renderVerdictText', () => {
  it('prints a status word, aligned columns with regressions first, environment changes and reasons', () => {
    expect(renderVerdictText(REGRESSION)).toMatchInlineSnapshot(`
      "servegate verdict: REGRESSION
        1 gated metric regressed: p95 ITL 4096×512 c=16.

      gated:
        STATUS       METRIC                           BASELINE   CANDIDATE   CHANGE     BAR      σ    MDC     N
        regression   p95 ITL 4096×512 c=16            20.04 ms    23.10 ms  +15.3 %  +5.0 %  1.2 %  7.1 %  30/3
        improvement  throughput at target 4096×512  1002 tok/s  1181 tok/s  +17.8 %  −4.8 %  1.5 %  7.0 %  30/3
        pass         p95 ITL 4096×512 c=1             10.02 ms    10.10 ms   +0.8 %  +5.0 %  1.2 %  7.1 %  30/3

      reported, not gated:
        STATUS        METRIC                 BASELINE  CANDIDATE  CHANGE     BAR      σ    MDC     N
        inconclusive  p95 TTFT 4096×512 c=1  150.0 ms   157.0 ms  +4.7 %  +5.0 %  1.2 %  7.1 %  30/3

      environment changes:
        engine  vllm 0.9.0 → vllm 0.9.1

      why:
        - p95 ITL 4096×512 c=16: +15.3 %, beyond the bar of +5.0 %
      "
    `)
  })

  it('shows missing figures as dashes and the confirmation hint', () => {
    expect(renderVerdictText(INCONCLUSIVE)).toMatchInlineSnapshot(`
      "servegate verdict: INCONCLUSIVE
        2 of 2 gated metrics could not be decided; no regression was shown, but this is not a pass. 6 more repeats would likely settle it.

      gated:
        STATUS        METRIC                 BASELINE  CANDIDATE  CHANGE     BAR      σ    MDC     N
        missing       p95 ITL 4096×512 c=1   10.00 ms          –       –       –      –      –  30/0
        inconclusive  p95 ITL 4096×512 c=16  20.00 ms   20.10 ms  +4.1 %  +5.0 %  1.2 %  7.1 %  30/3

      why:
        - p95 ITL 4096×512 c=1: missing — candidate has no runs for this point
        - 6 more repeats of the gated sweep would likely settle it; decide over all runs
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
