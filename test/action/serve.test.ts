import { describe, expect, it } from 'vitest'
import { run, type ActionDeps } from '../../src/action.js'
import { ISOLATION_OFF_NOTE, ISOLATION_REMEDY } from '../../src/github/isolation-policy.js'
import { ServerExitedDuringSweep } from '../../src/serve/index.js'
import { CWD, PUSH_MAIN, fakeDeps, type FakeOptions } from './fake-deps.js'
import { result as resultFixture, verdict } from './fixtures.js'

const BASELINE = `${CWD}/baselines/gate.json`
const gate = (o: FakeOptions = {}) => fakeDeps({ existing: [BASELINE], ...o, inputs: { config: 'servegate.yml', ...o.inputs } })

/** What the sweep stage throws when the server it started dies mid-sweep. */
const died = (): ServerExitedDuringSweep =>
  new ServerExitedDuringSweep(
    'the server exited with status 1 during 128 in / 32 out, C=16, repeat 1; 1 of 6 runs finished and are saved in /ws/servegate-result.json',
    { code: 1, signal: null },
    ['CUDA error: out of memory'],
    '/ws/servegate-result.server.log',
    '/ws/servegate-result.json',
  )

describe('the Action with a server that dies mid-sweep', () => {
  it('passes the input `serve` to the config as --serve and masks the secrets it carries', async () => {
    const { deps, rec } = gate({ inputs: { serve: 'vllm serve m --port {port} --api-key sk-abcdefghijklmnop' }, verdicts: [verdict('pass')] })
    await run(deps)
    expect(rec.resolveInputs[0]?.flags.serve).toBe('vllm serve m --port {port} --api-key sk-abcdefghijklmnop')
    expect(rec.secrets).toContain('sk-abcdefghijklmnop')
  })

  it('judges the partial result in gate mode: the verdict decides (broken fails the step), the comment names the exit', async () => {
    const partial = resultFixture()
    const { deps, rec } = gate({ sweepError: died(), verdicts: [verdict('broken')] })
    const judged: unknown[] = []
    const compare = deps.stages.compareStarts
    deps.stages.readResultFile = async (path) => {
      expect(path).toBe('/ws/servegate-result.json')
      return partial
    }
    deps.stages.compareStarts = (b, r, c, step, startOf) => {
      judged.push(r)
      return compare(b, r, c, step, startOf)
    }
    await run(deps)
    expect(judged).toEqual([partial])
    expect(rec.outputs.get('verdict')).toBe('broken')
    expect(rec.failed).toHaveLength(1)
    expect(rec.errors.join('\n')).toContain('  | CUDA error: out of memory')
    expect(rec.comments.at(-1)?.body).toContain('The server exited with status 1 during 128 in / 32 out, C=16, repeat 1')
  })

  it('never refreshes a baseline from a sweep whose server died: the step fails as "could not run"', async () => {
    const { deps, rec } = gate({ inputs: { mode: 'refresh' }, sweepError: died(), verdicts: [verdict('pass')], eventName: 'push', payload: PUSH_MAIN })
    await run(deps)
    expect(rec.baselinesWritten).toEqual([])
    expect(rec.outputs.get('verdict')).toBe('error')
    expect(rec.failed[0]).toMatch(/^servegate could not run: the server exited with status 1 during/)
  })
})

describe("the Action and the engine's isolation", () => {
  const serve = { command: 'vllm serve m --port {port}', readyTimeoutS: 60, stopTimeoutS: 30, stopCommand: null, secrets: [] }
  /** The config resolves with a serve command (the fakes give none), and `server.isolation` when given. */
  const withServe = (deps: ActionDeps, isolation?: 'none'): void => {
    const resolve = deps.stages.resolveConfig
    deps.stages.resolveConfig = (input) => ({ ...resolve(input), serve, ...(isolation ? { isolation } : {}) })
  }

  it('refuses a pull request whose serve command this runner cannot isolate, before anything starts, in one line', async () => {
    const { deps, rec } = gate({ verdicts: [verdict('pass')] })
    withServe(deps)
    deps.isolation = async () => ({ ok: false, reason: 'util-linux unshare is not installed' })
    await run(deps)
    expect(rec.sweeps).toEqual([])
    expect(rec.outputs.get('verdict')).toBe('error')
    expect(rec.failed).toEqual([
      `servegate could not run: servegate refuses to start the commands of a pull_request run without a PID namespace of their own: this runner cannot make one (util-linux unshare is not installed), and there they could read the job's tokens from /proc (On the runner, ${ISOLATION_REMEDY}.)`,
    ])
  })

  it('names server.isolation: none in a warning and in the comment of the verdict, without probing the runner', async () => {
    const { deps, rec } = gate({ verdicts: [verdict('pass')] })
    withServe(deps, 'none')
    deps.isolation = async () => {
      throw new Error('the runner was probed')
    }
    await run(deps)
    expect(rec.sweeps).toHaveLength(1)
    expect(rec.outputs.get('verdict')).toBe('pass')
    expect(rec.warnings).toContain(`servegate: ${ISOLATION_OFF_NOTE}`)
    expect(rec.comments.at(-1)?.body).toContain('the commands this run started shared the runner')
  })
})
