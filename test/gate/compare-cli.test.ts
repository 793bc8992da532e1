import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Command } from 'commander'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { registerCompareCommand } from '../../src/cli/compare.js'
import { UsageError } from '../../src/errors.js'
import type { Baseline } from '../../src/gate/types.js'
import { readBaseline, writeBaseline } from '../../src/store/baseline.js'
import { appendRefresh } from '../../src/gate/refresh.js'
import { readResultFile, writeResultFile } from '../../src/store/result-file.js'
import { realStages } from '../../src/github/real-deps.js'
import { compareToBaseline } from '../../src/gate/compare.js'
import { optionsFromGateSettings } from '../../src/gate/settings.js'
import { dayResult, pipeDay } from './fixtures.js'

let dir: string
let printed: string
const savedExit = process.exitCode

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'servegate-compare-'))
  printed = ''
  process.exitCode = undefined
})
afterEach(async () => {
  process.exitCode = savedExit
  await rm(dir, { recursive: true, force: true })
})

async function compare(...args: string[]): Promise<number> {
  const program = new Command().exitOverride()
  registerCompareCommand(program, { print: (t) => void (printed += t) })
  await program.parseAsync(['compare', ...args], { from: 'user' })
  return Number(process.exitCode ?? 0)
}

async function files(factor: number, mutate?: (r: ReturnType<typeof dayResult>) => void): Promise<{ base: string; cand: string }> {
  let b: Baseline | null = null
  for (let d = 0; d < 10; d++) b = appendRefresh(b, dayResult(d), { name: 'gate' })
  const base = join(dir, 'baselines', 'gate.json')
  await writeBaseline(base, b!)
  const r = dayResult(10, factor)
  mutate?.(r)
  const cand = join(dir, 'cand.json')
  await writeResultFile(cand, r)
  return { base, cand }
}

