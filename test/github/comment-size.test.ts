/**
 * The PR comment of the methodology's full grid — 6 concurrencies × 3 repeats × 2 shapes —
 * with a baseline and a verdict, measured against GitHub's comment limit. Results are built
 * the way a sweep builds them (request records → summarizeRun → assessValidity).
 */
import { writeFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { compareToBaseline } from '../../src/gate/compare.js'
import { curvesFor } from '../../src/github/curves.js'
import { buildComment, buildSummary, type ReportInput } from '../../src/github/summary.js'
import { COMMENT_LIMIT_CHARS } from '../../src/github/trim.js'
import { renderMermaidCurve } from '../../src/report/mermaid.js'
import { atTargetForResult } from '../../src/analysis/at-target.js'
import { fingerprintOf } from '../../src/gate/fingerprint.js'
import { appendRefresh } from '../../src/gate/refresh.js'
import type { ResultFile } from '../../src/types.js'
import { pipelineResult } from '../gate/fixtures.js'

const GRID = [1, 4, 16, 64, 128, 256]
const SHAPES = [
  { input_len: 4096, output_len: 64 },
  { input_len: 1024, output_len: 64 },
]

/** Both shapes of the grid in one result, as `servegate run` writes a two-shape sweep. */
function fullGrid(factor: number): ResultFile {
  const parts = SHAPES.map((shape, i) =>
    pipelineResult({ shape, concurrency: GRID, repeats: 3, itl: (c, r) => (8 + c * 0.2 + i * 3) * factor * (1 + 0.01 * r), config: { sweep: 'full' } }),
  )
  const r = parts[0]!
  r.config = { ...r.config, shapes: SHAPES }
  r.points = parts.flatMap((p) => p.points)
  r.at_target = atTargetForResult(r.points, r.target)
  r.fingerprint = fingerprintOf(r)
  return r
}

describe('the PR comment of the full methodology grid', () => {
  const baseline = appendRefresh(null, fullGrid(1), { name: 'full' })
  const result = fullGrid(1.08)
  const verdict = compareToBaseline(baseline, result)
  const input: ReportInput = {
    mode: 'gate',
    outcome: verdict.verdict,
    sweepName: 'full',
    baselinePath: 'baselines/full.json',
    result,
    baseline,
    verdict,
    // As the Action draws them (github/publish-verdict.ts).
    charts: curvesFor(result, baseline).map((sc) =>
      renderMermaidCurve([sc.baseline!, sc.candidate], {
        title: `${sc.inputLen}×${sc.outputLen}: p95 TPOT vs output throughput`,
        xLabel: 'output tok/s',
        yLabel: 'p95 TPOT (ms)',
      }),
    ),
    notes: [],
    runUrl: 'https://github.com/acme/engine/actions/runs/123456789',
  }
  const comment = buildComment(input)
  // SERVEGATE_DUMP_COMMENT=FILE keeps the comment to read it.
  if (process.env['SERVEGATE_DUMP_COMMENT']) writeFileSync(process.env['SERVEGATE_DUMP_COMMENT'], comment)

  it('carries the frontier of both shapes inline, baseline against candidate, and stays under the limit', () => {
    expect(result.points).toHaveLength(12)
    expect(result.points.every((p) => p.runs.length === 3)).toBe(true)
    expect(comment.length).toBeLessThanOrEqual(COMMENT_LIMIT_CHARS)
    // Measured: printed so the figure in docs/action.md can be checked.
    console.log(`PR comment of the full grid (6 concurrencies × 3 repeats × 2 shapes): ${comment.length} characters of GitHub's 65,536`)
    expect(comment).toContain('#### Frontier: throughput per GPU vs interactivity')
    const frontierCharts = comment
      .split('```mermaid')
      .slice(1)
      .filter((b) => b.includes('by concurrency"'))
    expect(frontierCharts).toHaveLength(2)
    for (const chart of frontierCharts) {
      expect(chart).toMatch(/x-axis "concurrency · candidate tok\/s\/user at p95 TPOT" \[("C=\d+ · [\d.]+"(, )?){6}\]/)
      expect(chart.match(/^ {2}line \[/gm)).toHaveLength(2)
    }
    // Nothing of the frontier was cut to make room.
    expect(comment).not.toMatch(/left out to stay under[^\n]*frontier/)
  })

  it('keeps the frontier in the job summary too', () => {
    expect(buildSummary(input)).toContain('#### Frontier: throughput per GPU vs interactivity')
  })
})
