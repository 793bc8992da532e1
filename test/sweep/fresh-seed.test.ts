import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { ResultFile } from '../../src/types.js'
import { expectNoValidRun, readResult, runCli, startCli, type CliRun } from './cli-child.js'

// A benchmark host keeps its server up between sweeps, and vLLM caches prefixes by default:
// a second sweep sending the same prompts would be served from cache and look faster. Each
// `servegate run` therefore draws prompts of its own; a pinned --seed replays them exactly
// (and the second pinned sweep is caught as prefix_cache_contaminated, which proves the test).
describe('two sweeps against one long-running server with a prefix cache', () => {
  let dir: string
  let sim: CliRun
  let url: string
  const results: Record<string, ResultFile> = {}
  const stderr: Record<string, string> = {}

  const sweep = async (name: string, extra: string[] = []): Promise<void> => {
    const out = join(dir, `${name}.json`)
    const r = await runCli([
      'run',
      '--base-url',
      url,
      '--input-len',
      '64',
      '--output-len',
      '4',
      '--concurrency',
      '1,2',
      '--repeats',
      '2',
      '--prompts-per-concurrency',
      '3',
      '--warmup',
      '0',
      '--out',
      out,
      ...extra,
    ])
    // Three requests a run are too few for a valid run (cheap, and validity is not what this tests): exit 1.
    expectNoValidRun(r, out)
    results[name] = readResult(out)!
    stderr[name] = r.stderr
  }
  const runs = (name: string) => results[name]!.points.flatMap((p) => p.runs)
  const contaminated = (name: string) => runs(name).filter((r) => r.validity.issues.some((i) => i.code === 'prefix_cache_contaminated'))

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'servegate-fresh-seed-'))
    // The real `servegate sim` command, on a free loopback port; it prints its URL first.
    sim = startCli(['sim', '--port', '0', '--ttft-ms', '2', '--itl-ms', '1', '--prefix-cache'])
    url = await new Promise<string>((resolve, reject) => {
      let seen = ''
      sim.child.stdout!.on('data', (b: Buffer) => {
        seen += b.toString()
        const m = /(http:\/\/127\.0\.0\.1:\d+)/.exec(seen)
        if (m) resolve(m[1]!)
      })
      void sim.done.then((d) => reject(new Error(`servegate sim exited: ${d.stderr}`)))
    })
    await sweep('first')
    await sweep('second')
    await sweep('pinned-a', ['--seed', '1234'])
    await sweep('pinned-b', ['--seed', '1234'])
  }, 120_000)

  afterAll(async () => {
    if (sim) {
      sim.child.kill('SIGTERM')
      await sim.done
    }
    if (dir) rmSync(dir, { recursive: true, force: true })
  })

  it("keeps both unpinned sweeps clean: the second is not served from the first one's cache", () => {
    expect(runs('first')).toHaveLength(4)
    expect(runs('second')).toHaveLength(4)
    expect(contaminated('first')).toEqual([])
    expect(contaminated('second')).toEqual([])
    // The server did see prompts it could have served: the cache was on and queried.
    expect(runs('second').every((r) => (r.server_side?.prefix_cache_queries ?? 0) > 0)).toBe(true)
  })

  it('records a different seed per invocation, says it, and marks it unpinned', () => {
    const [a, b] = [results.first!.config, results.second!.config]
    expect(a.seed).not.toBe(b.seed)
    expect([a.seed_pinned, b.seed_pinned]).toEqual([false, false])
    expect(new Set([...runs('first'), ...runs('second')].map((r) => r.seed)).size).toBe(8)
    expect(stderr.first).toContain(`Prompts from a fresh seed, ${a.seed} (recorded in the result; --seed ${a.seed} replays them).`)
  })

  it('replays the same prompts with a pinned --seed, so the second pinned sweep is contaminated', () => {
    expect(results['pinned-a']!.config).toMatchObject({ seed: 1234, seed_pinned: true })
    expect(runs('pinned-a').map((r) => r.seed)).toEqual(runs('pinned-b').map((r) => r.seed))
    expect(contaminated('pinned-a')).toEqual([])
    expect(contaminated('pinned-b')).toHaveLength(4)
    expect(stderr['pinned-a']).not.toContain('fresh seed')
  })
})
