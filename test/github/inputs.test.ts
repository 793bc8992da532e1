import { describe, expect, it } from 'vitest'
import { UsageError } from '../../src/errors.js'
import { baselinePathFor, chooseSweep, commentKeyFor, readInputs } from '../../src/github/inputs.js'

const reader = (values: Record<string, string>) => (name: string) => values[name] ?? ''

describe('readInputs', () => {
  it('applies the defaults action.yml documents when every input is empty', () => {
    const i = readInputs(reader({}))
    expect(i).toMatchObject({ mode: 'gate', comment: 'always', failOn: 'regression', allowFork: false, confirm: true, refreshCommit: true, refreshPush: true, workingDirectory: '.', out: 'servegate-result.json' })
    expect(i.config).toBeUndefined()
    expect(i.baseUrl).toBeUndefined()
    expect(i.githubToken).toBeUndefined()
  })

  it('reads dashed names and trims values', () => {
    const i = readInputs(reader({ 'base-url': ' http://gpu:8000 ', 'fail-on': 'inconclusive', 'allow-fork': 'TRUE', 'refresh-commit': 'False' }))
    expect(i.baseUrl).toBe('http://gpu:8000')
    expect(i.failOn).toBe('inconclusive')
    expect(i.allowFork).toBe(true)
    expect(i.refreshCommit).toBe(false)
  })

  it('reports every bad input at once, naming the input and what it accepts', () => {
    let err: unknown
    try {
      readInputs(reader({ mode: 'bench', 'allow-fork': 'yes', 'comment-key': 'a b' }))
    } catch (e) {
      err = e
    }
    expect(err).toBeInstanceOf(UsageError)
    const msg = (err as Error).message
    expect(msg).toContain('input "mode": "bench" is not allowed; expected one of gate, full, refresh')
    expect(msg).toContain('input "allow-fork": "yes" is not a boolean; expected true or false')
    expect(msg).toContain('input "comment-key"')
  })
})

describe('sweep, baseline and comment key', () => {
  it.each([
    [{ mode: 'gate' as const, sweep: undefined }, ['full', 'gate'], 'gate'],
    [{ mode: 'refresh' as const, sweep: undefined }, ['full', 'gate'], 'gate'],
    [{ mode: 'full' as const, sweep: undefined }, ['full', 'gate'], 'full'],
    [{ mode: 'gate' as const, sweep: undefined }, ['b200'], undefined],
    [{ mode: 'gate' as const, sweep: undefined }, null, undefined],
    [{ mode: 'full' as const, sweep: 'smoke' }, ['full'], 'smoke'],
  ])('chooseSweep(%o, %o) is %s', (inputs, sweeps, expected) => {
    expect(chooseSweep(inputs, sweeps)).toBe(expected)
  })

  it('defaults the baseline to baselines/<sweep>.json and the marker name to its stem', () => {
    expect(baselinePathFor({}, 'gate')).toBe('baselines/gate.json')
    expect(baselinePathFor({ baseline: 'b/x.json' }, 'gate')).toBe('b/x.json')
    expect(commentKeyFor({}, 'baselines/glm 5 b200.json')).toBe('glm-5-b200')
    expect(commentKeyFor({ commentKey: 'mine' }, 'baselines/gate.json')).toBe('mine')
  })
})
