import { describe, expect, it } from 'vitest'
import { renderVerdictMarkdown } from '../../src/report/verdict-markdown.js'
import { UNDECIDED, REGRESSION } from '../gate/verdict-fixture.js'

describe('renderVerdictMarkdown', () => {
  it('puts the verdict first, regressions at the top of the gated table, improvements shown, reported rows folded', () => {
    expect(renderVerdictMarkdown(REGRESSION)).toMatchInlineSnapshot(`
      "### servegate verdict: REGRESSION

      **Environment:** the host is unchanged since the baseline; the repository changed: engine vllm 0.9.0 → vllm 0.9.1

      1 gated metric regressed: p95 ITL 4096×512 c=16.

      **Gated metrics**

      | Status | Metric | Baseline | Candidate | Change | Bar | σ | MDC | n (base/cand) |
      |---|---|--:|--:|--:|--:|--:|--:|--:|
      | **regression** | p95 ITL 4096×512 c=16 | 20.04 ms | 23.10 ms | +15.3 % | +5.0 % | 1.2 % | 7.1 % | 30/3 |
      | improvement | throughput at target 4096×512 | 1002 tok/s | 1181 tok/s | +17.8 % | −4.8 % | 1.5 % | 7.0 % | 30/3 |
      | pass | p95 ITL 4096×512 c=1 | 10.02 ms | 10.10 ms | +0.8 % | +5.0 % | 1.2 % | 7.1 % | 30/3 |

      <details><summary>Reported, not gated</summary>

      | Status | Metric | Baseline | Candidate | Change | Bar | σ | MDC | n (base/cand) |
      |---|---|--:|--:|--:|--:|--:|--:|--:|
      | undecided | p95 TTFT 4096×512 c=1 | 150.0 ms | 157.0 ms | +4.7 % | +5.0 % | 1.2 % | 7.1 % | 30/3 |

      </details>

      **Environment changes**

      | Changed by | Field | Baseline | Candidate |
      |---|---|---|---|
      | repository | engine | vllm 0.9.0 | vllm 0.9.1 |

      **Why**

      - p95 ITL 4096×512 c=16: +15.3 %, beyond the bar of +5.0 %

      <sub>Change: candidate median vs baseline centre. Bar: the move in the worse direction that counts as a regression, max(tolerance, k·σ). σ: combined noise of the difference. MDC: the smallest change caught with ~95 % probability at this noise.</sub>
      "
    `)
  })

  it('says an undecided verdict is not a pass and how many repeats would settle it', () => {
    expect(renderVerdictMarkdown(UNDECIDED)).toMatchInlineSnapshot(`
      "### servegate verdict: UNDECIDED

      1 of 2 gated metrics were measured but could not be decided; this is not a pass. Each could have shown a regression of the promised size, so the check passes with a warning. 6 more repeats would likely settle it.

      **Gated metrics**

      | Status | Metric | Baseline | Candidate | Change | Bar | σ | MDC | n (base/cand) |
      |---|---|--:|--:|--:|--:|--:|--:|--:|
      | missing | p95 ITL 4096×512 c=1 | 10.00 ms | – | – | – | – | – | 30/0 |
      | undecided | p95 ITL 4096×512 c=16 | 20.00 ms | 20.10 ms | +4.1 % | +5.0 % | 1.2 % | 7.1 % | 30/3 |

      Environment: no changes recorded between baseline and candidate.

      **Why**

      - p95 ITL 4096×512 c=1: missing — candidate has no runs for this point
      - 6 more repeats of the gated sweep would likely settle it; decide over all runs

      <sub>Change: candidate median vs baseline centre. Bar: the move in the worse direction that counts as a regression, max(tolerance, k·σ). σ: combined noise of the difference. MDC: the smallest change caught with ~95 % probability at this noise.</sub>
      "
    `)
  })

  it('escapes pipes in environment values so the table holds', () => {
    const v = { ...REGRESSION, envChanges: [{ field: 'serve command', baseline: 'a | b', candidate: 'c', blame: 'repository' as const }] }
    expect(renderVerdictMarkdown(v)).toContain('| serve command | a \\| b | c |')
  })
})
