import { describe, expect, it } from 'vitest'
import { renderMermaidCurve } from '../../src/report/mermaid.js'

describe('renderMermaidCurve', () => {
  it('draws latency per concurrency for baseline and candidate, with a colour legend and the exact throughputs', () => {
    const out = renderMermaidCurve(
      [
        {
          label: 'baseline',
          points: [
            { concurrency: 1, throughput: 48, latencyMs: 20.1 },
            { concurrency: 16, throughput: 610, latencyMs: 31.25 },
          ],
        },
        {
          label: 'candidate',
          points: [
            { concurrency: 1, throughput: 47, latencyMs: 20.6 },
            { concurrency: 16, throughput: 560, latencyMs: 36.789 },
          ],
        },
      ],
      { title: 'p95 TPOT vs load, 4096 in / 512 out', xLabel: 'output tok/s', yLabel: 'p95 TPOT (ms)' },
    )
    expect(out).toMatchInlineSnapshot(`
      "\`\`\`mermaid
      %%{init: {"themeVariables": {"xyChart": {"plotColorPalette": "#1f77b4, #d62728"}}}}%%
      xychart-beta
        title "p95 TPOT vs load, 4096 in / 512 out"
        x-axis "concurrency" ["C=1", "C=16"]
        y-axis "p95 TPOT (ms)" 0 --> 50
        line [20.1, 31.25]
        line [20.6, 36.79]
      \`\`\`

      Lines: baseline (blue), candidate (red).

      | concurrency | baseline output tok/s | baseline p95 TPOT (ms) | candidate output tok/s | candidate p95 TPOT (ms) |
      | --- | --- | --- | --- | --- |
      | C=1 | 48.0 | 20.1 | 47.0 | 20.6 |
      | C=16 | 610 | 31.3 | 560 | 36.8 |"
    `)
  })

  it('aligns series by position when points carry no concurrency, and leaves out steps only one series has', () => {
    const out = renderMermaidCurve([
      {
        label: 'a',
        points: [
          { throughput: 10, latencyMs: 5 },
          { throughput: 20, latencyMs: 8 },
        ],
      },
      { label: 'b', points: [{ throughput: 11, latencyMs: 6 }] },
    ])
    expect(out).toContain('x-axis "load step" ["1"]')
    expect(out).toContain('  line [5]\n  line [6]')
    expect(out).toContain('1 load step(s) measured in only some series are left out of the chart but listed below.')
    expect(out).toContain('| 2 | 20.0 | 8.00 | – | – |')
  })

  it('says there is nothing to draw rather than drawing an empty chart', () => {
    expect(renderMermaidCurve([{ label: 'a', points: [] }])).toBe('_No curve to draw yet: no measured points._')
  })
})
