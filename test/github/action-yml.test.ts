import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { parse } from 'yaml'
import { VERDICT_PRECEDENCE } from '../../src/gate/outcome.js'
import { INPUT_NAMES, MODES, readInputs } from '../../src/github/inputs.js'

const action = parse(readFileSync(new URL('../../action.yml', import.meta.url), 'utf8')) as {
  description: string
  inputs: Record<string, { description: string; default?: string }>
  outputs: Record<string, { description: string }>
  runs: { using: string; main: string; post?: string; 'post-if'?: string }
}

describe('action.yml', () => {
  it('declares exactly the inputs the action reads, each with a description and a default', () => {
    expect(Object.keys(action.inputs)).toEqual([...INPUT_NAMES])
    for (const [name, spec] of Object.entries(action.inputs)) {
      expect(spec.description.length, name).toBeGreaterThan(10)
      expect(typeof spec.default, name).toBe('string')
    }
  })

  it('has defaults that validate, and the workflow token as the default token', () => {
    const defaults = Object.fromEntries(Object.entries(action.inputs).map(([k, v]) => [k, v.default ?? '']))
    expect(defaults['github-token']).toBe('${{ github.token }}')
    expect(readInputs((n) => defaults[n] ?? '')).toMatchObject({
      mode: 'gate',
      comment: 'always',
      failOn: ['regression', 'broken', 'incomplete', 'unmeasured', 'undecided', 'not_comparable'],
      allowFork: false,
    })
  })

  it('runs dist/index.js on node24, reports a killed main step from dist/post.js always, and declares the documented outputs', () => {
    expect(action.runs).toEqual({ using: 'node24', main: 'dist/index.js', post: 'dist/post.js', 'post-if': 'always()' })
    expect(Object.keys(action.outputs)).toEqual(
      expect.arrayContaining(['verdict', 'result-path', 'report-path', 'comment-id', 'regressions', 'issue-number', 'issue-url']),
    )
  })

  it("fits the Marketplace's description limit (under 125 characters)", () => {
    expect(action.description.length, action.description).toBeLessThan(125)
  })

  it('lists every verdict a comparison can give, and only those, in the verdict output', () => {
    const text = action.outputs['verdict']!.description
    for (const v of VERDICT_PRECEDENCE) expect(text, v).toMatch(new RegExp(`\\b${v}\\b`))
    expect(text).not.toMatch(/\binconclusive\b/)
  })

  it('documents every mode the action accepts, watch included', () => {
    for (const mode of MODES) expect(action.inputs['mode']!.description, mode).toMatch(new RegExp(`\\b${mode}:`))
    expect(readInputs((n) => (n === 'mode' ? 'watch' : ''))).toMatchObject({ mode: 'watch' })
  })
})
