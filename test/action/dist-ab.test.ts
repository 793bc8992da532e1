/**
 * Issue 12's acceptance for the Action: in `mode: ab` the bundled dist/index.js,
 * run as GitHub runs it (inputs as INPUT_*, a stand-in GitHub API on loopback),
 * measures A (a simulator the test started) and B (a simulator 25 % slower that
 * the Action starts from `b-serve`) in alternating slots, posts one comment and
 * fails with verdict regression. The same for gate mode told to re-measure a
 * reference engine. Skipped only when dist/index.js or dist/cli.js is absent (`npm run bundle`).
 */
import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startSim, type SimHandle } from '../../src/sim/index.js'
import { parseResult } from '../../src/store/result-file.js'
import type { VerdictRecord } from '../../src/records/verdict-record.js'
import { expectHonest } from '../fixtures/honest-verdict.js'
import { DIST, ROOT, createActionWorkspace, prEvent, type ActionWorkspace, type StepRun } from './dist-harness.js'

// One point: a slower engine shows at C = 4 as at any other (in p95 ITL and in throughput
// at target), and each A/B slot takes half the time of a sweep of C = 1 and 4. 15 prompts per
// concurrency keep that point's 60 requests and 420 inter-token gaps a slot. A run this shared host
// spoils is measured again in its slot (host_retries): one run, not the whole step (which took a
// quiet CI 49 s instead of 23 s when a spoiled slot left the verdict unmeasured).
const CONFIG = `target: {metric: tpot, percentile: 95, threshold_ms: 50}
sweeps:
  gate:
    shapes: [{input_len: 32, output_len: 8}]
    concurrency: [4]
    prompts_per_concurrency: 15
    warmup: 2
    host_retries: 2
`
// The simulator as a serve command, from the committed CLI bundle by absolute path (the step runs
// in the workspace's checkout): it is ready in about a second, where tsx compiles the sources first,
// and gate mode with reference-serve starts an engine around every slot.
const CLI_BUNDLE = join(ROOT, 'dist', 'cli.js')
const SIM = `${process.execPath} ${join(ROOT, 'bin', 'servegate.js')} sim --port {port} --ttft-ms 20 --itl-ms 10`
const BOT = 'github-actions[bot]'
// B is a quarter slower. These tests are about the Action's plumbing (the step, the comment, the
// record, the reference measured again here); whether 4 rounds catch 10 % is ab-cli.test.ts's
// question. With B 10 % slower, beside a busy neighbour (one pair of 4 spoiled by a saturated client)
// throughput at target did not clear its bar on the 3 pairs left and p95 ITL was blind: an honest
// `undecided` (exit 1), but not what these tests are about.
const SLOWDOWN = '1.25'

let ws: ActionWorkspace
let a: SimHandle

