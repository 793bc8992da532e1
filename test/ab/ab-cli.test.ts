import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { parseResult } from '../../src/store/result-file.js'
import type { ResultFile } from '../../src/types.js'
import { runCli } from '../sweep/cli-child.js'
import { expectHonest, judgedFromText } from '../fixtures/honest-verdict.js'
import { SIM, useAbCli } from './ab-cli-harness.js'

// `servegate ab` as a user runs it with both engines as serve commands (the batching simulator,
// `--profile default`, one shape, two concurrencies): servegate starts each side
// afresh for every slot, and every gated row is a sequential test over the rounds (docs/gate.md,
// "The sequential decision"), looking after every round from --rounds 4 up to --max-rounds 32 (16 for the same engine).
// A 15 % slower B is called a regression by round 12, the same engine passes by round 16, and both
// verdicts state what they cost. Then: two servers given by URL (never restarted) stay blind, a
// dying B is broken, and refused flags.
//
// One file, so the slowed job and the same-engine job never run side by side: the engine starts of
// one would fall on the other's slots.
const BATCHING = `${SIM} --profile default`

/** Whether the host spoiled slots of the job (its client saturated): the job then needs more rounds than a quiet host's. */
function busy(stderr: string): boolean {
  return /runs in slot \d+ are invalid: client_saturated/.test(stderr)
}

/**
 * Both sides' files and the point-runs they hold. Rows, not sweeps: after a look, later rounds
 * measure only the points of rows still open, so a side holds at most 2 runs a round, and each
 * point exactly the rounds its file says it was planned for.
 */
function sides(outDir: string, rounds: number): { files: ResultFile[]; pointRuns: number } {
  const files = ['a', 'b'].map((side) => parseResult(JSON.parse(readFileSync(join(outDir, `${side}.json`), 'utf8')), side))
  for (const f of files) {
    const planned = (f.config['point_repeats'] ?? null) as Record<string, number> | null
    for (const p of f.points) expect(p.runs.length).toBe(planned?.[`${p.input_len}x${p.output_len}@c${p.concurrency}`] ?? rounds)
  }
  const pointRuns = files.reduce((n, f) => n + f.points.reduce((m, p) => m + p.runs.length, 0), 0)
  expect(pointRuns).toBeLessThanOrEqual(4 * rounds)
  return { files, pointRuns }
}

/** Rounds a job ran, from its schedule.json. */
function roundsRan(outDir: string): { rounds: number; max_rounds: number; order: string[]; starts: unknown[] } {
  return JSON.parse(readFileSync(join(outDir, 'schedule.json'), 'utf8')) as { rounds: number; max_rounds: number; order: string[]; starts: unknown[] }
}

describe('servegate ab against two simulators started for every slot', () => {
  const { ab } = useAbCli()

  it('calls B, 15 % slower, a regression by round 12, stating engine starts, point-runs and GPU-minutes, exit 1', async () => {
    const r = await ab(`${BATCHING} --slowdown 1.15`, 'slow', ['--a-serve', BATCHING, '--max-rounds', '32'])
    const judged = judgedFromText(r.stdout)
    if (expectHonest(judged, 'regression') === 'regression') {
      expect(r.code, r.stdout + r.stderr).toBe(1)
      const s = roundsRan(r.outDir)
      // Rounds a busy host spoiled give no increment, and its noise widens the rows' design: only a quiet host is held to 12.
      if (!busy(r.stderr)) expect(s.rounds, r.stdout).toBeLessThanOrEqual(12)
      // Every slot is an engine start of its own.
      expect(s.starts).toHaveLength(2 * s.rounds)
      const { pointRuns } = sides(r.outDir, s.rounds)
      expect(r.stdout).toMatch(new RegExp(`^\\s*cost: ${2 * s.rounds} engine starts, ${pointRuns} point-runs, [\\d.]+ GPU-minutes$`, 'm'))
      expect(readFileSync(join(r.outDir, 'verdict.md'), 'utf8')).toMatch(
        new RegExp(`cost: ${2 * s.rounds} engine starts, ${pointRuns} point-runs, [\\d.]+ GPU-minutes`),
      )
      // A row the host spoiled in the rounds before the decision is unmeasured, named as such; only a busy host may leave one.
      const rowStatuses = busy(r.stderr) ? ['regression', 'undecided', 'pass', 'invalid', 'unmeasured'] : ['regression', 'undecided', 'pass', 'invalid']
      for (const row of judged.rows) expect(rowStatuses, r.stdout).toContain(row.status)
    }
  }, 360_000)
})

