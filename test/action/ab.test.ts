import { describe, expect, it } from 'vitest'
import { run } from '../../src/action.js'
import { UsageError } from '../../src/errors.js'
import { CWD, FORK_PAYLOAD, fakeDeps, resolved, type FakeOptions } from './fake-deps.js'
import { env, result as resultFixture, verdict } from './fixtures.js'

const HEAD = '1a2b3c4d5e6f7a8b9c0d1a2b3c4d5e6f7a8b9c0d'
const PR = {
  pull_request: { number: 7, head: { repo: { full_name: 'acme/infer', fork: false }, sha: HEAD }, base: { repo: { full_name: 'acme/infer', fork: false } } },
}
const A_SERVE = 'vllm serve m --port {port} --api-key sk-referencesecret123'
const B_SERVE = 'vllm-next serve m --port {port}'
const ab = (o: FakeOptions = {}) =>
  fakeDeps({ payload: PR, ...o, inputs: { config: 'servegate.yml', mode: 'ab', 'a-serve': A_SERVE, 'b-serve': B_SERVE, ...o.inputs } })
const BASELINE = `${CWD}/baselines/gate.json`
const gate = (o: FakeOptions = {}) => fakeDeps({ existing: [BASELINE], payload: PR, ...o, inputs: { config: 'servegate.yml', ...o.inputs } })

