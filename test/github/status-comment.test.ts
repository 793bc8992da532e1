import { describe, expect, it } from 'vitest'
import { stampLine, statusCommentBody, DETAIL_LIMIT, type RunStamp } from '../../src/github/status-comment.js'

const STAMP: RunStamp = { headSha: '0123456789abcdef0123', at: '2026-12-03T12:00:59.123Z', runAttempt: '2', runUrl: 'https://github.com/o/r/actions/runs/5' }

describe('stampLine', () => {
  it('names the short head commit, the minute in UTC, the attempt and the run', () => {
    expect(stampLine(STAMP)).toBe('for 0123456789ab · 2026-12-03 12:00 UTC · attempt 2 · [run](https://github.com/o/r/actions/runs/5)')
  })

  it('says when the commit is unknown and leaves out what is not set', () => {
    expect(stampLine({ headSha: null, at: '2026-12-03T12:00:00Z', runAttempt: null, runUrl: null })).toBe('for an unknown commit · 2026-12-03 12:00 UTC')
  })
})

describe('statusCommentBody', () => {
  it('while running, says so under a stamp and does not disown an earlier verdict yet', () => {
    expect(statusCommentBody('running', STAMP, '')).toBe(`### ⏳ servegate: benchmark running\n\n${stampLine(STAMP)}\n`)
  })

  it.each([
    ['error', '🛑 servegate: the run failed — no verdict'],
    ['refused', '⛔ servegate: refused to run — no verdict'],
    ['cancelled', '🛑 servegate: cancelled — no verdict'],
  ] as const)('for %s, heads the body, and says any earlier verdict no longer applies', (state, head) => {
    const body = statusCommentBody(state, STAMP, 'why')
    expect(body.startsWith(`### ${head}\n\n${stampLine(STAMP)}\n\n> why\n`)).toBe(true)
    expect(body).toContain('Any earlier verdict in this comment no longer applies.')
  })

  it('counts the partial runs measured', () => {
    expect(statusCommentBody('cancelled', STAMP, '', { done: 3, planned: 12 })).toContain('Partial: 3 of 12 planned runs were measured; nothing was certified.')
  })

  it('escapes and redacts the detail, collapses its lines, and cuts it short', () => {
    const body = statusCommentBody('error', STAMP, 'HTTP 500 from <b>server</b>\n@team key=abc123 token hf_abcdefghijklmnop', undefined, ['abc123'])
    expect(body).toContain('> HTTP 500 from &lt;b&gt;server&lt;/b&gt; @\u200Dteam key=\\*\\*\\* token \\*\\*\\*')
    const long = statusCommentBody('error', STAMP, 'x'.repeat(DETAIL_LIMIT * 3))
    expect(long.length).toBeLessThan(DETAIL_LIMIT + 400)
    expect(long).toContain('x …')
  })
})
