import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { baselineHistory, changePoints, sparkline } from '../../src/gate/history.js'
import { renderHistoryMarkdown, renderHistoryText, renderHistoryTrendMarkdown } from '../../src/report/history-format.js'
import { writeBaseline } from '../../src/store/baseline.js'
import { appendRefresh } from '../../src/gate/refresh.js'
import type { Baseline } from '../../src/gate/types.js'
import { pipeDay } from './fixtures.js'
import { runCli } from '../sweep/cli-child.js'

const VLLM = 'vllm serve org/model --port 8000'
const NEW_VLLM = 'vllm serve org/model --port 8000 --enable-chunked-prefill'

/** Eight refreshes through the pipeline; from refresh `from` (1-based) on, the engine is `factor` slower and served by another command. */
function history(from: number | null, factor = 1.1, days = 8, commits = false): Baseline {
  let b: Baseline | null = null
  for (let day = 0; day < days; day++) {
    const changed = from !== null && day + 1 >= from
    const r = pipeDay(day, changed ? factor : 1, {
      env: (e) => {
        e.finished_at = `2026-11-${String(day + 1).padStart(2, '0')}T01:00:00.000Z`
        e.serve_command = changed ? NEW_VLLM : VLLM
      },
    })
    b = appendRefresh(b, r, { name: 'gate', ...(commits ? { commit: `c0ffee${day}0123456789` } : {}) })
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
      expect(r.stdout).toMatch(
        /p95 ITL 64×16 c=1: change at refresh 6 \(2026-11-06 01:00\): \+\d+\.\d % \(worse\); serve command vllm serve org\/model --port 8000 → vllm serve org\/model --port 8000 --enable-chunked-prefill/,
      )
      const json = JSON.parse(readFileSync(join(dir, 'h.json'), 'utf8')) as { schema: string; metrics: Array<{ changePoints: unknown[] }> }
      expect(json.schema).toBe('servegate.history/v1')
      expect(readFileSync(join(dir, 'h.md'), 'utf8')).toContain('### servegate history: gate')
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  }, 60_000)

  it('takes one odd refresh for noise and marks a shift once a second refresh confirms it', () => {
    // A busy host's night: every figure of refresh 4 alone 20 % worse.
    let blip: Baseline | null = null
    for (let day = 0; day < 8; day++) blip = appendRefresh(blip, pipeDay(day, day === 3 ? 1.2 : 1), { name: 'gate' })
    for (const m of baselineHistory(blip!).metrics) expect(m.changePoints, m.key).toEqual([])
    // The newest refresh 15 % worse: not yet a change point; the next one confirms it.
    expect(baselineHistory(history(8, 1.15)).metrics.flatMap((m) => m.changePoints)).toEqual([])
    for (const m of baselineHistory(history(8, 1.15, 9)).metrics)
      expect(
        m.changePoints.map((c) => c.index),
        m.key,
      ).toEqual([7])
    expect(changePoints([10, 10.1, 9.9, 10, 10.1, 12], 0.05, 0.015).points).toEqual([])
  })

  it('leaves a refresh without a valid run off the chart instead of drawing it at 0', () => {
    // Refresh 3: every c=16 run ran on a saturated client, so that point has no valid figure.
    let b: Baseline | null = null
    for (let day = 0; day < 5; day++) b = appendRefresh(b, pipeDay(day, 1, { run: (c) => ({ saturated: day === 2 && c === 16 }) }), { name: 'gate' })
    const h = baselineHistory(b!)
    const c16 = h.metrics.find((m) => m.key === 'itl_p95@64x16@c16')!
    expect(c16.values[2]).toBeNull()
    const md = renderHistoryMarkdown(h)
    const chart = md.slice(md.indexOf('title "p95 ITL 64×16 c=16"'))
    expect(chart).toMatch(/^title "p95 ITL 64×16 c=16"\n {2}x-axis \["1", "2", "4", "5"\]\n {2}y-axis "ms"\n {2}line \[[\d.]+, [\d.]+, [\d.]+, [\d.]+\]/)
    expect(md).not.toMatch(/line \[[^\]]*\b0\b/)
    expect(renderHistoryText(h)).toMatch(/^ {6}3 .*– /m)
  })

  it('lines the console table up under its header', () => {
    const lines = renderHistoryText(baselineHistory(history(6))).split('\n')
    const header = lines.find((l) => l.startsWith('refresh  at'))!
    const ends = (l: string): number[] => [...l.matchAll(/ \| /g)].map((m) => m.index)
    for (const row of lines.filter((l) => /^ {6}\d {2}/.test(l))) expect(ends(row)).toEqual(ends(header))
  })

  describe('the compact trend for a tracking issue (renderHistoryTrendMarkdown)', () => {
    it('shows the last refreshes with their commits, a trend row, the change point among them and one chart of the metric that moved', () => {
      const h = baselineHistory(history(7, 1.1, 10, true))
      const md = renderHistoryTrendMarkdown(h, { maxSteps: 5 })
      expect(md).toContain('**Trend of baseline gate**: the last 5 of 10 refreshes, oldest first.')
      const rows = md.split('\n').filter((l) => /^\| \d+ \|/.test(l))
      expect(rows.map((l) => l.split(' | ')[0])).toEqual(['| 6', '| 7', '| 8', '| 9', '| 10'])
      expect(rows[0]).toContain('| c0ffee50 |')
      expect(rows[1]).toMatch(/\*\*◆\*\*.* \| serve command vllm serve org\/model --port 8000 → vllm serve org\/model --port 8000 --enable-chunked-prefill \|$/)
      expect(rows.filter((l) => l.includes('◆'))).toHaveLength(1)
      const trend = md.split('\n').find((l) => l.startsWith('| trend |'))!
      expect(trend.split(' | ').filter((c) => /^[▁▂▃▄▅▆▇█]{5}$/.test(c))).toHaveLength(h.metrics.length)
      expect(md.match(/^- .*change at refresh 7 \(2026-11-07 01:00\)/gm)).toHaveLength(h.metrics.length)
      expect(md.match(/```mermaid/g)).toHaveLength(1)
      expect(md).toContain('x-axis ["6", "7", "8", "9", "10"]')
      expect(md).toMatch(/CUSUM/)
    })

    it('says when the change points lie before the window, and when there is none at all', () => {
      const h = baselineHistory(history(3, 1.1, 10))
      const md = renderHistoryTrendMarkdown(h, { maxSteps: 4 })
      expect(md).toContain('_No change point in these refreshes: every gated metric stayed within its noise._')
      expect(md).toContain(`_${h.metrics.length} earlier change points before refresh 7: \`servegate history\` lists the whole history._`)
      expect(md).not.toContain('◆')
      const quiet = renderHistoryTrendMarkdown(baselineHistory(history(null)))
      expect(quiet).toContain('**Trend of baseline gate**: 8 refreshes, oldest first.')
      expect(quiet).not.toContain('earlier change point')
      expect(quiet).not.toContain('| Commit |')
      expect(quiet.split('\n').filter((l) => /^\| \d+ \|/.test(l))).toHaveLength(8)
    })
  })
})
