import { readdirSync, readFileSync } from 'node:fs'
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

// The first major of each action servegate's workflows, examples and docs use whose action.yml says
// `runs.using: node24` (GitHub moves every JavaScript action to Node 24; one on node20 warns, then breaks):
// checkout v5 and setup-node v5; upload-artifact v6; download-artifact v7 (its v5 and v6 still say
// node20); peter-evans/create-pull-request v8.
const NODE24_MAJOR: Record<string, number> = {
  'actions/checkout': 5,
  'actions/setup-node': 5,
  'actions/upload-artifact': 6,
  'actions/download-artifact': 7,
  'peter-evans/create-pull-request': 8,
}

describe('the actions servegate tells users to run', () => {
  const root = new URL('../../', import.meta.url)
  const files = [
    ...readdirSync(new URL('.github/workflows/', root)).map((f) => `.github/workflows/${f}`),
    ...readdirSync(new URL('examples/', root))
      .filter((f) => f.endsWith('.yml'))
      .map((f) => `examples/${f}`),
    ...readdirSync(new URL('docs/', root))
      .filter((f) => f.endsWith('.md'))
      .map((f) => `docs/${f}`),
    'README.md',
  ]
  const uses = files.flatMap((f) =>
    [...readFileSync(new URL(f, root), 'utf8').matchAll(/uses:\s*([\w.-]+\/[\w.-]+)@v(\d+)\b/g)].map((m) => ({ file: f, action: m[1]!, major: Number(m[2]) })),
  )

  it('are versions that run on Node 24, each a known one', () => {
    expect(uses.length).toBeGreaterThan(10)
    for (const u of uses.filter((x) => x.action !== 'servegate/servegate')) {
      const floor = NODE24_MAJOR[u.action]
      expect(floor, `${u.file}: ${u.action}: add its first Node 24 major to NODE24_MAJOR`).toBeDefined()
      expect(u.major, `${u.file}: ${u.action}@v${u.major} runs on Node 20; use v${floor}`).toBeGreaterThanOrEqual(floor!)
    }
  })
})
