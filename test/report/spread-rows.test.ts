import { describe, expect, it } from 'vitest'
import { renderConsoleTable } from '../../src/report/table.js'
import { renderMarkdownReport } from '../../src/report/markdown.js'
import { buildSpreadRows } from '../../src/report/spread-rows.js'
import { point, result, run } from './fixtures.js'

const bad = [{ code: 'requests_failed' as const, detail: '1 failed' }]
const c4 = point(4, [
  run(1, { ttft: [100, 200], itl: [10, 20], tput: 1000, perUser: 250 }),
  run(2, { ttft: [110, 220], itl: [11, 22], tput: 1100, perUser: 260 }),
  run(3, { ttft: [120, 240], itl: [12, 24], tput: 1200, perUser: null }),
  run(4, { ttft: [9000, 9000], itl: [900, 900], tput: 1, perUser: 1, issues: bad }),
])

describe('buildSpreadRows', () => {
  it('gives median, min, max and CV of each table figure over valid runs only', () => {
    // TTFT p50 100/110/120: sd 10, mean 110 → CV 9.1%. Tok/s/user has a run without it: 2 values.
    expect(buildSpreadRows([4], [c4])).toEqual([
      ['4', 'TTFT p50 (ms)', '3', '110', '100', '120', '9.1%'],
      ['4', 'TTFT p99 (ms)', '3', '220', '200', '240', '9.1%'],
      ['4', 'ITL p50 (ms)', '3', '11.0', '10.0', '12.0', '9.1%'],
      ['4', 'ITL p99 (ms)', '3', '22.0', '20.0', '24.0', '9.1%'],
      ['4', 'Output tok/s', '3', '1,100', '1,000', '1,200', '9.1%'],
      ['4', 'Tok/s/user', '2', '255', '250', '260', '2.8%'],
    ])
  })

  it('says n/a for the CV of a single run and skips pending and all-invalid concurrencies', () => {
    const one = point(1, [run(1, { ttft: [50, 60], itl: [5, 6], tput: 100, perUser: 100 })])
    const invalid = point(16, [run(1, { ttft: [1, 1], itl: [1, 1], tput: 1, perUser: 1, issues: bad })])
    const rows = buildSpreadRows([1, 16, 64], [one, invalid])
    expect(rows.map((r) => r[0])).toEqual(['1', '1', '1', '1', '1', '1'])
    expect(rows[0]).toEqual(['1', 'TTFT p50 (ms)', '1', '50.0', '50.0', '50.0', 'n/a'])
  })
})

describe('spread in the reports', () => {
  const r = result([c4], [], [4])

  it('adds a collapsed section per shape to the markdown report', () => {
    const md = renderMarkdownReport(r)
    const section = md.slice(md.indexOf('<details><summary>Spread across repeats</summary>'), md.indexOf('<details><summary>Environment</summary>'))
    expect(section).toBe(
      [
        '<details><summary>Spread across repeats</summary>',
        '',
        'Valid runs only; CV = sample standard deviation / mean.',
        '',
        '| Concurrency | Figure | Valid runs | Median | Min | Max | CV |',
        '|---:|---|---:|---:|---:|---:|---:|',
        '| 4 | TTFT p50 (ms) | 3 | 110 | 100 | 120 | 9.1% |',
        '| 4 | TTFT p99 (ms) | 3 | 220 | 200 | 240 | 9.1% |',
        '| 4 | ITL p50 (ms) | 3 | 11.0 | 10.0 | 12.0 | 9.1% |',
        '| 4 | ITL p99 (ms) | 3 | 22.0 | 20.0 | 24.0 | 9.1% |',
        '| 4 | Output tok/s | 3 | 1,100 | 1,000 | 1,200 | 9.1% |',
        '| 4 | Tok/s/user | 2 | 255 | 250 | 260 | 2.8% |',
        '',
        '</details>',
        '',
        '',
      ].join('\n'),
    )
  })

  it('keeps the compact cells unchanged and leaves the section out of the console table', () => {
    expect(renderMarkdownReport(r)).toContain('| 4 [1] | 110 (±9.1%) / 220 (±9.1%) | 11.0 (±9.1%) / 22.0 (±9.1%) | 1,100 (±9.1%) | 255 (±2.0%) |')
    expect(renderConsoleTable(r)).not.toContain('CV')
  })

  it('has no section before anything is measured', () => {
    expect(renderMarkdownReport(result([], []))).not.toContain('Spread across repeats')
  })
})
