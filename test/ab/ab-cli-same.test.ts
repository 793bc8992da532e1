import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { parseResult } from '../../src/store/result-file.js'
import { runCli } from '../sweep/cli-child.js'
import { expectHonest, judgedFromText } from '../fixtures/honest-verdict.js'
import { SIM, useAbCli } from './ab-cli-harness.js'

// `servegate ab` with A = B (two identical simulators) → pass; B's server dying mid-job → broken;
// flags refused before anything is measured. The 10 %-slower B is in ab-cli.test.ts.
describe('servegate ab against two simulators: the same engine, a dying one, refused flags', () => {
  const { dir, a, a2, ab } = useAbCli()

  it('passes two identical engines, exit 0, stopping at the first look that settles every row', async () => {
    const r = await ab(a2(), 'same', ['--max-rounds', '6'])
    // Two identical engines are never a regression. With 4 rounds on a busy host a row may stay
    // undecided: an honest answer, never printed as a pass, and it fails (exit 1) like any verdict
    // that is not a pass. A gated row the busy host left without two valid pairs (either side) is unmeasured: exit 1.
    const j = judgedFromText(r.stdout)
    const v = expectHonest(j, ['pass', 'improvement', 'undecided'])
    expect(r.code, r.stdout + r.stderr).toBe(v === 'pass' || v === 'improvement' ? 0 : 1)
    expect(r.stdout).not.toMatch(/^\s+regression\s/m)
    // Looks after rounds 4 and 6: a look before the last ends the job only on a pass, and the
    // files then plan exactly the rounds that ran.
    const schedule = JSON.parse(readFileSync(join(r.outDir, 'schedule.json'), 'utf8')) as { rounds: number; max_rounds: number; order: string[] }
    expect(schedule.max_rounds).toBe(6)
    expect([4, 6]).toContain(schedule.rounds)
    expect(schedule.order).toHaveLength(2 * schedule.rounds)
    if (schedule.rounds === 4) {
      expect(v).toBe('pass')
      expect(r.stdout).toContain('Rounds: 4 of at most 6: the look after round 4 passed every gated row with power to spare.')
    }
    for (const side of ['a', 'b']) {
      const res = parseResult(JSON.parse(readFileSync(join(r.outDir, `${side}.json`), 'utf8')), side)
      expect(res.config['repeats']).toBe(schedule.rounds)
      expect(Math.max(...res.points.flatMap((p) => p.runs.map((x) => x.repeat)))).toBe(schedule.rounds)
    }
  }, 240_000)

  it("calls B broken when B's server dies mid-job, exit 1", async () => {
    // The group leader kills the simulator after a few seconds: a slot of B is cut by the exit.
    // (B's first slot takes about 3 s and its simulator is up in well under one: the kill lands in it.)
    const r = await runCli([
      'ab',
      '--a-base-url',
      a().url,
      '--b-serve',
      `sh -c '${SIM} --ttft-ms 20 --itl-ms 10 & pid=$!; sleep 3; kill -9 $pid; exit 7'`,
      '--rounds',
      '4',
      '--config',
      join(dir(), 'servegate.yml'),
      '--out-dir',
      join(dir(), 'dies'),
    ])
    expect(r.code, r.stdout + r.stderr).toBe(1)
    expect(r.stdout).toContain('servegate verdict: BROKEN')
    // On a busy host the kill may land before B's first slot: no B result then, and the verdict says why.
    if (existsSync(join(dir(), 'dies', 'b.json'))) {
      expect(r.stderr).toMatch(/B's server (exited during slot \d|.* before slot \d)/)
      const b = parseResult(JSON.parse(readFileSync(join(dir(), 'dies', 'b.json'), 'utf8')), 'b')
      expect(b.interrupted?.reason).toBe('server_exited')
    } else {
      expect(r.stdout).toMatch(/B's server .* before slot \d, so no slot of B was measured/)
    }
  }, 240_000)

  it('refuses a side given twice or not at all, and fewer than 4 rounds, naming the flags', async () => {
    // Each is refused before anything is measured: the four CLIs run side by side.
    const rounds = ['1', '3']
    const [r, r3, ...r2s] = await Promise.all([
      runCli(['ab', '--a-base-url', a().url, '--a-serve', 'x', '--b-base-url', a2().url, '--out-dir', join(dir(), 'bad')]),
      runCli(['ab', '--a-base-url', a().url, '--b-base-url', a2().url, '--rounds', '6', '--max-rounds', '4', '--out-dir', join(dir(), 'bad')]),
      ...rounds.map((n) => runCli(['ab', '--a-base-url', a().url, '--rounds', n, '--out-dir', join(dir(), 'bad')])),
    ])
    expect(r.code).toBe(2)
    expect(r.stderr).toContain('servegate ab: side A: give exactly one of --a-base-url and --a-serve')
    for (const [i, r2] of r2s.entries()) {
      expect(r2.code).toBe(2)
      expect(r2.stderr).toContain(
        `servegate ab --rounds "${rounds[i]}": expected a whole number of at least 4 rounds (fewer leave too few degrees of freedom for the paired spread)`,
      )
    }
    expect(r3.code).toBe(2)
    expect(r3.stderr).toContain('servegate ab --max-rounds "4": expected a whole number of rounds no smaller than the first look\'s 6')
  }, 60_000)
})