describe('the Action in mode ab', () => {
  it('measures A (a-serve) and B (b-serve) with runAB, the rounds input and each side started for its own slots, the same sweep on both sides', async () => {
    // exclusive: true is the default now, still accepted.
    const { deps, rec } = ab({ inputs: { rounds: '4', exclusive: 'true' }, verdicts: [verdict('pass')] })
    await run(deps)
    expect(rec.abRuns).toHaveLength(1)
    const opts = rec.abRuns[0]!
    expect(opts.rounds).toBe(4)
    // Looks every two rounds up to max-rounds (default 32) unless the workflow says otherwise.
    expect(opts.maxRounds).toBe(32)
    expect(opts.resident).toBe(false)
    expect(opts.gpus).toEqual({})
    expect(opts.outDir).toBe(`${CWD}/servegate-result-ab`)
    // B's config is the run's (serve = b-serve); A's is resolved beside it with a-serve and nothing of B's server.
    const [bInput, aInput] = rec.resolveInputs
    expect(bInput?.flags.serve).toBe(B_SERVE)
    expect(aInput?.flags).toMatchObject({ serve: A_SERVE, sweep: 'gate' })
    expect(aInput?.flags.baseUrl).toBeUndefined()
    expect(rec.sweeps).toEqual([])
    expect(rec.failed).toEqual([])
    expect(rec.outputs.get('verdict')).toBe('pass')
  })

  it("passes resident and each side's GPUs (inputs resident, a-gpus, b-gpus) to runAB, naming the inputs in its messages", async () => {
    const { deps, rec } = ab({ inputs: { resident: 'true', 'a-gpus': '0,1', 'b-gpus': '2, 3' }, verdicts: [verdict('pass')] })
    await run(deps)
    const opts = rec.abRuns[0]!
    expect(opts.resident).toBe(true)
    expect(opts.gpus).toEqual({ A: ['0', '1'], B: ['2', '3'] })
    expect(opts.names?.aGpus).toBe('the input a-gpus')
    expect(rec.outputs.get('verdict')).toBe('pass')
  })

  it('posts "running" first, then the paired verdict, in one sticky comment of its own', async () => {
    const { deps, rec } = ab({ verdicts: [verdict('regression')] })
    const seen: string[] = []
    const runAB = deps.stages.runAB
    deps.stages.runAB = async (opts, d) => {
      seen.push(rec.comments[0]?.body ?? '')
      return runAB(opts, d)
    }
    await run(deps)
    expect(seen[0]).toContain('⏳ servegate: benchmark running')
    expect(seen[0]).toContain('4 alternating slots (A B, B A, …)')
    expect(rec.comments).toHaveLength(1)
    const body = rec.comments[0]!.body ?? ''
    expect(body.startsWith('<!-- servegate:gate-ab -->')).toBe(true)
    expect(body).toContain('❌ servegate: regression — sweep "gate" vs A (reference), paired slot by slot on this runner')
    expect(body).toContain('AB-VERDICT-TABLE(regression;')
    expect(body).toContain('A B B A')
    expect(rec.summary).toContain('AB-VERDICT-TABLE(regression;')
  })

  it('sets the outputs (B as result-path, A as a-result-path) and fails the step per fail-on', async () => {
    const { deps, rec } = ab({ verdicts: [verdict('regression')] })
    await run(deps)
    expect(rec.outputs.get('verdict')).toBe('regression')
    expect(JSON.parse(rec.outputs.get('regressions')!)).toEqual(['p95 ITL 128×32 c=16'])
    expect(rec.outputs.get('result-path')).toBe(`${CWD}/servegate-result-ab/b.json`)
    expect(rec.outputs.get('a-result-path')).toBe(`${CWD}/servegate-result-ab/a.json`)
    expect(rec.outputs.get('report-path')).toBe(`${CWD}/servegate-result-ab/report.md`)
    expect(rec.outputs.get('comment-id')).toBe(String(rec.comments[0]!.id))
    expect(rec.written.get(`${CWD}/servegate-result-ab/report.md`)).toContain('AB-VERDICT-TABLE(regression;')
    expect(rec.failed).toEqual(['servegate gate tripped: regression in p95 ITL 128×32 c=16'])
  })

  it('passes a regression when fail-on leaves it out, and fails a broken B by default', async () => {
    const lenient = ab({ inputs: { 'fail-on': 'broken' }, verdicts: [verdict('regression')] })
    await run(lenient.deps)
    expect(lenient.rec.failed).toEqual([])
    const broken = ab({ verdicts: [verdict('broken')] })
    await run(broken.deps)
    expect(broken.rec.outputs.get('verdict')).toBe('broken')
    expect(broken.rec.failed[0]).toMatch(/^servegate gate tripped: verdict broken/)
  })

  it('takes B from serve / base-url when b-serve and b-base-url are empty', async () => {
    const { deps, rec } = ab({
      inputs: { 'b-serve': '', 'a-serve': '', 'a-base-url': 'http://127.0.0.1:9001', 'base-url': 'http://127.0.0.1:9002' },
      verdicts: [verdict('pass')],
    })
    await run(deps)
    expect(rec.resolveInputs[0]?.flags.baseUrl).toBe('http://127.0.0.1:9002')
    expect(rec.resolveInputs[1]?.flags.baseUrl).toBe('http://127.0.0.1:9001')
    expect(rec.abRuns).toHaveLength(1)
  })

  it('keeps the base URLs out of the comment unless show-host', async () => {
    const hidden = ab({ verdicts: [verdict('pass')] })
    await run(hidden.deps)
    expect(hidden.rec.comments[0]!.body ?? '').toContain('A at (not shown: show-host is false); B at (not shown: show-host is false)')
    const shown = ab({ inputs: { 'show-host': 'true' }, verdicts: [verdict('pass')] })
    await run(shown.deps)
    expect(shown.rec.comments[0]!.body ?? '').toContain('A at http://127.0.0.1:8000')
  })

  it('rejects A given twice or not at all, and a bad rounds value, before anything runs', async () => {
    for (const [inputs, message] of [
      [{ 'a-base-url': 'http://127.0.0.1:9001' }, 'give exactly one of the inputs "a-serve" and "a-base-url"'],
      [{ 'a-serve': '' }, 'give exactly one of the inputs "a-serve" and "a-base-url"'],
      [{ rounds: '1' }, 'input "rounds": "1" is not allowed; expected a whole number of rounds from 2 to 100 (the first look needs a round of each order)'],
      [{ rounds: '0' }, 'input "rounds": "0" is not allowed; expected a whole number of rounds from 2'],
      [{ 'max-rounds': 'many' }, 'input "max-rounds": "many" is not allowed; expected a whole number of rounds from 2 to 100, no smaller than rounds'],
      [{ 'a-gpus': '0,x' }, 'input "a-gpus": "0,x": expected GPU indices or UUIDs separated by commas, e.g. 0,1'],
      [{ resident: 'true', exclusive: 'true' }, 'the inputs "resident" and "exclusive" are both true'],
    ] as const) {
      const { deps, rec } = ab({ inputs, verdicts: [verdict('pass')] })
      await run(deps)
      expect(rec.abRuns).toEqual([])
      expect(rec.outputs.get('verdict')).toBe('error')
      expect(rec.failed[0]).toContain(message)
    }
  })

  it('refuses a fork pull request on a self-hosted runner before starting either engine', async () => {
    const { deps, rec } = ab({ payload: FORK_PAYLOAD, verdicts: [verdict('pass')] })
    await run(deps)
    expect(rec.abRuns).toEqual([])
    expect(rec.outputs.get('verdict')).toBe('refused')
    expect(rec.comments[0]!.body ?? '').toContain('⛔ servegate: refused to run — no verdict')
  })

  it('masks the secrets of a-serve and b-serve, and keeps them out of an error comment', async () => {
    const secret = 'sk-referencesecret123'
    const { deps, rec } = ab({
      inputs: { 'b-serve': `${B_SERVE} --hf-token hf_abcdefghijklmnop` },
      abError: new UsageError(`A (the reference) failed: the server exited with status 1 before it was ready: ${A_SERVE}`),
    })
    await run(deps)
    expect(rec.secrets).toEqual(expect.arrayContaining([secret, 'hf_abcdefghijklmnop']))
    expect(rec.outputs.get('verdict')).toBe('error')
    const body = rec.comments.at(-1)!.body ?? ''
    expect(body).toContain('A (the reference) failed')
    expect(body).not.toContain(secret)
  })
})

