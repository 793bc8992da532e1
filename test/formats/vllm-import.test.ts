import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { spawnSync } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { ResultFile } from '../../src/types.js'
import { detailedFile, numpyPercentile, summaryFile, withoutP95, type VllmJson } from './vllm-files.js'
import { cliArgs } from '../fixtures/servegate-cli.js'

const root = join(import.meta.dirname, '..', '..')

function cli(...args: string[]): { code: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, cliArgs(...args), { cwd: root, encoding: 'utf8' })
  return { code: r.status, stdout: r.stdout, stderr: r.stderr }
}

// Issue 14's acceptance: five hand-made vLLM result files (one concurrency with two repeats, one
// file missing p95) import to a result whose figures are the files' own; the one without p95 is refused.
describe('servegate import vllm', () => {
  let dir: string
  const path = (name: string): string => join(dir, name)
  const files: Record<string, VllmJson> = {}
  let result: ResultFile

  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'servegate-import-'))
    files['c1.json'] = summaryFile(1, 1, '20250301-100000')
    files['c4-a.json'] = summaryFile(4, 1.3, '20250301-100500')
    files['c4-b.json'] = summaryFile(4, 1.32, '20250301-101000')
    files['c16.json'] = detailedFile(16, 24, 64, '20250301-101500')
    files['no-p95.json'] = withoutP95(summaryFile(64, 2, '20250301-102000'))
    for (const [name, json] of Object.entries(files)) writeFileSync(path(name), JSON.stringify(json))
    const r = cli(
      'import',
      'vllm',
      path('c1.json'),
      path('c4-b.json'),
      path('c4-a.json'),
      path('c16.json'),
      '--out',
      path('imported.json'),
      '--input-len',
      '1024',
      '--output-len',
      '128',
    )
    expect(r.code, r.stderr).toBe(0)
    result = JSON.parse(readFileSync(path('imported.json'), 'utf8')) as ResultFile
  }, 60_000)

  afterAll(() => {
    if (dir) rmSync(dir, { recursive: true, force: true })
  })

  it('makes one point per concurrency and the files at one concurrency its repeats, in date order', () => {
    expect(result.points.map((p) => [p.concurrency, p.runs.length])).toEqual([
      [1, 1],
      [4, 2],
      [16, 1],
    ])
    const c4 = result.points[1]!
    expect(c4.runs.map((r) => r.repeat)).toEqual([1, 2])
    expect(c4.runs.map((r) => r.duration_s)).toEqual([20.5 * 1.3, 20.5 * 1.32])
  })

  it("keeps the files' own figures: latencies in ms, throughputs, counts", () => {
    for (const [name, run] of [
      ['c1.json', result.points[0]!.runs[0]!],
      ['c4-a.json', result.points[1]!.runs[0]!],
      ['c4-b.json', result.points[1]!.runs[1]!],
    ] as const) {
      const f = files[name]!
      for (const m of ['ttft', 'tpot', 'itl', 'e2el'] as const) {
        expect(run[`${m}_ms`], `${name} ${m}`).toEqual({ mean: f[`mean_${m}_ms`], p50: f[`p50_${m}_ms`], p95: f[`p95_${m}_ms`], p99: f[`p99_${m}_ms`] })
      }
      expect(run.output_throughput).toBe(f['output_throughput'])
      expect(run.total_token_throughput).toBe(f['total_token_throughput'])
      expect(run.request_throughput).toBe(f['request_throughput'])
      expect([run.completed, run.failed, run.num_prompts, run.duration_s]).toEqual([f['completed'], f['failed'], f['num_prompts'], f['duration']])
      expect(run.tokens.server_usage).toBe(f['total_output_tokens'])
    }
  })

  it('computes what a detailed file lacks from its per-request arrays as servegate summarises, keeping its own keys', () => {
    const run = result.points[2]!.runs[0]!
    const f = files['c16.json']!
    const ttfts = (f['ttfts'] as number[]).slice(0, 24).map((s) => s * 1000)
    expect(run.ttft_ms.mean).toBe(999) // the file's key wins
    expect(run.ttft_ms.p50).toBe(998)
    expect(run.ttft_ms.p95).toBeCloseTo(numpyPercentile(ttfts, 95), 2)
    const tpots = Array.from({ length: 24 }, (_, i) => 10 + (i % 3))
    expect(run.tpot_ms.p95).toBeCloseTo(numpyPercentile(tpots, 95), 2)
    expect(run.itl_ms.p99).toBeCloseTo(12, 2)
    expect(run.tokens.client_chunks).toBe(24 * 64)
    expect(run.tok_s_per_user).toBeCloseTo(1000 / 11, 3)
    expect([run.completed, run.failed]).toEqual([24, 1])
  })

  it('records what the files lack as unknown, never 0, and where the figures came from', () => {
    const run = result.points[0]!.runs[0]!
    expect([run.seed, run.warmup_requests, run.client, run.tokens.expected, run.tokens.client_chunks, run.tok_s_per_user]).toEqual([
      null,
      null,
      null,
      null,
      null,
      null,
    ])
    expect(result.env.engine).toEqual({ name: 'unknown', version: 'unknown' })
    expect(result.env.host.cpus).toBe('unknown')
    expect(result.env.gpu.count).toBe('unknown')
    expect(result.source?.tool).toBe('vllm bench serve')
    expect(result.source?.files).toHaveLength(4)
    expect(result.env.model.id).toBe('meta-llama/Llama-3.1-8B-Instruct')
  })

  it('never marks an imported run valid: checks_not_run names the checks the file could not support', () => {
    for (const run of result.points.flatMap((p) => p.runs)) {
      expect(run.validity.valid).toBe(false)
      const issue = run.validity.issues.find((i) => i.code === 'checks_not_run')
      expect(issue?.detail).toMatch(/client_saturated.*token_count_mismatch.*output_len_mismatch.*gpu_shared/)
    }
    // The checks it can make are made: the detailed file's failed request shows.
    expect(result.points[2]!.runs[0]!.validity.issues.map((i) => i.code)).toEqual(['requests_failed', 'checks_not_run'])
  })

  it('refuses a file without p95 keys or arrays with one line naming it and the flags to rerun with (exit 2)', () => {
    const r = cli('import', 'vllm', path('c1.json'), path('no-p95.json'), '--out', path('never.json'))
    expect(r.code).toBe(2)
    expect(r.stderr).toMatch(/no-p95\.json has no p95_tpot_ms \/ p95_itl_ms/)
    expect(r.stderr).toMatch(/--metric-percentiles 50,95,99/)
    expect(r.stderr).toMatch(/--percentile-metrics ttft,tpot,itl,e2el/)
    expect(r.stderr.split('\n').filter(Boolean)).toHaveLength(1)
  })

  it('refuses bad JSON and wrong types with one line naming the file and the key (exit 2)', () => {
    writeFileSync(path('broken.json'), '{"completed": 12,')
    const broken = cli('import', 'vllm', path('broken.json'), '--out', path('never.json'))
    expect(broken.code).toBe(2)
    expect(broken.stderr).toMatch(/broken\.json is not valid JSON/)
    writeFileSync(path('typed.json'), JSON.stringify({ ...files['c1.json'], completed: 'twelve' }))
    const typed = cli('import', 'vllm', path('typed.json'), '--out', path('never.json'))
    expect(typed.code).toBe(2)
    expect(typed.stderr).toMatch(/typed\.json: "completed" is "twelve", expected a non-negative integer/)
  })

  it('report prints the imported figures, marked as imported and unverified', () => {
    const r = cli('report', path('imported.json'))
    expect(r.code, r.stderr).toBe(0)
    expect(r.stdout).toMatch(/Imported from vllm bench serve .*not measured by servegate/)
    expect(r.stdout).toMatch(/\n\s+1 \[1\]\s+44\.1 \/ 63\.0\s+10\.3 \/ 14\.7\s+74\.9/)
    expect(r.stdout).not.toMatch(/\n\s+1\s+invalid/)
  })

  it('baseline update stores an imported result, and compare decides on it and says the figures are unverified', () => {
    // Two files at each concurrency pair up as repeats 1 and 2 of one curve.
    writeFileSync(path('c1-b.json'), JSON.stringify(summaryFile(1, 1.01, '20250301-100200')))
    const i = cli('import', 'vllm', path('c1.json'), path('c1-b.json'), path('c4-a.json'), path('c4-b.json'), '--out', path('paired.json'))
    expect(i.code, i.stderr).toBe(0)
    const b = cli('baseline', 'update', path('paired.json'), '--into', path('baseline.json'))
    expect(b.code, b.stderr).toBe(0)
    const baseline = JSON.parse(readFileSync(path('baseline.json'), 'utf8')) as { refreshes: Array<{ runs: Record<string, number[]> }> }
    expect(baseline.refreshes[0]!.runs['itl_p95@1024x128@c4']).toEqual([10.5 * 1.3 * 1.2, 10.5 * 1.32 * 1.2])
    // One refresh of two runs is blind at the default limit (undecided, exit 1); a team that accepts
    // an MDC of 30 % (gate.max_mdc_pct) gets a decision on it.
    const strict = cli('compare', path('baseline.json'), path('paired.json'))
    expect(strict.code, strict.stdout + strict.stderr).toBe(1)
    expect(strict.stdout).toMatch(/servegate verdict: UNDECIDED/)
    writeFileSync(path('lenient.yml'), 'gate:\n  max_mdc_pct: 30\n')
    const c = cli('compare', path('baseline.json'), path('paired.json'), '--config', path('lenient.yml'))
    expect(c.code, c.stdout + c.stderr).toBe(0)
    expect(c.stdout).toMatch(/servegate verdict: PASS/)
    expect(c.stdout).toMatch(/measured by vllm bench serve and imported.*unverified/)
  })

  it('calls an imported candidate with failed requests beyond the budget broken, not unverified', () => {
    const c = cli('compare', path('imported.json'), path('imported.json'))
    expect(c.code).toBe(1)
    expect(c.stdout).toMatch(/servegate verdict: BROKEN/)
    expect(c.stdout).toMatch(/1 request failed \(4\.0 %\), beyond the budget/)
    expect(c.stdout).not.toMatch(/invalid \(checks_not_run\)/)
  })
})
