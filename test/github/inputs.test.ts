import { describe, expect, it } from 'vitest'
import { UsageError } from '../../src/errors.js'
import { baselinePathFor, chooseSweep, commentKeyFor, readInputs, secretsInCommand } from '../../src/github/inputs.js'

const reader = (values: Record<string, string>) => (name: string) => values[name] ?? ''

describe('readInputs', () => {
  it('applies the defaults action.yml documents when every input is empty', () => {
    const i = readInputs(reader({}))
    expect(i).toMatchObject({
      mode: 'gate',
      comment: 'always',
      failOn: ['regression', 'broken', 'incomplete', 'unmeasured', 'undecided', 'not_comparable'],
      allowFork: false,
      confirm: true,
      refreshCommit: true,
      refreshPush: true,
      workingDirectory: '.',
      out: 'servegate-result.json',
    })
    expect(i.config).toBeUndefined()
    expect(i.baseUrl).toBeUndefined()
    expect(i.githubToken).toBeUndefined()
  })

  it('reads dashed names and trims values', () => {
    const i = readInputs(reader({ 'base-url': ' http://gpu:8000 ', 'fail-on': 'inconclusive', 'allow-fork': 'TRUE', 'refresh-commit': 'False' }))
    expect(i.baseUrl).toBe('http://gpu:8000')
    // The retired word reads as the two verdicts it was split into.
    expect(i.failOn).toEqual(['unmeasured', 'undecided'])
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

  it.each([
    ['regression, broken', ['regression', 'broken']],
    ['regression incomplete not-comparable', ['regression', 'incomplete', 'not_comparable']],
    ['never', []],
  ])('reads fail-on %j as the list %j', (text, list) => {
    expect(readInputs(reader({ 'fail-on': text })).failOn).toEqual(list)
  })

  it('names a fail-on word that is not a verdict, with the verdicts it accepts', () => {
    expect(() => readInputs(reader({ 'fail-on': 'regression,slow' }))).toThrow(
      /input "fail-on": "regression,slow": "slow" is not a verdict; expected a comma-separated list of regression, broken, incomplete, unmeasured, undecided, not_comparable, or never/,
    )
  })

  it('accepts mode check (guards only)', () => {
    expect(readInputs(reader({ mode: 'check' })).mode).toBe('check')
  })
})

describe('secretsInCommand', () => {
  it.each([
    ['vllm serve m --api-key sk-abcdef --port 8000', ['sk-abcdef']],
    ['HF_TOKEN=hf_xyz123 vllm serve m', ['hf_xyz123']],
    ['sglang --api-key=s3cr3t-key --tp 2', ['s3cr3t-key']],
    ["curl -H 'Authorization: Bearer tok_9999' http://x", ['tok_9999']],
    ['vllm serve org/model --tensor-parallel-size 4 --max-num-seqs 256', []],
  ])('finds the credentials in %j', (cmd, secrets) => {
    expect(secretsInCommand(cmd)).toEqual(secrets)
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
