import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { AbSchedule } from '../../src/plan/ab-schedule.js'
import { parseResult } from '../../src/store/result-file.js'
import { runCli } from '../sweep/cli-child.js'
import { expectHonest, judgedFromText } from '../fixtures/honest-verdict.js'
import { engineCommand, standInHost, type StandInHost } from './stand-in-gpus.js'

// `servegate ab` on a GPU host: a stand-in nvidia-smi lists every engine process still alive
// as a compute app of its GPU. Both sides are commands servegate starts, so a slot's runs
// would be gpu_shared if the other side stayed up on the same GPU. One point per slot, 4
// rounds, deterministic simulators: each job takes a few seconds.
// A run this shared host spoils is measured again in its slot (host_retries): a spoiled slot
// gives its round no increment, and the twice-as-slow job once ran 86 s instead of 40 for it.
const CONFIG = `target: {metric: tpot, percentile: 95, threshold_ms: 50}
sweeps:
  gate:
    shapes: [{input_len: 32, output_len: 12}]
    concurrency: [1]
    prompts_per_concurrency: 10
    warmup: 1
    host_retries: 2
`
const FAST = '--ttft-ms 5 --itl-ms 10'

describe('servegate ab on a GPU host with a stand-in nvidia-smi', () => {
  let dir: string
  let oneGpu: StandInHost
  const hosts: StandInHost[] = []

  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'servegate-ab-gpu-'))
    writeFileSync(join(dir, 'servegate.yml'), CONFIG)
    oneGpu = standInHost(1)
    hosts.push(oneGpu)
  })

  afterAll(() => {
    for (const h of hosts) h.cleanup()
    if (dir) rmSync(dir, { recursive: true, force: true })
  })

  /** One ab job on `host` (its nvidia-smi first on PATH); a job whose slot a saturated client spoiled is run again, once. */
  async function ab(host: StandInHost, name: string, a: string, b: string, extra: string[] = []) {
    const outDir = join(dir, name)
    const args = [
      'ab',
      '--a-serve',
      engineCommand(host, a),
      '--b-serve',
      engineCommand(host, b),
      '--rounds',
      '4',
      '--config',
      join(dir, 'servegate.yml'),
      '--out-dir',
      outDir,
      ...extra,
    ]
    const env = { ...process.env, CI: '1', PATH: host.path }
    let before = new Set(host.started())
    let r = await runCli(args, { env })
    if (/client_saturated/.test(r.stdout)) {
      before = new Set(host.started())
      r = await runCli(args, { env })
    }
    // The engines the (last) job started.
    const pids = host.started().filter((p) => !before.has(p))
    const engines = pids.length
    const schedule = (): AbSchedule => JSON.parse(readFileSync(join(outDir, 'schedule.json'), 'utf8')) as AbSchedule
    return { ...r, outDir, schedule, engines, pids }
  }

  /** No run of either side was spoiled by the other side's engine. */
  function expectNoSharing(outDir: string): void {
    for (const side of ['a', 'b']) {
      const res = parseResult(JSON.parse(readFileSync(join(outDir, `${side}.json`), 'utf8')), side)
      const codes = res.points.flatMap((p) => p.runs.flatMap((r) => r.validity.issues.map((i) => i.code)))
      expect(codes).not.toContain('gpu_shared')
      // The stand-in was sampled: each run saw the GPU with no foreign process on it.
      const samples = res.points.flatMap((p) => p.runs.flatMap((r) => r.gpu ?? []))
      expect(samples.length).toBeGreaterThan(0)
      expect(samples.every((s) => s.foreign_processes === 0 || s.foreign_processes === null)).toBe(true)
    }
  }

  let exclusive: Awaited<ReturnType<typeof ab>>

  it('starts each side only for its own slots by default: valid runs on one GPU, and a pass for the same engine, exit 0', async () => {
    exclusive = await ab(oneGpu, 'exclusive', FAST, FAST)
    const r = exclusive
    const j = judgedFromText(r.stdout)
    const v = expectHonest(j, ['pass', 'improvement', 'undecided'])
    // Undecided (rows still open after the job's rounds, e.g. a busy host's spread widening the design) fails like any verdict but a pass.
    expect(r.code, r.stdout + r.stderr).toBe(v === 'pass' || v === 'improvement' ? 0 : 1)
    expect(r.stdout).toContain("Mode: exclusive: the default; each side is started afresh for each of its slots and stopped before the other's.")
    expect(r.stdout).toMatch(/GPU-minutes: [\d.]+ \([\d.]+ wall minutes × 1 GPU\)/)
    expect(r.stdout + r.stderr).not.toContain('baseline refresh')
    expectNoSharing(r.outDir)
    expect(readFileSync(join(r.outDir, 'verdict.md'), 'utf8')).toContain('**Schedule**')
  }, 120_000)

  it('starts each side afresh for every slot: each round an independent draw of both engines', () => {
    const s = exclusive.schedule()
    expect(s.mode).toBe('exclusive')
    expect(s.order.slice(0, 4)).toEqual(['A', 'B', 'B', 'A'])
    expect(s.starts.map((x) => [x.side, x.slots])).toEqual(s.order.map((side, i) => [side, [i + 1]]))
    for (const x of s.starts) {
      expect(x.ready_s).toBeGreaterThan(0)
      expect(x.wall_s).toBeGreaterThanOrEqual(x.ready_s)
    }
    expect(exclusive.engines).toBe(s.order.length)
    expect(s.gpus).toBe(1)
    expect(s.gpu_minutes).toBeCloseTo(s.wall_minutes, 5)
    expect(exclusive.stdout).toMatch(/Engine starts \(\d+\): A for slot 1 \(ready after [\d.]+ s, up [\d.]+ s\); B for slot 2 /)
  })

  it('calls B, twice as slow, a regression blamed on B, exit 1', async () => {
    const r = await ab(oneGpu, 'slow', FAST, '--ttft-ms 5 --itl-ms 20', ['--max-rounds', '8'])
    expect(r.code, r.stdout + r.stderr).toBe(1)
    if (expectHonest(judgedFromText(r.stdout), 'regression') === 'regression') {
      // Twice as slow moves every gated row; whichever clears its bar at these few pairs names B.
      expect(r.stdout).toMatch(/B regressed: .*(p95 ITL 32×12 c=1|throughput at target 32×12)/)
    }
    expectNoSharing(r.outDir)
  }, 240_000)

  it('keeps both engines up with --resident when each side has a GPU of its own', async () => {
    const twoGpus = standInHost(2)
    hosts.push(twoGpus)
    const r = await ab(twoGpus, 'resident', FAST, FAST, ['--resident', '--a-gpus', '0', '--b-gpus', '1'])
    const j = judgedFromText(r.stdout)
    const v = expectHonest(j, ['pass', 'improvement', 'undecided'])
    // Undecided (rows still open after the job's rounds, e.g. a busy host's spread widening the design) fails like any verdict but a pass.
    expect(r.code, r.stdout + r.stderr).toBe(v === 'pass' || v === 'improvement' ? 0 : 1)
    expect(r.stdout).toContain('Mode: resident: --resident, A on GPUs 0, B on GPUs 1.')
    const s = r.schedule()
    expect(s.starts.map((x) => [x.side, x.slots])).toEqual([
      ['A', [1, 4, 5, 8]],
      ['B', [2, 3, 6, 7]],
    ])
    expect(s.gpus).toBe(2)
    // Each engine got its GPU (CUDA_VISIBLE_DEVICES), and only that GPU counted for its runs.
    expect(r.pids.map((pid) => readFileSync(join(twoGpus.pids, String(pid)), 'utf8').trim()).sort()).toEqual(['0', '1'])
    expectNoSharing(r.outDir)
  }, 120_000)

  it('refuses --resident when both sides would share the one GPU, before any engine starts, exit 2', async () => {
    const host = standInHost(1)
    hosts.push(host)
    const r = await ab(host, 'refused', FAST, FAST, ['--resident'])
    expect(r.code, r.stdout + r.stderr).toBe(2)
    expect(r.stderr).toContain("servegate ab: --resident: A and B would share this host's GPU: give each side GPUs of its own with --a-gpus and --b-gpus")
    expect(host.started()).toEqual([])
    const overlap = await ab(host, 'refused2', FAST, FAST, ['--resident', '--a-gpus', '0', '--b-gpus', '0'])
    expect(overlap.code).toBe(2)
    expect(overlap.stderr).toContain('servegate ab: --resident: --a-gpus and --b-gpus both name GPU 0')
    expect(host.started()).toEqual([])
  }, 60_000)
})