describe('servegate compare', () => {
  it('exits 0 and prints PASS for an unchanged candidate', async () => {
    const { base, cand } = await files(1)
    expect(await compare(base, cand)).toBe(0)
    expect(printed).toMatch(/^servegate verdict: PASS/)
  })

  it('exits 1 on a regression and writes markdown and JSON naming the regressed metrics', async () => {
    const { base, cand } = await files(1.15)
    const md = join(dir, 'out', 'verdict.md')
    const json = join(dir, 'out', 'verdict.json')
    expect(await compare(base, cand, '--markdown', md, '--json', json)).toBe(1)
    expect(await readFile(md, 'utf8')).toMatch(/servegate verdict: REGRESSION[\s\S]*\*\*regression\*\* \| p95 ITL 4096×512 c=16/)
    const doc = JSON.parse(await readFile(json, 'utf8')) as { schema: string; verdict: string; regressions: string[] }
    expect(doc.schema).toBe('servegate.verdict/v1')
    expect(doc.verdict).toBe('regression')
    expect(doc.regressions).toContain('throughput at target 4096×512')
  })

  it('exits 2 when the GPU differs', async () => {
    const { base, cand } = await files(1, (r) => {
      r.env.gpu.names = ['NVIDIA H100', 'NVIDIA H100']
    })
    expect(await compare(base, cand)).toBe(2)
    expect(printed).toMatch(/NOT COMPARABLE/)
  })

  it("exits 1 on unmeasured: a host-spoiled run leaves one valid run of a one-refresh baseline's point", async () => {
    const { base, cand } = await files(1, (r) => {
      r.points[0]!.runs[0]!.validity = { valid: false, issues: [{ code: 'gpu_shared', detail: 'another process' }] }
      r.points[0]!.runs[1]!.validity = { valid: false, issues: [{ code: 'gpu_shared', detail: 'another process' }] }
    })
    expect(await compare(base, cand)).toBe(1)
    expect(printed).toMatch(/UNMEASURED[\s\S]*unmeasured: another process shared the GPU \(gpu_shared\)/)
    // Leaving unmeasured out of fail-on exits 0, with the warning that nothing was certified.
    printed = ''
    expect(await compare(base, cand, '--fail-on', 'regression,broken')).toBe(0)
    expect(printed).toMatch(/fail-on leaves out incomplete, unmeasured, not_comparable/)
    expect(printed).toMatch(/unmeasured exits 0 because --fail-on leaves it out, but this is not a pass/)
    // The retired name still works, read as unmeasured and undecided, with a warning.
    printed = ''
    expect(await compare(base, cand, '--fail-on', 'regression,inconclusive')).toBe(1)
    expect(printed).toMatch(/"inconclusive" is deprecated and read as "unmeasured,undecided"/)
  })

  it("applies a config file's gate settings exactly as the Action's compare stage does", async () => {
    // +8 %: beyond the default 5 % bar, inside the config's 10 % (a tolerance whose MDC stays under
    // gate.max_mdc_pct: with 50 % every row would be blind, so undecided).
    const { base, cand } = await files(1.08)
    const cfgPath = join(dir, 'servegate.yaml')
    await writeFile(
      cfgPath,
      'server:\n  base_url: http://127.0.0.1:8000\n  api_key_env: SERVEGATE_TEST_UNSET_KEY\ngate:\n  tolerance_pct: {itl: 10, throughput: 10}\n',
    )
    // What the Action's real stages return for the same two files and config.
    const stages = realStages
    const file = await stages.loadConfigFile(cfgPath)
    const cfg = stages.resolveConfig({ file, filePath: cfgPath, flags: {}, env: { SERVEGATE_TEST_UNSET_KEY: 'k' } })
    const action = stages.compareToBaseline(await stages.readBaseline(base), await readResultFile(cand), cfg)
    expect(action).toEqual(compareToBaseline(await readBaseline(base), await readResultFile(cand), optionsFromGateSettings(cfg.gate)))
    expect(action.verdict).toBe('pass')
    const json = join(dir, 'v.json')
    expect(await compare(base, cand, '--config', cfgPath, '--json', json)).toBe(0)
    expect((JSON.parse(await readFile(json, 'utf8')) as { verdict: string }).verdict).toBe(action.verdict)
    // Without the config the default 5 % tolerance fails it.
    expect(await compare(base, cand)).toBe(1)
  })

  it('exits 1 on a broken candidate, and warns when --fail-on lets it through', async () => {
    // Built through the summarizer: the server stops after 12 of 16 tokens at C = 4.
    let b: Baseline | null = null
    for (let d = 0; d < 3; d++) b = appendRefresh(b, pipeDay(d), { name: 'gate' })
    const base = join(dir, 'pipe-base.json')
    const cand = join(dir, 'pipe-cand.json')
    await writeBaseline(base, b!)
    await writeResultFile(cand, pipeDay(5, 1, { run: (c) => (c === 4 ? { outTokens: 12 } : {}) }))
    expect(await compare(base, cand)).toBe(1)
    expect(printed).toMatch(/^servegate verdict: BROKEN/)
    printed = ''
    expect(await compare(base, cand, '--fail-on', 'never')).toBe(0)
    expect(printed).toMatch(/Warning: fail-on leaves out broken, incomplete, unmeasured, not_comparable/)
    expect(printed).toMatch(/broken exits 0 because --fail-on leaves it out, but this is not a pass/)
  })

  it('accepts a result file as a one-refresh baseline', async () => {
    const base = join(dir, 'base-result.json')
    const cand = join(dir, 'cand.json')
    await writeResultFile(base, dayResult(0))
    await writeResultFile(cand, dayResult(1, 1.3))
    expect(await compare(base, cand)).toBe(1)
  })

  it('raises a usage error for a corrupt baseline, a wrong schema or a bad flag', async () => {
    const { base, cand } = await files(1)
    await writeFile(join(dir, 'cut.json'), (await readFile(base, 'utf8')).slice(0, 300))
    await expect(compare(join(dir, 'cut.json'), cand)).rejects.toThrow(/ends early \(truncated/)
    await writeFile(join(dir, 'other.json'), '{"schema":"something/v9"}')
    await expect(compare(join(dir, 'other.json'), cand)).rejects.toThrow(UsageError)
    await expect(compare(join(dir, 'other.json'), cand)).rejects.toThrow(/neither a servegate baseline nor a result/)
    await expect(compare(base, base)).rejects.toThrow(/is not a servegate result/)
    await expect(compare(base, cand, '--fail-on', 'maybe')).rejects.toThrow(/--fail-on "maybe": "maybe" is not a verdict; expected a comma-separated list of/)
  })
})
