import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { copyFileSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { startSim, type SimHandle } from '../../src/sim/index.js'
import { planKey } from '../../src/sweep/resume.js'
import type { ResultFile, RunResult } from '../../src/types.js'
import { readResult, runCli, runCount, runExitFor, startCli, waitFor } from './cli-child.js'
import { hostSpoiled } from '../fixtures/honest-verdict.js'

// Issue 4: "an interrupted sweep (Ctrl-C, crash, killed job) keeps its finished runs, and
// `servegate run --resume` continues where it stopped without redoing them". The sweep is
// killed with SIGKILL — no handler runs, so only what was already on disk survives.
const CONCURRENCY = [1, 4, 16]
const REPEATS = 2
const TOTAL = CONCURRENCY.length * REPEATS

describe('servegate run killed mid-sweep, then --resume', () => {
  let sim: SimHandle
  let dir: string
  let out: string
  let args: string[]
  let partial: ResultFile
  let killed: Awaited<ReturnType<typeof runCli>>
  let resumed: Awaited<ReturnType<typeof runCli>>
  let final: ResultFile
  /** Point keys the simulator served during the resumed sweep (from request ids `sg-KEY-m3`). */
  let servedOnResume: Set<string>

  const keysOf = (r: ResultFile): string[] => r.points.flatMap((p) => p.runs.map((x) => planKey(p.input_len, p.output_len, p.concurrency, x.repeat))).sort()
  const findRun = (r: ResultFile, key: string): RunResult | undefined =>
    r.points.flatMap((p) => p.runs.map((x) => [planKey(p.input_len, p.output_len, p.concurrency, x.repeat), x] as const)).find(([k]) => k === key)?.[1]

  beforeAll(async () => {
    // Prefix caching on, as vLLM has it by default: the run cut off by the kill already sent
    // its prompts, and a resumed run that sent them again would be served from cache.
    sim = await startSim({ profile: 'default', timeScale: 0.5, prefixCache: true })
    dir = mkdtempSync(join(tmpdir(), 'servegate-resume-'))
    out = join(dir, 'result.json')
    args = [
      'run',
      '--base-url',
      sim.url,
      '--input-len',
      '128',
      '--output-len',
      '16',
      '--concurrency',
      CONCURRENCY.join(','),
      '--repeats',
      String(REPEATS),
      '--prompts-per-concurrency',
      '4',
      '--out',
      out,
    ]

    const first = startCli(args)
    await waitFor(() => runCount(readResult(out)) >= 2, first, 60_000)
    first.child.kill('SIGKILL')
    killed = await first.done
    partial = readResult(out)!
    copyFileSync(out, join(dir, 'partial.json'))

    sim.clearTraces()
    resumed = await runCli([...args, '--resume'])
    final = readResult(out)!
    servedOnResume = new Set(sim.traces().flatMap((t) => /^sg-(.+)-[mw]\d+$/.exec(t.requestId)?.[1] ?? []))
  }, 120_000)

  afterAll(async () => {
    await sim?.close()
    if (dir) rmSync(dir, { recursive: true, force: true })
  })

  it('was killed mid-way, with at least 2 but not all runs on disk', () => {
    expect(killed.signal).toBe('SIGKILL')
    expect(runCount(partial)).toBeGreaterThanOrEqual(2)
    expect(runCount(partial)).toBeLessThan(TOTAL)
  })

  it('resumes, says how many runs it keeps, and exits 0 when a run of the sweep is valid (else 1)', () => {
    expect(resumed.stderr).not.toMatch(/crashed/)
    // Runs of 4 requests (C = 1) are too few to be valid; a busy host may spoil the others.
    expect(resumed.code, resumed.stderr).toBe(runExitFor(final))
    expect(resumed.stderr).toContain(`Resuming ${out}: ${runCount(partial)} of ${TOTAL} runs already measured.`)
    // The progress count starts from the kept runs and ends at the total.
    expect(resumed.stderr).toContain(`[${runCount(partial)}/${TOTAL}] already measured (resumed)`)
    expect(resumed.stderr).toContain(`[${runCount(partial) + 1}/${TOTAL}] running`)
    expect(resumed.stderr).toMatch(new RegExp(`\\[${TOTAL}/${TOTAL}\\] done`))
  })

  it('ends with every planned point measured exactly once', () => {
    const planned = CONCURRENCY.flatMap((c) => Array.from({ length: REPEATS }, (_, i) => planKey(128, 16, c, i + 1))).sort()
    expect(keysOf(final)).toEqual(planned)
    expect(runCount(final)).toBe(TOTAL)
    // Each repeat draws its curve through its valid runs. A run the host spoiled (client_saturated,
    // beside another test's load) can leave a repeat without a crossing: then that repeat is
    // missing, and only then.
    const drawn = final.at_target[0]!.runs.map((r) => r.repeat)
    if (hostSpoiled(final)) expect([[], [1], [2], [1, 2]]).toContainEqual(drawn)
    else expect(drawn).toEqual([1, 2])
  })

  it('keeps the finished runs byte for byte (figures, seed, started_at)', () => {
    for (const key of keysOf(partial)) expect(findRun(final, key)).toEqual(findRun(partial, key))
    expect(final.env.started_at).toBe(partial.env.started_at)
  })

  it('gives the re-measured runs prompts of their own: no prefix-cache hit, no seed reused', () => {
    const runs = final.points.flatMap((p) => p.runs)
    expect(runs.filter((r) => r.validity.issues.some((i) => i.code === 'prefix_cache_contaminated'))).toEqual([])
    expect(new Set(runs.map((r) => r.seed)).size).toBe(TOTAL)
  })

  it('sends no request for a finished run, and sends the unfinished ones', () => {
    const finished = new Set(keysOf(partial))
    expect([...servedOnResume].filter((k) => finished.has(k))).toEqual([])
    expect([...servedOnResume].sort()).toEqual(keysOf(final).filter((k) => !finished.has(k)))
  })

  it("reports the killed sweep's file with `pending` in every unmeasured cell (servegate report --markdown)", async () => {
    const md = join(dir, 'partial.md')
    const r = await runCli(['report', join(dir, 'partial.json'), '--markdown', md])
    expect(r.code).toBe(0)
    const text = readFileSync(md, 'utf8')
    const unmeasured = CONCURRENCY.filter((c) => !partial.points.some((p) => p.concurrency === c && p.runs.length > 0))
    expect(unmeasured.length).toBeGreaterThan(0)
    for (const c of unmeasured) expect(text).toContain(`| ${c} | pending | pending | pending | pending |`)
    // Measured rows carry figures, not the word.
    expect(text).toMatch(/^\| 1(?: (?:\[\d+\])+)? \| (?!pending)/m)
    expect(text).toMatch(/Throughput at p95 TPOT ≤ 50 ms: .*pending/)
    expect(r.stdout).toContain('pending')
  })

  it('refuses to resume with other settings: exit 2, every difference named, the file untouched', async () => {
    const before = readFileSync(out, 'utf8')
    const changed = args.map((a, i) => (args[i - 1] === '--prompts-per-concurrency' ? '5' : a))
    const r = await runCli([...changed, '--target', 'tpot:p95:30', '--resume'])
    expect(r.code).toBe(2)
    expect(r.stderr).toContain(`servegate: Cannot resume ${out}: it was measured with other settings:`)
    expect(r.stderr).toContain('prompts_per_concurrency 4 in the file, 5 now')
    expect(r.stderr).toContain('target tpot:p95:50 in the file, tpot:p95:30 now')
    expect(r.stderr).toMatch(/hint: .*choose another --out/)
    expect(readFileSync(out, 'utf8')).toBe(before)
  })
})

describe('servegate run interrupted with Ctrl-C', () => {
  it('exits 130, keeps the finished runs and prints a resume command that works as pasted', async () => {
    const sim = await startSim({ profile: 'default', timeScale: 0.5 })
    const dir = mkdtempSync(join(tmpdir(), 'servegate-sigint-'))
    try {
      // A path with a space and a quote: the printed command must quote it.
      const out = join(dir, "my team's results.json")
      const args = [
        'run',
        '--base-url',
        sim.url,
        '--input-len',
        '128',
        '--output-len',
        '16',
        '--concurrency',
        '1,4,16',
        '--repeats',
        '2',
        '--prompts-per-concurrency',
        '4',
        '--out',
        out,
      ]
      const run = startCli(args)
      await waitFor(() => runCount(readResult(out)) >= 1, run, 60_000)
      run.child.kill('SIGINT')
      const r = await run.done
      expect(r.code).toBe(130)
      expect(runCount(readResult(out))).toBeGreaterThanOrEqual(1)
      const hint = /continue with: (.*)$/m.exec(r.stderr)?.[1]
      expect(hint).toMatch(/^servegate run --resume --base-url /)
      // The same shell words, parsed back by a real shell, are the original arguments plus --resume.
      const { execFileSync } = await import('node:child_process')
      const words = execFileSync('bash', ['-c', `printf '%s\\n' ${hint}`], { encoding: 'utf8' })
        .trimEnd()
        .split('\n')
      expect(words).toEqual(['servegate', 'run', '--resume', ...args.slice(1)])
    } finally {
      await sim.close()
      rmSync(dir, { recursive: true, force: true })
    }
  }, 90_000)
})