describe('gate mode with a reference serve command', () => {
  // The reference is the ladder's last step: the candidate is swept and judged against the stored baseline
  // first, and only a verdict that baseline cannot settle (a regression here) climbs to A/B.
  it('re-measures the reference (input reference-serve) beside the candidate when the baseline shows a regression, and decides A/B, saying so', async () => {
    const { deps, rec } = gate({ inputs: { serve: B_SERVE, 'reference-serve': A_SERVE, rounds: '4' }, verdicts: [verdict('regression'), verdict('pass')] })
    await run(deps)
    expect(rec.sweeps).toHaveLength(1)
    expect(rec.info).toContain(
      'servegate: escalating to A/B with the reference engine: the stored baseline shows a regression (p95 ITL 128×32 c=16), confirmed side by side before the PR is blamed.',
    )
    expect(rec.abRuns).toHaveLength(1)
    expect(rec.abRuns[0]!.rounds).toBe(4)
    expect(rec.resolveInputs[0]?.flags.serve).toBe(B_SERVE)
    expect(rec.resolveInputs[1]?.flags.serve).toBe(A_SERVE)
    expect(rec.secrets).toContain('sk-referencesecret123')
    expect(rec.comments).toHaveLength(1)
    const body = rec.comments[0]!.body ?? ''
    expect(body.startsWith('<!-- servegate:gate -->')).toBe(true)
    expect(body).toContain('the reference engine re-measured on this runner (A/B)')
    // The comment says why the ladder climbed, what the stored baseline said, and what the A/B cost.
    expect(body).toContain(
      '> Escalated to A/B: the stored baseline shows a regression (p95 ITL 128×32 c=16), confirmed side by side before the PR is blamed (against baselines/gate.json the verdict was regression).',
    )
    expect(body).toContain(
      'The reference engine (the input reference-serve) was measured beside the candidate on this runner, and the verdict is A/B from 4 paired rounds.',
    )
    expect(body).toContain('AB-VERDICT-TABLE(pass;')
    expect(rec.outputs.get('verdict')).toBe('pass')
    expect(rec.failed).toEqual([])
  })

  it("keeps the PR's one-run first sweep as the A/B's first B slot, and starts B afresh for it where resident", async () => {
    // The sweep as the Action runs it before an A/B: one run per point of the whole sweep.
    const oneRun = () => {
      const r = resultFixture()
      r.config = { repeats: 1 }
      for (const p of r.points) p.runs = p.runs.slice(0, 1)
      for (const t of r.at_target) t.runs = t.runs.slice(0, 1)
      return r
    }
    const sweep = { shapes: [{ input_len: 128, output_len: 32 }], concurrency: [1, 16] }
    for (const [inputs, reused] of [
      [{}, true],
      [{ resident: 'true' }, false],
    ] as const) {
      const { deps, rec } = gate({
        inputs: { serve: B_SERVE, 'reference-serve': A_SERVE, rounds: '4', ...inputs },
        verdicts: [verdict('undecided'), verdict('pass')],
        sweepResult: oneRun,
      })
      deps.stages.loadConfigFile = async () => ({ sweeps: { gate: sweep } })
      await run(deps)
      expect(rec.sweeps.map((c) => c.repeats)).toEqual([1])
      expect(rec.abRuns[0]!.bFirst !== undefined).toBe(reused)
      if (reused) expect(rec.abRuns[0]!.bFirst!.points.map((p) => p.runs.length)).toEqual([1, 1])
      expect(rec.summary.includes("The PR's first sweep (one run per point, an engine start of its own) is the A/B's first B slot")).toBe(reused)
    }
    // A first sweep of three runs per point is no slot: the A/B starts B for every slot.
    const { deps, rec } = gate({ inputs: { serve: B_SERVE, 'reference-serve': A_SERVE, rounds: '4' }, verdicts: [verdict('undecided'), verdict('pass')] })
    await run(deps)
    expect(rec.abRuns[0]!.bFirst).toBeUndefined()
  })

  it('decides on the stored baseline alone when it passes: the reference is never started', async () => {
    const { deps, rec } = gate({ inputs: { serve: B_SERVE, 'reference-serve': A_SERVE, rounds: '4' }, verdicts: [verdict('pass')] })
    await run(deps)
    expect(rec.sweeps).toHaveLength(1)
    expect(rec.abRuns).toEqual([])
    expect(rec.outputs.get('verdict')).toBe('pass')
    expect(rec.failed).toEqual([])
  })

  it('takes the reference from gate.reference_command of the config', async () => {
    const { deps, rec } = gate({ inputs: { serve: B_SERVE }, verdicts: [verdict('regression')] })
    const file = { sweeps: { gate: { shapes: [{ input_len: 128, output_len: 32 }], concurrency: [1, 16] } }, gate: { reference_command: A_SERVE } }
    deps.stages.loadConfigFile = async () => file
    deps.stages.resolveConfig = (input) => {
      rec.resolveInputs.push(input)
      const cfg = resolved(input.flags, {})
      return input.file?.gate?.reference_command === undefined ? cfg : { ...cfg, gate: { ...cfg.gate, referenceCommand: input.file.gate.reference_command } }
    }
    await run(deps)
    expect(rec.abRuns).toHaveLength(1)
    expect(rec.resolveInputs[1]?.flags.serve).toBe(A_SERVE)
    expect(rec.comments[0]!.body ?? '').toContain('(gate.reference_command)')
    expect(rec.failed).toHaveLength(1)
  })

  // The candidate's sweep on this runner shows the new driver too: the stored baseline cannot tell the PR from
  // the host (unmeasured), so the ladder climbs to A/B.
  it("opens the comment with the host change when B's host differs from the baseline's newest refresh", async () => {
    const newDriver = () => ({ ...resultFixture(), env: env({ gpu: { ...env().gpu, driver_version: '590.2' } }) })
    const hostChanged = verdict('unmeasured', { reasons: ['unmeasured: the host changed since the baseline (driver 580.1 → 590.2)'] })
    const { deps, rec } = gate({ inputs: { serve: B_SERVE, 'reference-serve': A_SERVE }, sweepResult: newDriver, verdicts: [hostChanged, verdict('pass')] })
    const runAB = deps.stages.runAB
    deps.stages.runAB = async (opts, d) => {
      const o = await runAB(opts, d)
      return { ...o, b: { ...o.b, env: env({ gpu: { ...o.b.env.gpu, driver_version: '590.2' } }) } }
    }
    await run(deps)
    const lines = (rec.comments[0]!.body ?? '').split('\n')
    expect(lines[1]).toMatch(
      /^\*\*⚠ Host changed: driver 580\.1 → 590\.2 since the baseline; the repository is unchanged\. The reference engine was re-measured on this runner/,
    )
  })
})

