import { describe, expect, it } from 'vitest'
import { costOf } from '../../src/gate/cost.js'
import { DEFAULT_FAIL_ON, gateExit } from '../../src/gate/outcome.js'
import { renderVerdictMarkdown } from '../../src/report/verdict-markdown.js'
import { BLIND, UNDECIDED, REGRESSION } from '../gate/verdict-fixture.js'

describe('renderVerdictMarkdown', () => {
  it('puts the verdict first, regressions at the top of the gated table, improvements shown, reported rows folded', () => {
    expect(renderVerdictMarkdown(REGRESSION)).toMatchInlineSnapshot(`
      "### servegate verdict: REGRESSION

      **Environment:** the host is unchanged since the baseline; the repository changed: engine vllm 0.9.0 → vllm 0.9.1

      1 gated metric regressed: p95 ITL 4096×512 c=16.

      **Gated metrics**

      | Status | Metric | Baseline | Candidate | Change | Tolerance | Bar | σ | MDC | n (base/cand) |
      |---|---|--:|--:|--:|--:|--:|--:|--:|--:|
      | **regression** | p95 ITL 4096×512 c=16 | 20.04 ms | 23.10 ms | +15.3 % | 5.0 % | +5.0 % | 1.2 % | 7.1 % | 30/3 |
      | improvement | throughput at target 4096×512 | 1002 tok/s | 1181 tok/s | +17.8 % | 5.0 % | −4.8 % | 1.5 % | 7.0 % | 30/3 |
      | pass | p95 ITL 4096×512 c=1 | 10.02 ms | 10.10 ms | +0.8 % | 5.0 % | +5.0 % | 1.2 % | 7.1 % | 30/3 |

      <details><summary>Reported, not gated</summary>

      | Status | Metric | Baseline | Candidate | Change | Tolerance | Bar | σ | MDC | n (base/cand) |
      |---|---|--:|--:|--:|--:|--:|--:|--:|--:|
      | undecided | p95 TTFT 4096×512 c=1 | 150.0 ms | 157.0 ms | +4.7 % | 5.0 % | +5.0 % | 1.2 % | 7.1 % | 30/3 |

      </details>

      **Environment changes**

      | Changed by | Field | Baseline | Candidate |
      |---|---|---|---|
      | repository | engine | vllm 0.9.0 | vllm 0.9.1 |

      **Why**

      - p95 ITL 4096×512 c=16: +15.3 %, beyond the bar of +5.0 %

      <sub>Change: candidate median vs baseline centre. Bar: the move in the worse direction that counts as a regression, max(tolerance, t·σ) at the row's share of the false-alarm rate per PR. σ: combined noise of the difference. MDC: the smallest change caught 90 % of the time at this noise; a blind row (MDC above gate.max_mdc_pct) never passes.</sub>
      "
    `)
  })

  it('says an undecided verdict is not a pass and how many repeats would settle it', () => {
    expect(renderVerdictMarkdown(UNDECIDED)).toMatchInlineSnapshot(`
      "### servegate verdict: UNDECIDED

      1 of 2 gated metrics were measured but could not be decided; this is not a pass, and the check fails. 6 more repeats would likely settle it.

      **Gated metrics**

      | Status | Metric | Baseline | Candidate | Change | Tolerance | Bar | σ | MDC | n (base/cand) |
      |---|---|--:|--:|--:|--:|--:|--:|--:|--:|
      | missing | p95 ITL 4096×512 c=1 | 10.00 ms | – | – | 5.0 % | – | – | – | 30/0 |
      | undecided | p95 ITL 4096×512 c=16 | 20.00 ms | 20.10 ms | +4.1 % | 5.0 % | +5.0 % | 1.2 % | 7.1 % | 30/3 |

      Environment: no changes recorded between baseline and candidate.

      **Why**

      - undecided: every row could see a regression of the promised size, but a change lies between the pass threshold and the bar; the check fails (more repeats or a reference command decide it)
      - p95 ITL 4096×512 c=1: missing — candidate has no runs for this point
      - 6 more repeats of the gated sweep would likely settle it; decide over all runs

      <sub>Change: candidate median vs baseline centre. Bar: the move in the worse direction that counts as a regression, max(tolerance, t·σ) at the row's share of the false-alarm rate per PR. σ: combined noise of the difference. MDC: the smallest change caught 90 % of the time at this noise; a blind row (MDC above gate.max_mdc_pct) never passes.</sub>
      "
    `)
  })

  it("marks a blind row's MDC, shows each row's tolerance, and opens why with the blind rows", () => {
    expect(renderVerdictMarkdown(BLIND)).toMatchInlineSnapshot(`
      "### servegate verdict: UNDECIDED

      1 of 2 gated metrics were measured but could not be decided; this is not a pass, and the check fails. The gate was blind on 1 of them: it could not have seen a regression of the size it promises.

      **Gated metrics**

      | Status | Metric | Baseline | Candidate | Change | Tolerance | Bar | σ | MDC | n (base/cand) |
      |---|---|--:|--:|--:|--:|--:|--:|--:|--:|
      | undecided | p95 ITL 4096×512 c=1 | 20.00 ms | 20.10 ms | −1.2 % | 5.0 % | +16.8 % | 5.9 % | 24.8 % blind | 30/3 |
      | pass | p95 ITL 4096×512 c=16 | 20.00 ms | 20.10 ms | +2.1 % | 10.0 % | +14.2 % | 4.1 % | 21.3 % | 30/3 |

      Environment: no changes recorded between baseline and candidate.

      **Why**

      - undecided and blind: p95 ITL 4096×512 c=1 (MDC 24.8 % > 15 %) could not have shown a regression of the size its limit promises (gate.max_mdc_pct), so the check fails; more refreshes, more repeats or a reference command give the gate power
      - p95 ITL 4096×512 c=1: undecided — blind: the smallest change this row would catch 90 % of the time is 24.8 %, more than 15 %; more repeats, more refreshes (3 so far) or a reference command would give it power

      <sub>Change: candidate median vs baseline centre. Bar: the move in the worse direction that counts as a regression, max(tolerance, t·σ) at the row's share of the false-alarm rate per PR. σ: combined noise of the difference. MDC: the smallest change caught 90 % of the time at this noise; a blind row (MDC above gate.max_mdc_pct) never passes.</sub>
      "
    `)
  })

  it('never says an undecided check passes: undecided fails by default', () => {
    // gateExit fails an undecided verdict under the default fail-on, and the verdict's own first
    // reason says "the check fails"; the summary line must not tell the reader otherwise.
    expect(gateExit(UNDECIDED.verdict, DEFAULT_FAIL_ON)).toBe(1)
    expect(UNDECIDED.reasons[0]).toMatch(/the check fails/)
    expect(renderVerdictMarkdown(UNDECIDED)).not.toMatch(/passes with a warning/)
  })

  it('escapes pipes in environment values so the table holds', () => {
    const v = { ...REGRESSION, envChanges: [{ field: 'serve command', baseline: 'a | b', candidate: 'c', blame: 'repository' as const }] }
    expect(renderVerdictMarkdown(v)).toContain('| serve command | a \\| b | c |')
  })

  it('states the cost in one line under the summary, and nothing else moves', () => {
    const cost = costOf({ engineStarts: 9, pointRuns: 54 }, 61.234, 120, false)
    const summary = '1 gated metric regressed: p95 ITL 4096×512 c=16.\n\n'
    expect(renderVerdictMarkdown({ ...REGRESSION, cost })).toBe(
      renderVerdictMarkdown(REGRESSION).replace(summary, `${summary}cost: 9 engine starts, 54 point-runs, 61.2 GPU-minutes (cap 120)\n\n`),
    )
  })

  it('says when the spend cap ended the job, and states no cap when there is none', () => {
    const capped = renderVerdictMarkdown({ ...UNDECIDED, cost: costOf({ engineStarts: 1, pointRuns: 1 }, 30, 30, true) })
    expect(capped).toContain('\ncost: 1 engine start, 1 point-run, 30.0 GPU-minutes (cap 30, reached)\n')
    const free = renderVerdictMarkdown({ ...UNDECIDED, cost: costOf({ engineStarts: 4, pointRuns: 20 }, 12.5, null, false) })
    expect(free).toContain('\ncost: 4 engine starts, 20 point-runs, 12.5 GPU-minutes\n')
    expect(renderVerdictMarkdown({ ...UNDECIDED, cost: null })).not.toContain('cost:')
  })
})
