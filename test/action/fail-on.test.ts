import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { run } from '../../src/action.js'
import { compareStarts } from '../../src/gate/seq-baseline.js'
import { stepOptions } from '../../src/gate/ladder.js'
import { gateExit, parseFailOn } from '../../src/gate/outcome.js'
import type { Baseline } from '../../src/gate/types.js'
import { optionsFromGateSettings } from '../../src/gate/settings.js'
import { readBaseline, writeBaseline } from '../../src/store/baseline.js'
import { appendRefresh } from '../../src/gate/refresh.js'
import { readResultFile, writeResultFile } from '../../src/store/result-file.js'
import type { ResultFile } from '../../src/types.js'
import { dayResult, makeResult, wiggle } from '../gate/fixtures.js'
import { fakeDeps } from './fake-deps.js'

// The step's outcome follows the same table as `servegate compare`'s exit code
// (gateExit), on result and baseline files written the way the CLI writes them. The Action judges
// the candidate's one engine start sequentially (no reference, no serve command to start again).
let dir: string
const files: Record<string, string> = {}
let baselinePath: string

const saturated = (): ResultFile => {
  const rep = [0, 1, 2]
  return makeResult({
    itl: { 1: rep.map((r) => wiggle(10, 10, r)), 16: rep.map((r) => wiggle(20, 10, r)) },
    tput: rep.map((r) => wiggle(1000, 10, r)),
    run: () => ({ invalid: ['client_saturated'] }),
  })
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'servegate-failon-'))
  let b: Baseline | null = null
  for (let d = 0; d < 10; d++) b = appendRefresh(b, dayResult(d), { name: 'gate' })
  baselinePath = join(dir, 'baselines', 'gate.json')
  await writeBaseline(baselinePath, b!)
  const otherGpu = dayResult(10)
  otherGpu.env.gpu.names = ['NVIDIA H100', 'NVIDIA H100']
  const candidates: Record<string, ResultFile> = { pass: dayResult(10), regression: dayResult(10, 1.15), not_comparable: otherGpu, unmeasured: saturated() }
  for (const [name, r] of Object.entries(candidates)) {
    files[name] = join(dir, `${name}.json`)
    await writeResultFile(files[name]!, r)
  }
})
afterAll(() => rmSync(dir, { recursive: true, force: true }))

async function actionOn(candidate: string, failOn: string) {
  const { deps, rec } = fakeDeps({ existing: [baselinePath], inputs: { 'fail-on': failOn, baseline: baselinePath } })
  deps.stages.readBaseline = readBaseline
  deps.stages.compareStarts = (b, c, cfg, step, startOf) => compareStarts(b, c, { ...optionsFromGateSettings(cfg.gate), ...step }, startOf)
  deps.stages.runSweep = async (cfg) => ({ result: await readResultFile(candidate), resultPath: cfg.out })
  await run(deps)
  return rec
}

describe('the step outcome and fail-on', () => {
  const lists = ['', 'regression', 'never', 'inconclusive', 'regression,unmeasured', 'broken incomplete']
  for (const kind of ['pass', 'regression', 'not_comparable', 'unmeasured']) {
    it.each(lists)(`${kind} candidate with fail-on %j: the step fails exactly when compare's exit code is not 0`, async (failOn) => {
      const rec = await actionOn(files[kind]!, failOn)
      const step = stepOptions('baseline', { hasReference: false, canRestart: false, maxStarts: 1 })
      const verdict = compareStarts(await readBaseline(baselinePath), await readResultFile(files[kind]!), step, () => 0).verdict
      expect(verdict).toBe(kind)
      expect(rec.outputs.get('verdict')).toBe(kind)
      expect(rec.failed.length > 0).toBe(gateExit(verdict, parseFailOn(failOn, 'fail-on')) !== 0)
    })
  }

  it('fails unmeasured by default, naming the busy host, with a titled warning', async () => {
    const rec = await actionOn(files['unmeasured']!, '')
    expect(rec.failed[0]).toMatch(/^servegate gate tripped: verdict unmeasured \(fail-on: .*\): unmeasured: a busy host/)
    expect(rec.warningTitles).toContain('servegate: unmeasured — not a pass')
  })

  it('raises the titled warning even when fail-on lets unmeasured through', async () => {
    const rec = await actionOn(files['unmeasured']!, 'regression')
    expect(rec.failed).toEqual([])
    expect(rec.warningTitles).toContain('servegate: unmeasured — not a pass')
  })

  it('warns that the retired inconclusive reads as unmeasured and undecided', async () => {
    const rec = await actionOn(files['pass']!, 'regression,inconclusive')
    expect(rec.warningTitles).toContain('servegate: fail-on names a retired verdict')
  })

  it('fails not_comparable by default, with a titled warning', async () => {
    const rec = await actionOn(files['not_comparable']!, '')
    expect(rec.failed[0]).toMatch(
      /^servegate gate tripped: verdict not_comparable \(fail-on: regression,broken,incomplete,unmeasured,undecided,not_comparable\)/,
    )
    expect(rec.warningTitles).toContain('servegate: not comparable')
  })

  it('warns when fail-on lets a broken, incomplete or incomparable run pass', async () => {
    const rec = await actionOn(files['pass']!, 'regression')
    expect(rec.warnings.join('\n')).toContain('fail-on leaves out broken, incomplete, unmeasured, not_comparable')
  })
})
