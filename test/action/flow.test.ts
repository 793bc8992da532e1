import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { run } from '../../src/action.js'
import { runPost } from '../../src/action-post.js'
import { STATE } from '../../src/github/run-status.js'
import { startSim, type SimHandle } from '../../src/sim/index.js'
import { readResultFile } from '../../src/store/result-file.js'
import { runSweep } from '../../src/sweep/run-sweep.js'
import type { ResultFile } from '../../src/types.js'
import { CWD, FORK_PAYLOAD, fakeDeps, resolved, type FakeOptions } from './fake-deps.js'
import { verdict } from './fixtures.js'

const HEAD = '1a2b3c4d5e6f7a8b9c0d1a2b3c4d5e6f7a8b9c0d'
const BASELINE = `${CWD}/baselines/gate.json`
const PR = {
  pull_request: { number: 7, head: { repo: { full_name: 'acme/infer', fork: false }, sha: HEAD }, base: { repo: { full_name: 'acme/infer', fork: false } } },
}
const gate = (o: FakeOptions = {}) => fakeDeps({ existing: [BASELINE], payload: PR, ...o, inputs: { config: 'servegate.yml', ...o.inputs } })

let dir: string
let sim: SimHandle
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'servegate-flow-'))
  // Deterministic: 5 ms + 60 × 20 ms ≈ 1.2 s per request, whatever the load.
  sim = await startSim({ ttftMs: 5, itlMs: 20 })
})
afterAll(async () => {
  await sim?.close()
  rmSync(dir, { recursive: true, force: true })
})

/** A loopback port nothing listens on. */
async function closedPort(): Promise<number> {
  const srv = createServer()
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r))
  const port = (srv.address() as { port: number }).port
  await new Promise((r) => srv.close(r))
  return port
}

describe('the sticky comment never keeps a stale verdict', () => {
  it('says "running" when the sweep starts, then the verdict, in one comment', async () => {
    const { deps, rec } = gate({ verdicts: [verdict('pass')] })
    const seen: string[] = []
    const sweep = deps.stages.runSweep
    deps.stages.runSweep = async (cfg, d) => {
      seen.push(rec.comments[0]?.body ?? '')
      return sweep(cfg, d)
    }
    await run(deps)
    expect(seen[0]).toContain('⏳ servegate: benchmark running')
    expect(seen[0]).toContain(`for ${HEAD.slice(0, 12)}`)
    expect(rec.comments).toHaveLength(1)
    expect(rec.comments[0]?.body).toContain('✅ servegate: pass')
  })

  it('after a pass, a run whose server is unreachable leaves the one comment saying the run failed, for the head commit', async () => {
    const first = gate({ verdicts: [verdict('pass')] })
    await run(first.deps)
    expect(first.rec.comments[0]?.body).toContain('✅ servegate: pass')

    const port = await closedPort()
    const next = '9f8e7d6c5b4a39281706f5e4d3c2b1a098765432'
    const { deps, rec } = gate({
      comments: first.rec.comments,
      payload: { pull_request: { ...PR.pull_request, head: { ...PR.pull_request.head, sha: next } } },
      verdicts: [verdict('pass')],
    })
    deps.stages.resolveConfig = (input) => ({ ...resolved(input.flags, { baseUrl: `http://127.0.0.1:${port}` }), out: join(dir, 'unreachable.json') })
    deps.stages.runSweep = runSweep
    await run(deps)

    expect(rec.outputs.get('verdict')).toBe('error')
    expect(rec.failed[0]).toMatch(/^servegate could not run: /)
    expect(rec.comments).toHaveLength(1)
    const body = rec.comments[0]!.body
    expect(body).toContain('🛑 servegate: the run failed — no verdict')
    expect(body).toContain(`for ${next.slice(0, 12)}`)
    expect(body).toContain(`127.0.0.1:${port}`)
    expect(body).toContain('Any earlier verdict in this comment no longer applies.')
    expect(body).not.toContain('✅')
  })

  it('a refused fork run replaces the comment with the refusal and sweeps nothing', async () => {
    const { deps, rec } = gate({ payload: FORK_PAYLOAD, verdicts: [verdict('pass')] })
    await run(deps)
    expect(rec.sweeps).toEqual([])
    expect(rec.outputs.get('verdict')).toBe('refused')
    expect(rec.comments[0]?.body).toContain('⛔ servegate: refused to run — no verdict')
  })

  it('a crash after the verdict was decided keeps the verdict output and still fails the step', async () => {
    const { deps, rec } = gate({ verdicts: [verdict('pass')] })
    deps.stages.renderMarkdownReport = () => {
      throw new TypeError('boom')
    }
    await run(deps)
    expect(rec.outputs.get('verdict')).toBe('pass')
    expect(rec.failed).toEqual(['servegate crashed: boom'])
  })
})