describe('servegate ab: the same engine, servers given by URL, a dying one, refused flags', () => {
  const { dir, a, a2, ab } = useAbCli()

  it('passes the same engine by round 16, stating what it cost, exit 0', async () => {
    // At most 16 rounds: a quiet host must pass by then, and a busy one that spreads the rounds wider
    // would be left undecided by 32 as honestly as by 16, at twice the cost.
    const r = await ab(BATCHING, 'same', ['--a-serve', BATCHING, '--max-rounds', '16'], 1)
    const j = judgedFromText(r.stdout)
    // Two identical engines are never a regression. A busy host may leave them unmeasured (named), or
    // spread their rounds so wide that 16 rounds leave a row between its boundaries (undecided).
    const v = expectHonest(j, busy(r.stderr) ? ['pass', 'undecided'] : 'pass')
    if (v === 'pass') {
      expect(r.code, r.stdout + r.stderr).toBe(0)
      const s = roundsRan(r.outDir)
      if (!busy(r.stderr)) expect(s.rounds, r.stdout).toBeLessThanOrEqual(16)
      expect(r.stdout).toContain(`Rounds: ${s.rounds} of at most 16: the look after round ${s.rounds} decided every gated row.`)
      const { files, pointRuns } = sides(r.outDir, s.rounds)
      expect(r.stdout).toMatch(new RegExp(`^\\s*cost: ${2 * s.rounds} engine starts, ${pointRuns} point-runs, [\\d.]+ GPU-minutes$`, 'm'))
      // The files plan exactly the rounds that ran, and every run drew prompts of its own.
      for (const res of files) {
        expect(res.config['repeats']).toBe(s.rounds)
        const runs = res.points.flatMap((p) => p.runs)
        expect(new Set(runs.map((x) => x.seed)).size).toBe(runs.length)
      }
    }
    expect(j.rows.filter((row) => row.status === 'regression')).toEqual([])
  }, 360_000)

  it('leaves two servers given by URL undecided when its rounds are spent, saying that serve commands would decide', async () => {
    // Never restarted, each side keeps one start offset for the whole job: no number of rounds rules
    // 10 % out (the row is blind), so two show it as well as four.
    const r = await ab(a2(), 'urls', ['--rounds', '2', '--max-rounds', '2'], 0)
    const j = judgedFromText(r.stdout)
    if (expectHonest(j, 'undecided') === 'undecided') {
      expect(r.code, r.stdout + r.stderr).toBe(1)
      expect(r.stdout).toContain(
        'A and B were never restarted (a server given by URL, or resident): their start offsets are shared by every round and never average away; serve commands for both sides, started afresh for every slot, would let the gate decide',
      )
      expect(r.stdout).toMatch(/^\s*cost: 0 engine starts, 8 point-runs, /m)
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

  it('refuses a side given twice or not at all, and fewer than 2 rounds, naming the flags', async () => {
    // Each is refused before anything is measured: the four CLIs run side by side.
    const rounds = ['1', '0']
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
        `servegate ab --rounds "${rounds[i]}": expected a whole number of at least 2 rounds (the first look needs a round of each order, A B and B A)`,
      )
    }
    expect(r3.code).toBe(2)
    expect(r3.stderr).toContain('servegate ab --max-rounds "4": expected a whole number of rounds no smaller than the first look\'s 6')
  }, 60_000)
})
