import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { startSim, type SimHandle } from '../../src/sim/index.js'
import { parseResult } from '../../src/store/result-file.js'
import { HOST_CODES } from '../../src/analysis/validity.js'
import type { ResultFile, RunResult } from '../../src/types.js'
import { runCli, runExitFor } from './cli-child.js'

// Sweep `host_retries` / `--host-retries`: a run that only the host spoiled is measured again at
// once, with prompts of its own, and the kept run lists the discarded attempt. The host here is a
// stand-in nvidia-smi that shows a second process on the GPU for its first `spoiled` answers to
// the compute-apps query, and one process (the server) after that (counted with shell builtins
// alone: the child's PATH holds only the stand-in). The GPU sampler asks as each
// run's measured window opens, so with spoiled = 1 exactly the first attempt of the first run sees
// the GPU shared (gpu_shared), whatever the host's load.

/** A stand-in nvidia-smi (one idle-clocked H100 at full clocks) in a folder of its own; `spoiled`: compute-apps answers showing a second process. */
function shareGpuAtFirst(spoiled: number): { dir: string; cleanup(): void } {
  const dir = mkdtempSync(join(tmpdir(), 'servegate-host-retry-'))
  const reasons = Array(8).fill('Not Active').join(', ')
  const script = `#!/bin/sh
case "$*" in
  *--query-compute-apps*)
    n=0; [ -f "${dir}/asked" ] && read n < "${dir}/asked"
    echo $((n + 1)) > "${dir}/asked"
    if [ "$n" -lt ${spoiled} ]; then printf '%s\\n' 'GPU-aaa, 111, python3' 'GPU-aaa, 222, stress'; else printf '%s\\n' 'GPU-aaa, 111, python3'; fi ;;
  *clocks_event_reasons.gpu_idle*)
    printf '%s\\n' '0, GPU-aaa, NVIDIA H100 80GB HBM3, 90, 1980, 1980, 500.00, 60, ${reasons}' ;;
  *--query-gpu=index,name,driver_version*)
    printf '%s\\n' '0, NVIDIA H100 80GB HBM3, 550.54.15, 1980, 1980, 2619, 2619' ;;
  "")
    printf '%s\\n' '| NVIDIA-SMI 550.54.15      Driver Version: 550.54.15      CUDA Version: 12.4     |' ;;
  *)
    echo 'Field is not a valid field to query.' >&2; exit 2 ;;
esac
`
  const file = join(dir, 'nvidia-smi')
  writeFileSync(file, script)
  chmodSync(file, 0o755)
  return { dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) }
}

const codes = (run: { validity?: RunResult['validity']; issues?: RunResult['validity']['issues'] }): string[] =>
  (run.issues ?? run.validity?.issues ?? []).map((i) => i.code)

