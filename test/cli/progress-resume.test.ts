import { PassThrough } from 'node:stream'
import { describe, expect, it } from 'vitest'
import { createProgress } from '../../src/cli/progress.js'

describe('progress of a resumed sweep', () => {
  it('counts the runs already measured and estimates time left from this session only', () => {
    const stream = new PassThrough()
    let text = ''
    stream.on('data', (d: Buffer) => (text += d.toString()))
    let t = 0
    const p = createProgress(6, { stream, tty: false, now: () => t })
    p.skip(4)
    p.start('C=16, repeat 1')
    t = 20_000
    p.done('C=16, repeat 1', '900 tok/s')
    expect(text.split('\n')).toEqual([
      '[4/6] already measured (resumed)',
      '[5/6] running C=16, repeat 1 (elapsed 0s)',
      // 20 s for the one point measured here, 1 point left.
      '[5/6] done C=16, repeat 1: 900 tok/s (elapsed 20s, about 20s left)',
      '',
    ])
  })

  it('moves the terminal bar past the resumed runs', () => {
    const stream = new PassThrough()
    let text = ''
    stream.on('data', (d: Buffer) => (text += d.toString()))
    const p = createProgress(6, { stream, tty: true })
    p.skip(4)
    p.start('C=16, repeat 1')
    p.done('C=16, repeat 1', '900 tok/s')
    p.stop()
    expect(text).toContain('5/6 points')
  })
})
