import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { baselineHistory, changePoints, sparkline } from '../../src/analysis/history.js'
import { renderHistoryMarkdown } from '../../src/report/history-format.js'
import { appendRefresh, writeBaseline } from '../../src/store/baseline.js'
import type { Baseline } from '../../src/gate/types.js'
import { pipeDay } from '../gate/fixtures.js'
import { runCli } from '../sweep/cli-child.js'

const VLLM = 'vllm serve org/model --port 8000'
const NEW_VLLM = 'vllm serve org/model --port 8000 --enable-chunked-prefill'

/** Eight refreshes through the pipeline; from refresh `from` (1-based) on, the engine is `factor` slower and served by another command. */
function history(from: number | null, factor = 1.1): Baseline {
  let b: Baseline | null = null
  for (let day = 0; day < 8; day++) {
    const changed = from !== null && day + 1 >= from
    const r = pipeDay(day, changed ? factor : 1, { env: (e) => {
      e.finished_at = `2026-11-${String(day + 1).padStart(2, '0')}T01:00:00.000Z`
      e.serve_command = changed ? NEW_VLLM : VLLM
    } })
    b = appendRefresh(b, r, { name: 'gate' })
  }
  return b!
}

describe('servegate history: the baseline read as a trend', () => {
  it('marks the refresh where a 10 % slower engine came in, naming the serve command change, and no other', () => {
    const h = baselineHistory(history(6))
    const itl = h.metrics.filter((m) => m.key.startsWith('itl_p95@'))
    expect(itl.map((m) => m.key)).toEqual(['itl_p95@64x16@c1', 'itl_p95@64x16@c4', 'itl_p95@64x16@c16'])
    for (const m of itl) {
      expect(m.changePoints.map((c) => c.index)).toEqual([5])
      expect(m.changePoints[0]!.worse).toBe(true)
      expect(m.changePoints[0]!.changePct).toBeGreaterThan(8)
      expect(m.changePoints[0]!.envChanges).toEqual([{ field: 'serve command', baseline: VLLM, candidate: NEW_VLLM, blame: 'repository' }])
    }
    expect(h.steps[5]!.envChanges.map((c) => c.field)).toEqual(['serve command'])
    expect(h.method).toMatch(/CUSUM/)
  })

  it('finds no change point in eight refreshes of an unchanged engine (±1 % day and run noise)', () => {
    const h = baselineHistory(history(null))
    expect(h.metrics.length).toBeGreaterThan(0)
    for (const m of h.metrics) expect(m.changePoints).toEqual([])
  })

  it('finds a step up and a step back down as two change points', () => {
    const series = [10, 10.1, 9.9, 10, 12, 12.1, 11.9, 10, 10.1, 9.9]
    expect(changePoints(series, 0.05, 0.015).points.map((p) => p.index)).toEqual([4, 7])
    expect(changePoints([10, null, 10.1, 9.9, 10, 12, 12.1], 0.05, 0.015).points.map((p) => p.index)).toEqual([5])
    expect(changePoints([10], 0.05, 0.015)).toEqual({ points: [], sigma: null })
  })

  it('draws a trend line and a chart GitHub renders', () => {
    expect(sparkline([1, 2, 3, null, 8])).toBe('▁▂▃ █')
    const md = renderHistoryMarkdown(baselineHistory(history(6)))
    expect(md).toContain('```mermaid')
    expect(md).toContain('xychart-beta')
    expect(md).toMatch(/\| 6 \| 2026-11-06 01:00 \| .*\*\*◆\*\*/)
  })

  it('`servegate history FILE` prints the table and the change point, and writes markdown and JSON', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'servegate-history-'))
    try {
      const file = join(dir, 'gate.json')
      await writeBaseline(file, history(6))
      const r = await runCli(['history', file, '--markdown', join(dir, 'h.md'), '--json', join(dir, 'h.json')])
      expect(r.code, r.stderr).toBe(0)
      expect(r.stdout).toContain('servegate history — baseline gate, 8 refreshes, oldest first')
      expect(r.stdout).toMatch(/p95 ITL 64×16 c=1: change at refresh 6 \(2026-11-06 01:00\): \+\d+\.\d % \(worse\); serve command vllm serve org\/model --port 8000 → vllm serve org\/model --port 8000 --enable-chunked-prefill/)
      const json = JSON.parse(readFileSync(join(dir, 'h.json'), 'utf8')) as { schema: string; metrics: Array<{ changePoints: unknown[] }> }
      expect(json.schema).toBe('servegate.history/v1')
      expect(readFileSync(join(dir, 'h.md'), 'utf8')).toContain('### servegate history: gate')
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  }, 60_000)
})