describe('a run the host spoiled, measured again (host_retries)', () => {
  let sim: SimHandle
  let dir: string
  const fakes: Array<{ cleanup(): void }> = []

  /** One sweep at C = 2 (24 requests a run, valid on a quiet host) with the stand-in nvidia-smi on PATH. */
  const sweep = async (name: string, spoiled: number, more: string[]) => {
    const smi = shareGpuAtFirst(spoiled)
    fakes.push(smi)
    const out = join(dir, `${name}.json`)
    const r = await runCli(
      ['run', '--base-url', sim.url, '--input-len', '32', '--output-len', '16', '--concurrency', '2', '--prompts-per-concurrency', '12', '--out', out, ...more],
      { env: { PATH: smi.dir, CI: '1' } },
    )
    // Read through the result schema: what it drops would be lost to every later reader (compare, ab's merge).
    const result = parseResult(JSON.parse(readFileSync(out, 'utf8')), out) as ResultFile
    expect(r.code, r.stderr).toBe(runExitFor(result))
    return { r, result, out }
  }

  beforeAll(async () => {
    sim = await startSim({ ttftMs: 20, itlMs: 5 })
    dir = mkdtempSync(join(tmpdir(), 'servegate-host-retries-'))
  })

  afterAll(async () => {
    await sim?.close()
    for (const f of fakes) f.cleanup()
    if (dir) rmSync(dir, { recursive: true, force: true })
  })

  it('measures the spoiled run again with fresh prompts, keeps the new attempt and records the discarded one', async () => {
    const { r, result, out } = await sweep('retried', 1, ['--repeats', '2', '--host-retries', '2'])
    expect(result.config['host_retries']).toBe(2)
    const [first, second] = result.points[0]!.runs
    // The first attempt saw the GPU shared: discarded, with its seed and issue. (A busy host may
    // also saturate the client of a later attempt: measured again too, never for gpu_shared.)
    const attempts = first!.discarded_attempts ?? []
    expect(attempts.length, JSON.stringify(attempts)).toBeGreaterThanOrEqual(1)
    const spoiled = attempts[0]!
    expect(codes(spoiled)).toContain('gpu_shared')
    expect(spoiled.issues.find((i) => i.code === 'gpu_shared')!.detail).toContain('had up to 1 other process')
    for (const a of attempts) for (const c of codes(a)) expect(HOST_CODES).toContain(c)
    for (const a of attempts.slice(1)) expect(codes(a)).toEqual(['client_saturated'])
    // Fresh prompts: each attempt a seed of its own, distinct from every other run's.
    const seeds = [...attempts.map((a) => a.seed), first!.seed, second!.seed]
    expect(new Set(seeds).size).toBe(seeds.length)
    expect(Date.parse(spoiled.finished_at)).toBeLessThanOrEqual(Date.parse(first!.started_at))
    // The kept attempt had the GPU to itself.
    expect(first!.gpu!.every((g) => g.foreign_processes === 0)).toBe(true)
    expect(codes(first!)).not.toContain('gpu_shared')
    // The second repeat's first attempt was not spoiled by the stand-in (a busy host may still saturate the client, a host code too).
    for (const a of second!.discarded_attempts ?? []) for (const c of codes(a)) expect(HOST_CODES).toContain(c)
    expect(r.stderr).toMatch(
      /32 in \/ 16 out, C=2, repeat 1: the host spoiled the run \([a-z_, ]*gpu_shared[a-z_, ]*\); measuring it again with fresh prompts \(host_retries: attempt 2 of at most 3\)\./,
    )
    // The report says how many runs were measured again, and why.
    const rep = await runCli(['report', out])
    expect(rep.code, rep.stderr).toBe(0)
    expect(rep.stdout).toMatch(/Measured again \(host_retries\): \d+ runs? after the host spoiled an attempt \([a-z_ \d,]*gpu_shared \d[a-z_ \d,]*\)/)
  }, 120_000)

  it('keeps the last attempt, still invalid, when the host spoils every attempt it is allowed', async () => {
    const { r, result } = await sweep('exhausted', 1000, ['--repeats', '1', '--host-retries', '2'])
    const run = result.points[0]!.runs[0]!
    expect(run.discarded_attempts).toHaveLength(2)
    for (const a of run.discarded_attempts!) expect(codes(a)).toContain('gpu_shared')
    expect(run.validity.valid).toBe(false)
    expect(codes(run)).toContain('gpu_shared')
    expect(new Set([run.seed, ...run.discarded_attempts!.map((a) => a.seed)]).size).toBe(3)
    expect(r.code).toBe(1)
    expect(r.stderr).toContain('attempt 3 of at most 3')
    expect(r.stderr).not.toContain('attempt 4')
  }, 120_000)

  it('measures nothing again by default: the spoiled run stays invalid and lists no attempt', async () => {
    const { result } = await sweep('default', 1, ['--repeats', '1'])
    expect(result.config['host_retries']).toBe(0)
    const run = result.points[0]!.runs[0]!
    expect(codes(run)).toContain('gpu_shared')
    expect(run.validity.valid).toBe(false)
    expect(run.discarded_attempts).toBeUndefined()
  }, 60_000)

  it('refuses a count outside 0 to 10, naming the flag', async () => {
    const r = await runCli(['run', '--base-url', sim.url, '--host-retries', '11', '--out', join(dir, 'refused.json')])
    expect(r.code).toBe(2)
    expect(r.stderr).toContain('--host-retries "11": expected a count of attempts from 0 to 10')
  })
})