describe('gate mode against a baseline from another host', () => {
  it('says so in the first line of the comment and the summary, and warns', async () => {
    const { deps, rec } = gate({ verdicts: [verdict('regression')] })
    deps.stages.runSweep = async (cfg) => ({
      result: { ...resultFixture(), env: env({ gpu: { ...env().gpu, driver_version: '590.2', cuda_version: '13.1' } }) },
      resultPath: cfg.out,
    })
    await run(deps)
    const first =
      "**⚠ Host changed: driver 580.1 → 590.2; CUDA 13.0 → 13.1 since the baseline; the repository is unchanged. The pull request may not be the cause: a change may be the host's.**"
    expect((rec.comments[0]!.body ?? '').split('\n')[1]).toBe(first)
    expect((rec.comments[0]!.body ?? '').split('\n')[3]).toMatch(/^### ❌ servegate: regression/)
    expect(rec.summary.split('\n')[0]).toBe(first)
    expect(rec.warningTitles).toContain('servegate: the host changed since the baseline')
    expect(rec.abRuns).toEqual([])
  })

  it('adds no such line when the host is the same', async () => {
    const { deps, rec } = gate({ verdicts: [verdict('pass')] })
    await run(deps)
    expect(rec.comments[0]!.body ?? '').not.toContain('Host changed')
    expect((rec.comments[0]!.body ?? '').split('\n')[1]).toMatch(/^### ✅ servegate: pass/)
  })
})

describe('mode check before a gate that re-measures its reference', () => {
  const withBase = { pull_request: { ...PR.pull_request, base: { ref: 'main', sha: 'abc123', repo: { full_name: 'acme/infer', fork: false } } } }
  const check = (file: Record<string, unknown>) => {
    const { deps, rec } = fakeDeps({ payload: withBase, inputs: { mode: 'check', config: 'servegate.yml' } })
    deps.stages.loadConfigFile = async () => file
    deps.stages.parseConfigText = () => file
    deps.stages.resolveConfig = (input) => {
      const cfg = resolved(input.flags, {})
      const ref = (input.file?.gate as { reference_command?: string } | undefined)?.reference_command
      return ref === undefined ? cfg : { ...cfg, gate: { ...cfg.gate, referenceCommand: ref } }
    }
    // The base branch has the config but no baseline.
    deps.git = async (args) => {
      rec.git.push([...args])
      if (args[0] === 'show' && String(args[1]).includes('baselines/'))
        return { code: 128, stdout: '', stderr: "fatal: path 'baselines/gate.json' does not exist in 'abc123'" }
      return { code: 0, stdout: '', stderr: '' }
    }
    return { deps, rec }
  }

  it('needs no baseline when the config names a reference command', async () => {
    const { deps, rec } = check({ sweeps: { gate: { shapes: [{ input_len: 128, output_len: 32 }], concurrency: [1] } }, gate: { reference_command: A_SERVE } })
    await run(deps)
    expect(rec.failed).toEqual([])
    expect(rec.outputs.get('verdict')).toBe('checked')
  })

  it('still needs one without it', async () => {
    const { deps, rec } = check({ sweeps: { gate: { shapes: [{ input_len: 128, output_len: 32 }], concurrency: [1] } } })
    await run(deps)
    expect(rec.outputs.get('verdict')).toBe('error')
    expect(rec.failed[0]).toContain('there is no baseline at baselines/gate.json')
  })
})
