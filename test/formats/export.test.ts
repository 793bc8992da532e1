import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { spawnSync } from 'node:child_process'
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { startSim } from '../../src/sim/index.js'
import { resolveConfig } from '../../src/config/resolve.js'
import { runSweep } from '../../src/sweep/run-sweep.js'
import { readResultFile } from '../../src/store/result-file.js'
import { spread } from '../../src/analysis/spread.js'
import type { ResultFile } from '../../src/types.js'
import { cliArgs } from '../fixtures/servegate-cli.js'

const root = join(import.meta.dirname, '..', '..')

function cli(...args: string[]): { code: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, cliArgs(...args), { cwd: root, encoding: 'utf8' })
  return { code: r.status, stdout: r.stdout, stderr: r.stderr }
}

const median = (xs: number[]): number => spread(xs)!.median

// Issue 14's acceptance: the simulator's grid measured with --gpus 2, exported as InferenceX rows
// whose p95_intvty is 1000 / p95 TPOT and tput_per_gpu is total tok/s ÷ GPUs; and exported as
// vLLM files that import back to the same figures.
describe('servegate export', () => {
  let dir: string
  let result: ResultFile
  const path = (name: string): string => join(dir, name)

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'servegate-export-'))
    const sim = await startSim({ ttftMs: 20, itlMs: 8, seed: 3 })
    try {
      const cfg = resolveConfig({
        file: null,
        filePath: null,
        flags: {
          baseUrl: sim.url,
          inputLen: '32',
          outputLen: '12',
          concurrency: '1,4',
          repeats: '2',
          promptsPerConcurrency: '10',
          gpus: '2',
          out: path('sim.json'),
        },
        env: {},
      })
      await runSweep(cfg, { log: () => {} })
    } finally {
      await sim.close()
    }
    result = await readResultFile(path('sim.json'))
  }, 120_000)

  afterAll(() => {
    if (dir) rmSync(dir, { recursive: true, force: true })
  })

  it('records --gpus in the result: env.gpu.count and the config', () => {
    expect(result.env.gpu.count).toBe(2)
    expect((result.config['server'] as Record<string, unknown>)['gpus']).toBe(2)
  })

  it('writes one InferenceX row per point: p95_intvty = 1000 / p95 TPOT ms, tput_per_gpu = total tok/s ÷ 2, latencies in seconds', () => {
    const r = cli('export', path('sim.json'), '--format', 'inferencex', '--out-dir', path('ix'))
    expect(r.code, r.stderr).toBe(0)
    const rows = JSON.parse(readFileSync(path('ix/servegate-inferencex.json'), 'utf8')) as Array<Record<string, number | string | null>>
    // One row per point with a valid run (a busy host can spoil a run: its point then has no row).
    const usable = result.points.filter((p) => p.runs.some((x) => x.validity.valid)).map((p) => p.concurrency)
    expect(usable.length).toBeGreaterThan(0)
    expect(rows.map((x) => x['conc'])).toEqual(usable)
    for (const row of rows) {
      const point = result.points.find((p) => p.concurrency === row['conc'])!
      const valid = point.runs.filter((x) => x.validity.valid)
      const tpotP95Ms = median(valid.map((x) => x.tpot_ms.p95!))
      expect(row['p95_tpot']).toBeCloseTo(tpotP95Ms / 1000, 12)
      expect(row['p95_intvty']).toBeCloseTo(1000 / tpotP95Ms, 9)
      expect(row['p95_intvty'] as number).toBeCloseTo(1 / (row['p95_tpot'] as number), 9)
      expect(row['tput_per_gpu']).toBeCloseTo(median(valid.map((x) => x.total_token_throughput)) / 2, 9)
      expect(row['output_tput_per_gpu']).toBeCloseTo(median(valid.map((x) => x.output_throughput)) / 2, 9)
      expect(row['mean_ttft']).toBeCloseTo(median(valid.map((x) => x.ttft_ms.mean!)) / 1000, 12)
      expect([row['isl'], row['osl'], row['tp'], row['model'], row['framework']]).toEqual([32, 12, 2, result.env.model.id, result.env.engine.name])
      expect(row).toHaveProperty('hw')
      expect(row).toHaveProperty('image')
    }
  })

  it('writes vLLM files that import back to the same figures (round trip)', () => {
    const e = cli('export', path('sim.json'), '--format', 'vllm', '--out-dir', path('vllm'))
    expect(e.code, e.stderr).toBe(0)
    const names = readdirSync(path('vllm')).sort()
    expect(names).toHaveLength(4)
    const one = JSON.parse(readFileSync(join(path('vllm'), names[0]!), 'utf8')) as Record<string, unknown>
    expect(one).toMatchObject({ max_concurrency: 1, request_rate: 'inf', isl: 32, osl: 12 })
    expect(one['p95_itl_ms']).toBe(result.points[0]!.runs[0]!.itl_ms.p95)
    const i = cli('import', 'vllm', ...names.map((n) => join(path('vllm'), n)), '--out', path('back.json'), '--gpus', '2')
    expect(i.code, i.stderr).toBe(0)
    const back = JSON.parse(readFileSync(path('back.json'), 'utf8')) as ResultFile
    expect(back.points.map((p) => [p.input_len, p.output_len, p.concurrency, p.runs.length])).toEqual(
      result.points.map((p) => [p.input_len, p.output_len, p.concurrency, p.runs.length]),
    )
    for (const [pi, p] of result.points.entries()) {
      for (const [ri, run] of p.runs.entries()) {
        const got = back.points[pi]!.runs[ri]!
        for (const k of ['ttft_ms', 'tpot_ms', 'itl_ms', 'e2el_ms'] as const) expect(got[k]).toEqual(run[k])
        for (const k of ['output_throughput', 'total_token_throughput', 'request_throughput', 'duration_s', 'completed', 'failed', 'num_prompts'] as const)
          expect(got[k]).toBe(run[k])
        expect(got.tokens.server_usage).toBe(run.tokens.server_usage)
      }
    }
    expect(back.env.gpu.count).toBe(2)
  })

  it('leaves per-GPU fields null and warns in one line when the GPU count is unknown', () => {
    const names = readdirSync(path('vllm')).sort()
    expect(cli('import', 'vllm', ...names.map((n) => join(path('vllm'), n)), '--out', path('nogpus.json')).code).toBe(0)
    const r = cli('export', path('nogpus.json'), '--format', 'inferencex', '--out-dir', path('ix2'))
    expect(r.code, r.stderr).toBe(0)
    expect(r.stderr).toMatch(/does not record how many GPUs served the model: tput_per_gpu and the other per-GPU fields are null/)
    const rows = JSON.parse(readFileSync(path('ix2/servegate-inferencex.json'), 'utf8')) as Array<Record<string, unknown>>
    expect(rows.every((x) => x['tput_per_gpu'] === null && x['output_tput_per_gpu'] === null && x['tp'] === null)).toBe(true)
    expect(rows.every((x) => typeof x['p95_intvty'] === 'number')).toBe(true)
  })

  it('shows throughput per GPU and interactivity in the console report, and the target per GPU', () => {
    const r = cli('report', path('sim.json'))
    expect(r.code, r.stderr).toBe(0)
    expect(r.stdout).toMatch(/target p95 TPOT ≤ 50 ms ⇔ ≥ 20 tok\/s\/user/)
    expect(r.stdout).toMatch(/Output tok\/s per GPU\s+Tok\/s\/user at p95 TPOT/)
    expect(r.stdout).toMatch(/tok\/s per GPU over 2 GPUs/)
  })

  it('refuses an unknown --format with one line (exit 2)', () => {
    const r = cli('export', path('sim.json'), '--format', 'csv', '--out-dir', path('x'))
    expect(r.code).toBe(2)
    expect(r.stderr).toMatch(/--format "csv": expected one of vllm, inferencex/)
  })
})
