import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Command } from 'commander'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { registerBaselineCommand } from '../../src/cli/baseline.js'
import { readBaseline } from '../../src/store/baseline.js'
import { writeResultFile } from '../../src/store/result-file.js'
import { UsageError } from '../../src/errors.js'
import { dayResult, makeResult, pipeDay } from '../gate/fixtures.js'

let dir: string
let printed: string
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'servegate-bl-'))
  printed = ''
})
afterEach(async () => {
  await rm(dir, { recursive: true, force: true })
})

async function update(...args: string[]): Promise<void> {
  const program = new Command().exitOverride()
  registerBaselineCommand(program, { print: (t) => void (printed += t) })
  await program.parseAsync(['baseline', 'update', ...args], { from: 'user' })
}

describe('servegate baseline update', () => {
  it('creates the baseline named after its file, then appends and trims to --max-history', async () => {
    const into = join(dir, 'baselines', 'gate.json')
    for (let d = 0; d < 4; d++) {
      const r = join(dir, `r${d}.json`)
      await writeResultFile(r, dayResult(d))
      await update(r, '--into', into, '--max-history', '3', '--commit', `c${d}`)
    }
    const b = await readBaseline(into)
    expect(b.name).toBe('gate')
    expect(b.refreshes.map((x) => x.commit)).toEqual(['c1', 'c2', 'c3'])
    expect(printed).toMatch(/baseline gate: created a refresh/)
    expect(printed).toMatch(/appended a refresh .* 3 refreshes kept \(max 3\)/)
  })

  it('says which runs were left out as invalid', async () => {
    const r = join(dir, 'r.json')
    await writeResultFile(r, makeResult({ itl: { 1: [10, 10, 10] }, run: (_c, rep) => (rep === 0 ? { invalid: ['ramp_dominated'] } : {}) }))
    await update(r, '--into', join(dir, 'b.json'))
    expect(printed).toContain('left out of the statistics (invalid runs): 4096x512@c1 run 0 (ramp_dominated)')
  })

  it('refuses a result of another sweep and leaves the file untouched', async () => {
    const into = join(dir, 'b.json')
    await writeResultFile(join(dir, 'a.json'), dayResult(0))
    await update(join(dir, 'a.json'), '--into', into)
    const before = await readFile(into, 'utf8')
    await writeResultFile(join(dir, 'other.json'), makeResult({ itl: { 1: [10], 16: [20], 64: [40] } }))
    await expect(update(join(dir, 'other.json'), '--into', into)).rejects.toThrow(/different gated sweep/)
    expect(await readFile(into, 'utf8')).toBe(before)
  })

  it('refuses a result measured with other settings, naming the field, unless --reset', async () => {
    const into = join(dir, 'b.json')
    await writeResultFile(join(dir, 'a.json'), pipeDay(0))
    await update(join(dir, 'a.json'), '--into', into)
    const before = await readFile(into, 'utf8')
    await writeResultFile(join(dir, 'warm.json'), pipeDay(1, 1, { config: { warmup: 2 } }))
    const err = await update(join(dir, 'warm.json'), '--into', into).catch((e: unknown) => e)
    expect(err).toBeInstanceOf(UsageError)
    expect((err as Error).message).toMatch(/different gated sweep than baseline b:\n {2}warmup: baseline auto, result 2/)
    expect(await readFile(into, 'utf8')).toBe(before)
    await update(join(dir, 'warm.json'), '--into', into, '--reset')
    const b = await readBaseline(into)
    expect(b.refreshes).toHaveLength(1)
    expect(b.refreshes[0]!.fingerprint?.warmup).toBe(2)
    // Measured otherwise: the old refresh does not inform the new history's spread either.
    expect(b.noise_history).toBeUndefined()
  })

  it('refuses a refresh from another host (GPU, driver, CUDA) and leaves the file untouched; --reset starts a history on the new host', async () => {
    const into = join(dir, 'b.json')
    await writeResultFile(join(dir, 'a.json'), pipeDay(0))
    await update(join(dir, 'a.json'), '--into', into)
    const before = await readFile(into, 'utf8')
    const moved = pipeDay(1)
    moved.env.gpu = { ...moved.env.gpu, names: ['NVIDIA H100 80GB HBM3', 'NVIDIA H100 80GB HBM3'], driver_version: '575.51' }
    await writeResultFile(join(dir, 'h100.json'), moved)
    const err = await update(join(dir, 'h100.json'), '--into', into).catch((e: unknown) => e)
    expect(err).toBeInstanceOf(UsageError)
    expect((err as UsageError).message).toBe(
      `${join(dir, 'h100.json')} was measured on another host than baseline b's history: GPU 2 × NVIDIA B200 → 2 × NVIDIA H100 80GB HBM3; driver 570.1 → 575.51 (history: GPU NVIDIA B200 (count 2), driver 570.1, CUDA 12.8)`,
    )
    expect((err as UsageError).hint).toMatch(/--reset \(the Action: mode refresh with reset: true\)/)
    expect(await readFile(into, 'utf8')).toBe(before)
    await update(join(dir, 'h100.json'), '--into', into, '--reset')
    const b = await readBaseline(into)
    expect(b.refreshes).toHaveLength(1)
    expect(b.refreshes[0]!.env.gpu.names).toEqual(['NVIDIA H100 80GB HBM3', 'NVIDIA H100 80GB HBM3'])
    expect(printed).toMatch(/baseline b: created a refresh from .*h100\.json/)
  })

  it('keeps a start in the noise history with --noise-only, and the old refreshes for the spread after --reset', async () => {
    const into = join(dir, 'b.json')
    for (const d of [0, 1, 2]) await writeResultFile(join(dir, `d${d}.json`), pipeDay(d))
    await expect(update(join(dir, 'd0.json'), '--into', into, '--noise-only')).rejects.toThrow(
      `--noise-only: ${into} does not exist; the noise history joins a baseline's refreshes`,
    )
    await update(join(dir, 'd0.json'), '--into', into)
    await update(join(dir, 'd1.json'), '--into', into, '--noise-only', '--max-noise', '5')
    let b = await readBaseline(into)
    expect(b.refreshes).toHaveLength(1)
    expect(b.noise_history).toHaveLength(1)
    expect(printed).toContain(
      `baseline b: kept a start from ${join(dir, 'd1.json')} in the noise history (the spread only, not the centre); 1 start kept (max 5) in ${into}`,
    )
    await expect(update(join(dir, 'd2.json'), '--into', into, '--noise-only', '--reset')).rejects.toThrow('--noise-only and --reset: expected one of them')
    await expect(update(join(dir, 'd2.json'), '--into', into, '--max-noise', 'x')).rejects.toThrow('--max-noise "x": expected a whole number')
    await update(join(dir, 'd2.json'), '--into', into, '--reset')
    b = await readBaseline(into)
    expect(b.refreshes).toHaveLength(1)
    expect(b.noise_history).toHaveLength(2)
    expect(printed).toMatch(/created a refresh from .*d2\.json; 1 refresh kept \(max 10\) in .*; 2 earlier starts in the noise history/)
  })

  it('stores the gate settings the result was measured with, so a bare compare agrees with the Action', async () => {
    const into = join(dir, 'b.json')
    await writeResultFile(join(dir, 'a.json'), pipeDay(0, 1, { config: { gate: { tolerance_pct: { itl: 12, throughput: 8 }, max_failed_requests: 3 } } }))
    await update(join(dir, 'a.json'), '--into', into)
    const b = await readBaseline(into)
    expect(b.tolerances).toEqual({ itl_p95: 0.12, tput_at_target: 0.08, output_tput: 0.08 })
    expect(b.max_failed_requests).toBe(3)
    expect(printed).toMatch(/gate settings stored: tolerances itl_p95 12 %, tput_at_target 8 %, output_tput 8 %; at most 3 failed requests per run/)
  })

  it("stores a config file's gate settings with --config, over those the result recorded", async () => {
    const into = join(dir, 'b.json')
    const cfg = join(dir, 'servegate.yaml')
    await writeFile(cfg, 'gate:\n  tolerance_pct: {itl: 7}\n')
    await writeResultFile(join(dir, 'a.json'), pipeDay(0, 1, { config: { gate: { tolerance_pct: { itl: 12 }, max_failed_requests: 3 } } }))
    await update(join(dir, 'a.json'), '--into', into, '--config', cfg)
    const b = await readBaseline(into)
    expect(b.tolerances).toEqual({ itl_p95: 0.07 })
    expect(b.max_failed_requests).toBeUndefined()
  })

  it('starts a new history with --reset', async () => {
    const into = join(dir, 'b.json')
    await writeResultFile(join(dir, 'a.json'), dayResult(0))
    await update(join(dir, 'a.json'), '--into', into)
    await update(join(dir, 'a.json'), '--into', into)
    await update(join(dir, 'a.json'), '--into', into, '--reset')
    expect((await readBaseline(into)).refreshes).toHaveLength(1)
  })

  it('rejects a corrupt existing baseline and a bad --max-history', async () => {
    const into = join(dir, 'b.json')
    await writeFile(into, '{"schema": "servegate.baseline/v1", "name": ')
    await writeResultFile(join(dir, 'a.json'), dayResult(0))
    await expect(update(join(dir, 'a.json'), '--into', into)).rejects.toThrow(/b\.json is not valid JSON: the file ends early/)
    await expect(update(join(dir, 'a.json'), '--into', join(dir, 'c.json'), '--max-history', '0')).rejects.toThrow(
      /--max-history "0": expected a positive integer/,
    )
  })
})
