import { PassThrough } from 'node:stream'
import { describe, expect, it } from 'vitest'
import { createProgress, formatDuration } from '../../src/cli/progress.js'

function capture(): { stream: PassThrough; text: () => string } {
  const stream = new PassThrough()
  let text = ''
  stream.on('data', (d: Buffer) => (text += d.toString()))
  return { stream, text: () => text }
}

describe('createProgress without a terminal', () => {
  it('logs one line per start and finish with points done, elapsed time and time left', () => {
    const out = capture()
    let t = 0
    const p = createProgress(4, { stream: out.stream, tty: false, now: () => t })
    p.start('C=1, repeat 1')
    t = 30_000
    p.done('C=1, repeat 1', '48 tok/s')
    p.start('C=1, repeat 2')
    t = 60_000
    p.done('C=1, repeat 2', '49 tok/s')
    p.stop()
    p.start('after stop')
    expect(out.text().split('\n')).toEqual([
      '[1/4] running C=1, repeat 1 (elapsed 0s)',
      // 30 s per point so far, 3 points left
      '[1/4] done C=1, repeat 1: 48 tok/s (elapsed 30s, about 1m30s left)',
      '[2/4] running C=1, repeat 2 (elapsed 30s)',
      '[2/4] done C=1, repeat 2: 49 tok/s (elapsed 1m00s, about 1m00s left)',
      '',
    ])
  })
})

describe('createProgress on a terminal', () => {
  it('draws a bar with the points done and logs each finished point', async () => {
    const out = capture()
    const p = createProgress(2, { stream: out.stream, tty: true })
    p.start('C=4, repeat 1')
    p.done('C=4, repeat 1', '200 tok/s')
    p.stop()
    p.stop() // twice is harmless
    expect(out.text()).toContain('✓ C=4, repeat 1: 200 tok/s')
    expect(out.text()).toContain('1/2 points')
  })
})

describe('formatDuration', () => {
  it.each([
    [0, '0s'],
    [59_400, '59s'],
    [61_000, '1m01s'],
    [3_725_000, '1h02m'],
  ])('writes %d ms as %s', (ms, s) => expect(formatDuration(ms)).toBe(s))
})
