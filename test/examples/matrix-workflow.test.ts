import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { parse } from 'yaml'
import { parseExpect } from '../../src/gate/aggregate.js'
import { type Contexts, evaluateIf, globMatches, interpolate } from './gh-expr.js'
import { runnerGroup, runnerLabels, type RunsOn } from './runner.js'

// The matrix example users copy: each configuration's job uploads its verdict record, and the
// final job downloads them by pattern and gives the pull request one verdict. Parsed and checked
// against sample contexts, so a rename in one place that breaks the hand-over shows here.

interface Step {
  name?: string
  id?: string
  if?: string
  uses?: string
  with?: Record<string, unknown>
}
interface Job {
  if?: string
  needs?: string | string[]
  'runs-on'?: RunsOn
  permissions?: Record<string, string> | string
  strategy?: { 'fail-fast'?: boolean; matrix?: { include?: Array<Record<string, string | number>> } }
  steps?: Step[]
}
const wf = parse(readFileSync(new URL('../../examples/servegate-matrix.yml', import.meta.url), 'utf8')) as {
  on: Record<string, unknown>
  permissions: unknown
  jobs: Record<string, Job>
}
const REPO = 'acme/serving'
const bench = wf.jobs['bench']!
const aggregate = wf.jobs['aggregate']!
const matrix = bench.strategy!.matrix!.include!
const labels = matrix.map((m) => String(m['label']))
const step = (job: Job, uses: string) => job.steps!.find((s) => s.uses?.startsWith(uses))!

function pr(headRepo = REPO): Contexts {
  return {
    github: {
      repository: REPO,
      event_name: 'pull_request',
      event: { pull_request: { number: 7, draft: false, head: { repo: { full_name: headRepo } }, base: { repo: { full_name: REPO } } } },
    },
  }
}

describe('examples/servegate-matrix.yml', () => {
  it('runs on pull requests, grants nothing at the top, and runs a matrix of at least two configurations on self-hosted runners', () => {
    expect(Object.keys(wf.on)).toEqual(['pull_request'])
    expect(wf.permissions).toEqual({})
    expect(labels.length).toBeGreaterThanOrEqual(2)
    expect(new Set(labels).size).toBe(labels.length)
    expect(bench.strategy!['fail-fast']).toBe(false)
    for (const m of matrix) {
      const runsOn = runnerLabels(bench['runs-on']).map((l) => interpolate(l, { ...pr(), matrix: m as Contexts[string] }))
      expect(runsOn).toEqual(['self-hosted', String(m['runner'])])
    }
  })

  it('gives least privilege: the GPU jobs read, only the aggregate job writes pull requests', () => {
    expect(bench.permissions).toEqual({ contents: 'read' })
    expect(aggregate.permissions).toEqual({ 'pull-requests': 'write' })
    const writers = Object.entries(wf.jobs).filter(([, j]) => typeof j.permissions === 'object' && Object.values(j.permissions).includes('write'))
    expect(writers.map(([id]) => id)).toEqual(['aggregate'])
  })

  it("labels each job's record with its matrix label and leaves the comment to the aggregate", () => {
    const sg = step(bench, 'servegate/servegate')
    expect(sg.with).toMatchObject({ mode: 'gate', label: '${{ matrix.label }}', comment: 'never' })
  })

  it('uploads every record, even after a failure or a cancel, under a name the download pattern matches', () => {
    const up = step(bench, 'actions/upload-artifact@v6')
    expect(evaluateIf(up.if, pr(), { status: 'failure' })).toBe(true)
    expect(evaluateIf(up.if, pr(), { status: 'cancelled' })).toBe(true)
    expect(String(up.with!['path'])).toContain('steps.servegate.outputs.record-path')
    expect(up.with!['overwrite']).toBe(true)
    const down = step(aggregate, 'actions/download-artifact@v7')
    expect(down.with).toMatchObject({ pattern: 'servegate-record-*', 'merge-multiple': false })
    const names = matrix.map((m) => interpolate(String(up.with!['name']), { ...pr(), matrix: m as Contexts[string] }))
    expect(names).toEqual(labels.map((l) => `servegate-record-${l}`))
    for (const n of names) expect(globMatches(String(down.with!['pattern']), n), n).toBe(true)
  })

  it('aggregates after the whole matrix, whatever happened to it, and expects exactly the matrix labels', () => {
    expect(([] as string[]).concat(aggregate.needs ?? [])).toEqual(['bench'])
    for (const status of ['success', 'failure', 'cancelled'] as const) expect(evaluateIf(aggregate.if, pr(), { status }), status).toBe(true)
    expect(evaluateIf(aggregate.if, pr('mallory/serving'))).toBe(false)
    expect(runnerLabels(aggregate['runs-on'])).not.toContain('self-hosted')
    const sg = step(aggregate, 'servegate/servegate')
    const down = step(aggregate, 'actions/download-artifact@v7')
    expect(sg.with).toMatchObject({ mode: 'aggregate', records: down.with!['path'] })
    expect(parseExpect(String(sg.with!['expect']), 'expect').sort()).toEqual([...labels].sort())
  })

  it("starts the GPU jobs only for a branch of this repository, and fails a fork's check on a GitHub-hosted runner", () => {
    expect(evaluateIf(bench.if, pr())).toBe(true)
    expect(evaluateIf(bench.if, pr('mallory/serving'))).toBe(false)
    expect(evaluateIf(wf.jobs['fork-guard']!.if, pr('mallory/serving'))).toBe(true)
    expect(wf.jobs['fork-guard']!['runs-on']).toBe('ubuntu-latest')
  })

  it('runs the GPU jobs in a runner group and an environment, each with a model cache of its own', () => {
    expect(runnerGroup(bench['runs-on'])).toMatch(/\S/)
    const job = bench as Job & { environment?: unknown; env?: Record<string, string> }
    expect(job.environment).toBeDefined()
    // The PR's engine never writes to the host's shared cache: HF_HOME is under the job's temp folder.
    expect(job.env?.['HF_HOME']).toMatch(/^\$\{\{ runner\.temp \}\}\//)
  })

  it('tells the reader to require the fork guard beside the aggregate job', () => {
    const text = readFileSync(new URL('../../examples/servegate-matrix.yml', import.meta.url), 'utf8')
    expect(text).toMatch(/BOTH "servegate matrix" \(the aggregate job\) and "servegate fork guard"\s+# required checks/)
    expect(wf.jobs['fork-guard']!).toBeDefined()
  })
})