describe.skipIf(!existsSync(DIST) || !existsSync(CLI_BUNDLE))('dist/index.js in an A/B decision', () => {
  beforeAll(async () => {
    ws = await createActionWorkspace({ prefix: 'servegate-dist-ab-', files: { 'servegate.yml': CONFIG } })
    a = await startSim({ ttftMs: 20, itlMs: 10 })
  })
  afterAll(async () => {
    await Promise.all([ws?.close(), a?.close()])
  })

  /**
   * One step; an unmeasured verdict is run again, at most twice: on a busy host a saturated
   * client spoils slots, and the pairs left may not settle the change in 4 rounds. Inconclusive
   * never passes, so a retry cannot turn a failure green. Still unmeasured after that, the verdict
   * must be the honest one (expectHonest): the busy host named as the cause, exit 1.
   */
  async function step(inputs: Record<string, string>, pr: number): Promise<StepRun> {
    const event = prEvent()
    ;(event.payload as { pull_request: { number: number } }).pull_request.number = pr
    let r = await ws.step(inputs, event)
    for (let retry = 0; retry < 2 && r.outputs['verdict'] === 'unmeasured'; retry++) r = await ws.step(inputs, event)
    expect(r.code, r.stdout).toBe(1)
    const record = JSON.parse(readFileSync(r.outputs['record-path']!, 'utf8')) as VerdictRecord
    expect(r.outputs['verdict'], r.stdout).toBe(expectHonest(record, 'regression'))
    return r
  }

  it('mode ab: B 25 % slower, started from b-serve, fails the step with verdict regression and one comment', async () => {
    // B's command carries a credential, as a real serve command may: it must reach no comment, summary or file.
    const token = 'hf_abcdefghijklmnop1234'
    // Both sides are serve commands: each is started afresh for every slot, so every round is an increment of its own.
    const r = await step({ mode: 'ab', 'a-serve': SIM, 'b-serve': `HF_TOKEN=${token} ${SIM} --slowdown ${SLOWDOWN}`, rounds: '4', 'max-rounds': '4' }, 7)
    // A slower engine raises every gap and lowers throughput at target: whichever clears its bar on this host is named.
    // (Unmeasured instead only where the busy host spoiled the slots three times over: step() checked that it says so.)
    const tripped = r.outputs['verdict'] === 'regression'
    if (tripped) {
      const regressed = JSON.parse(r.outputs['regressions']!) as string[]
      expect(regressed.length).toBeGreaterThan(0)
      for (const m of regressed) expect(m).toMatch(/^(p95 ITL 32×8 c=\d+|throughput at target 32×8)$/)
      expect(r.stdout).toMatch(/::error::servegate gate tripped: regression in /)
    }
    const mine = ws.gh.comments.filter((c) => c.user.login === BOT && c.issue === 7)
    expect(mine).toHaveLength(1)
    const body = mine[0]!.body
    expect(body.startsWith('<!-- servegate:gate-ab -->')).toBe(true)
    expect(body).toContain(tripped ? '❌ servegate: regression' : '🚫 servegate: ')
    expect(body).toContain('### servegate A/B verdict:')
    expect(body).toContain('A/B over 4 rounds (8 slots, order A B B A A B B A)')
    // The comment keeps the runner's addresses out (show-host is false).
    expect(body).not.toContain(a.url)
    expect(r.outputs['comment-id']).toBe(String(mine[0]!.id))
    expect(r.summary).toContain(tripped ? '❌ servegate: regression' : '🚫 servegate: ')
    // Both sides are ordinary result files, one repeat per slot.
    for (const [output, name] of [
      ['a-result-path', 'a.json'],
      ['result-path', 'b.json'],
    ] as const) {
      expect(r.outputs[output]).toBe(join(ws.repo, 'servegate-result-ab', name))
      const res = parseResult(JSON.parse(readFileSync(r.outputs[output]!, 'utf8')), name)
      expect(res.points.map((p) => p.runs.length)).toEqual([4])
    }
    expect(existsSync(r.outputs['report-path']!)).toBe(true)
    expect(body).toContain('HF_TOKEN=\\*\\*\\*')
    for (const text of [body, r.summary, r.outputText, readFileSync(r.outputs['result-path']!, 'utf8'), readFileSync(r.outputs['report-path']!, 'utf8')])
      expect(text).not.toContain(token)
    expect(r.stdout).toContain(`::add-mask::${token}`)
    expect(r.stdout.replaceAll(`::add-mask::${token}`, '')).not.toContain(token)
  }, 360_000)

  it('gate mode with reference-serve re-measures the reference here and decides A/B: the slowed candidate regresses', async () => {
    const r = await step({ mode: 'gate', 'reference-serve': SIM, serve: `${SIM} --slowdown ${SLOWDOWN}`, rounds: '4', 'max-rounds': '4' }, 8)
    const tripped = r.outputs['verdict'] === 'regression'
    const mine = ws.gh.comments.filter((c) => c.user.login === BOT && c.issue === 8)
    expect(mine).toHaveLength(1)
    expect(mine[0]!.body.startsWith('<!-- servegate:gate -->')).toBe(true)
    expect(mine[0]!.body).toContain('the reference engine was measured again on this runner beside the candidate')
    expect(mine[0]!.body).toContain(tripped ? '❌ servegate: regression' : '🚫 servegate: ')
  }, 360_000)
})