describe('mode: check', () => {
  it('runs the guards only: no sweep, no comment, verdict checked', async () => {
    const { deps, rec } = gate({ inputs: { mode: 'check' }, verdicts: [] })
    await run(deps)
    expect(rec.sweeps).toEqual([])
    expect(rec.commentCalls).toEqual([])
    expect(rec.failed).toEqual([])
    expect(rec.outputs.get('verdict')).toBe('checked')
    expect(rec.summary).toContain('checks passed')
  })

  it('refuses a fork before anything else', async () => {
    const { deps, rec } = gate({ inputs: { mode: 'check' }, payload: FORK_PAYLOAD, verdicts: [] })
    await run(deps)
    expect(rec.outputs.get('verdict')).toBe('refused')
    expect(rec.failed[0]).toMatch(/refuses to benchmark pull request #8/)
  })
})

describe('a cancelled run', () => {
  it('stops the real sweep, keeps the finished run, and says "cancelled — partial (1 of 2 runs)" in the summary and the comment', async () => {
    const abort = new AbortController()
    const { deps, rec } = gate({ verdicts: [verdict('pass')] })
    deps.signal = abort.signal
    const out = join(dir, 'cancelled.json')
    deps.stages.resolveConfig = (input) => ({
      ...resolved(input.flags, { baseUrl: sim.url }),
      shapes: [{ inputLen: 16, outputLen: 60 }],
      concurrency: [2, 4],
      repeats: 1,
      promptsPerConcurrency: 3,
      warmup: 0,
      out,
    })
    // The real sweep; the job is cancelled once the second point's streams are running.
    deps.stages.runSweep = (cfg, d) =>
      runSweep(cfg, {
        ...d,
        onPointStart: (_p, i) => {
          if (i !== 1) return
          sim.clearTraces()
          const poll = setInterval(() => {
            if (sim.traces().length < 4) return
            clearInterval(poll)
            abort.abort()
          }, 20)
        },
      })
    await run(deps)

    // Named before the sweep, so they were there when it was cut.
    expect(rec.outputs.get('result-path')).toBe(out)
    expect(rec.outputs.get('report-path')).toBe(join(dir, 'cancelled.md'))
    expect(rec.outputs.get('verdict')).toBe('cancelled')
    expect(rec.failed).toEqual(['servegate cancelled — partial (1 of 2 runs): no verdict'])
    expect(rec.summary).toContain('cancelled — partial (1 of 2 runs)')
    expect(rec.comments).toHaveLength(1)
    expect(rec.comments[0]?.body).toContain('🛑 servegate: cancelled — no verdict')
    expect(rec.comments[0]?.body).toContain('Partial: 1 of 2 planned runs were measured')
    expect(rec.state.get(STATE.phase)).toBe('published')
    const saved = JSON.parse(readFileSync(out, 'utf8')) as ResultFile
    expect(saved.points.map((p) => [p.concurrency, p.runs.length])).toEqual([[2, 1]])
  }, 60_000)
})

describe('the post step', () => {
  const killed = (resultPath: string) =>
    new Map([
      [STATE.phase, 'started'],
      [STATE.resultPath, resultPath],
      [STATE.planned, '6'],
      [STATE.pr, '7'],
      [STATE.commentKey, 'gate'],
    ])

  it('reports a main step killed mid-sweep: summary and comment with the runs saved', async () => {
    const { deps, rec } = gate({ state: killed(join(dir, 'cancelled.json')), existing: [join(dir, 'cancelled.json')], verdicts: [] })
    deps.stages.readResultFile = readResultFile
    await runPost(deps)
    expect(rec.summary).toContain('cancelled — partial (1 of 6 runs)')
    expect(rec.comments[0]?.body).toContain('🛑 servegate: cancelled — no verdict')
    expect(rec.comments[0]?.body).toContain(`for ${HEAD.slice(0, 12)}`)
    expect(rec.failed).toEqual(['servegate cancelled — partial (1 of 6 runs): no verdict'])
  })

  it('does nothing when the main step published, or never started a sweep', async () => {
    for (const phase of ['published', '']) {
      const state = killed('x')
      state.set(STATE.phase, phase)
      const { deps, rec } = gate({ state, verdicts: [] })
      await runPost(deps)
      expect(rec.summary).toBe('')
      expect(rec.commentCalls).toEqual([])
      expect(rec.failed).toEqual([])
    }
  })
})
