import { copyFileSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { request } from 'undici'
import { describe, expect, it } from 'vitest'
import { BUILTIN_PROFILES, startSim, type SimProfile } from '../../src/sim/index.js'
import { readResult, runCli, runCount, runExitFor, startCli, waitFor } from './cli-child.js'

/** Requests the simulator is generating for right now (its vLLM-style running gauge). */
async function running(url: string): Promise<number> {
  const text = await (await request(`${url}/metrics`)).body.text()
  return Number(/^vllm:num_requests_running(?:\{[^}]*\})? (\S+)$/m.exec(text)?.[1] ?? NaN)
}

// Issue 11: "`kill -TERM` during a C=256 point: the process exits within 5 s, the result file
// holds the finished runs, and `--resume` completes the sweep." The point is cut, not waited for:
// at C=256 each request streams for ~9 s, so a sweep that let the point finish would take far
// longer. The batching simulator's step grows with the running requests (1 ms + 0.14 ms each), so
// the C=2 run before it, which only has to be on disk, takes ~0.3 s instead of another 10 s.
const PROFILE: SimProfile = { ...BUILTIN_PROFILES.default!, name: 'cancel-test', baseStepMs: 1, perSeqMs: 0.14, jitterCv: 0.01 }
describe('servegate run stopped with SIGTERM in the middle of a C=256 point', () => {
  it('stops the load within seconds, marks the cut run, and --resume completes the sweep', async () => {
    const sim = await startSim({ profile: PROFILE, seed: 3 })
    const dir = mkdtempSync(join(tmpdir(), 'servegate-sigterm-'))
    try {
      const out = join(dir, 'result.json')
      const args = [
        'run',
        '--base-url',
        sim.url,
        '--input-len',
        '16',
        '--output-len',
        '250',
        '--concurrency',
        '2,256',
        '--repeats',
        '1',
        '--prompts-per-concurrency',
        '1',
        '--warmup',
        '0',
        '--out',
        out,
      ]
      const run = startCli(args)
      // The C=2 run is on disk, then the C=256 point has its requests streaming.
      await waitFor(() => runCount(readResult(out)) === 1, run, 60_000)
      const loaded = Date.now()
      while ((await running(sim.url)) < 200 && Date.now() - loaded < 30_000) await new Promise((r) => setTimeout(r, 100))
      expect(await running(sim.url)).toBeGreaterThanOrEqual(200)

      const sent = Date.now()
      run.child.kill('SIGTERM')
      const r = await run.done
      const exitedAfterMs = Date.now() - sent
      expect(r.code, r.stderr).toBe(130)
      expect(exitedAfterMs).toBeLessThan(5000)
      expect(r.stderr).toContain('SIGTERM received: stopping the sweep')
      expect(r.stderr).toMatch(/continue with: servegate run --resume /)
      // The server is no longer loaded: every stream of the cut point was closed.
      await new Promise((res) => setTimeout(res, 500))
      expect(await running(sim.url)).toBe(0)

      const partial = readResult(out)!
      expect(runCount(partial)).toBe(1)
      expect(partial.points.map((p) => p.concurrency)).toEqual([2])
      expect(partial.interrupted).toMatchObject({
        reason: 'SIGTERM',
        cut_run: { input_len: 16, output_len: 250, concurrency: 256, repeat: 1 },
        finished_runs: 1,
        planned_runs: 2,
      })

      // The report says so, and leaves the unmeasured row pending. It reads a copy of the cut
      // file, so it runs beside the resumed sweep below instead of before it.
      const cut = join(dir, 'cut.json')
      copyFileSync(out, cut)
      const reported = runCli(['report', cut])
      const resumed = await runCli([...args, '--resume'])
      const report = await reported
      expect(report.code).toBe(0)
      expect(report.stdout).toContain('Interrupted (SIGTERM, ')
      expect(report.stdout).toContain('1 of 2 runs finished; the run in progress (16 in / 250 out, C=256, repeat 1) was dropped')
      expect(report.stdout).toMatch(/^ *256 +pending/m)

      const final = readResult(out)!
      // The C=2 run (2 requests) is too few to be valid; the C=256 run is unless a busy host starved the client.
      expect(resumed.code, resumed.stderr).toBe(runExitFor(final))
      expect(final.points.map((p) => [p.concurrency, p.runs.length])).toEqual([
        [2, 1],
        [256, 1],
      ])
      expect(final.points[1]!.runs[0]!.completed).toBe(256)
      expect(final.interrupted).toBeUndefined()
      // The finished run is kept as it was.
      expect(final.points[0]!.runs[0]).toEqual(partial.points[0]!.runs[0])
    } finally {
      await sim.close()
      rmSync(dir, { recursive: true, force: true })
    }
  }, 150_000)
})
