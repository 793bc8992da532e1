import { describe, expect, it } from 'vitest'
import type { GateRow, Verdict } from '../../src/gate/types.js'
import { fitSections, fitVerdictRows, hardCut, keepVerdictRows, utf16Chars, utf8Bytes, type Section } from '../../src/github/trim.js'

const s = (title: string, size: number, priority: number): Section => ({ title, markdown: `${title}:${'x'.repeat(size)}`, priority })

describe('fitSections', () => {
  it('keeps everything, in order, when it fits', () => {
    expect(fitSections([s('a', 3, 1), s('b', 3, 2)], 100, utf16Chars, 'L')).toBe('a:xxx\n\nb:xxx\n')
  })

  it('drops the least important whole sections first and names them in a note', () => {
    const text = fitSections([s('head', 10, 100), s('chart', 500, 10), s('table', 100, 50), s('extra', 400, 10)], 400, utf16Chars, 'the limit')
    expect(text).toContain('head:')
    expect(text).toContain('table:')
    expect(text).not.toContain('chart:')
    expect(text).not.toContain('extra:')
    expect(text).toContain('> **Note:** left out to stay under the limit: chart, extra.')
    expect(text.length).toBeLessThanOrEqual(400)
  })

  it('puts back a small section dropped before the big one that had to go', () => {
    const text = fitSections([s('head', 1, 100), s('small', 10, 1), s('big', 500, 2)], 200, utf16Chars, 'L')
    expect(text).toContain('small:')
    expect(text).not.toContain('big:')
    expect(text).toContain('left out to stay under L: big.')
  })

  it('among equal priorities drops the later section first', () => {
    const text = fitSections([s('head', 1, 100), s('one', 100, 5), s('two', 100, 5)], 200, utf16Chars, 'L')
    expect(text).toContain('one:')
    expect(text).not.toContain('two:')
  })

  it('counts bytes for the summary limit: multi-byte text is cut sooner', () => {
    const sections = [
      { title: 'head', markdown: 'h', priority: 9 },
      { title: 'snow', markdown: '❄'.repeat(100), priority: 1 },
    ]
    expect(fitSections(sections, 150, utf16Chars, 'L')).toContain('❄')
    expect(fitSections(sections, 150, utf8Bytes, 'L')).not.toContain('❄')
  })

  it('hard-cuts a single oversized section at a line, closing an open code fence', () => {
    const big = ['```mermaid', ...Array.from({ length: 200 }, (_, i) => `line ${i}`), '```'].join('\n')
    const text = fitSections([{ title: 'chart', markdown: big, priority: 1 }], 300, utf16Chars, 'L')
    expect(text.length).toBeLessThanOrEqual(300)
    expect(text.match(/^```/gm)).toHaveLength(2)
    expect(text).toMatch(/cut here to stay under L\.\n$/)
  })
})

describe('hardCut', () => {
  it('never splits a surrogate pair', () => {
    const text = hardCut('😀'.repeat(100), 100, utf16Chars, 'L')
    expect(text.length).toBeLessThanOrEqual(100)
    expect(text).not.toMatch(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])/)
  })
})

describe('keepVerdictRows', () => {
  const row = (label: string, status: GateRow['status'], gated = true): GateRow => ({
    key: label,
    kind: 'itl_p95',
    label,
    unit: 'ms',
    higher_is_better: false,
    gated,
    baseline: 1,
    candidate: 1,
    delta_pct: 0,
    bar_pct: 5,
    sigma_pct: 1,
    n_baseline: 3,
    n_candidate: 3,
    history: 1,
    mdc_pct: 5,
    status,
    notes: [],
  })
  const v: Verdict = {
    verdict: 'regression',
    rows: [row('a', 'pass'), row('b', 'regression'), row('c', 'pass', false), row('d', 'undecided'), row('e', 'improvement'), row('f', 'regression', false)],
    envChanges: [],
    reasons: ['b: +20 %', 'd: undecided — noisy', 'general remark'],
    regressions: ['b'],
    confirm: null,
    blind: [],
  }

  it('drops passes first (reported before gated), keeps regressions and open rows longest, in the original order', () => {
    expect(keepVerdictRows(v, 5).verdict.rows.map((r) => r.label)).toEqual(['a', 'b', 'd', 'e', 'f'])
    expect(keepVerdictRows(v, 3).verdict.rows.map((r) => r.label)).toEqual(['b', 'd', 'f'])
    expect(keepVerdictRows(v, 3).leftOut).toBe(3)
  })

  it('drops the reasons of rows it drops, and keeps the others', () => {
    expect(keepVerdictRows(v, 1).verdict.reasons).toEqual(['b: +20 %', 'general remark'])
  })

  it('returns the verdict itself when every row fits', () => {
    expect(keepVerdictRows(v, 6)).toEqual({ verdict: v, leftOut: 0 })
  })
})

describe('fitVerdictRows', () => {
  it('keeps the most rows whose rendering fits the budget', () => {
    const rows = Array.from({ length: 50 }, (_, i) => ({ label: `r${i}`, status: i % 10 === 0 ? 'regression' : 'pass' }))
    const v = { verdict: 'regression', rows, envChanges: [], reasons: [], regressions: [], confirm: null } as unknown as Verdict
    const render = (x: Verdict, left: number) => `${x.rows.map((r) => `${r.status}:${r.label}`).join('\n')}\n${left}`
    const fitted = fitVerdictRows(v, render, 200, utf16Chars)
    expect(fitted.markdown.length).toBeLessThanOrEqual(200)
    expect(fitted.markdown).toContain('regression:r40')
    expect(fitVerdictRows(v, render, 199_000, utf16Chars).leftOut).toBe(0)
    const one = keepVerdictRows(v, 50 - fitted.leftOut + 1)
    expect(render(one.verdict, one.leftOut).length).toBeGreaterThan(200)
  })
})
