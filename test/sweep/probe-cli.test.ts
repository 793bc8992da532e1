import { existsSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { BUILTIN_PROFILES, startSim, type SimHandle } from '../../src/sim/index.js'
import { readResult, runCli } from './cli-child.js'
import { clientHeadroom, headroomLine } from '../../src/analysis/headroom.js'

// Issue 20, case 11: a server that refuses every request of the sweep must not end `servegate run`
// with exit 0 and nothing on screen but INVALID. Its refusal is caught by the probe (exit 2, the
// server's words); what the probe cannot foresee ends the run with exit 1, the server's first
// error shown and the result file written. Tiny sweeps: each case is one `servegate run` child.
describe('servegate run against a server that refuses the sweep', () => {
  let dir: string
  let sim: SimHandle | null = null
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'servegate-probe-'))
  })
  afterEach(async () => {
    await sim?.close()
    sim = null
  })
  afterAll(() => {
    if (dir) rmSync(dir, { recursive: true, force: true })
  })
  const sweep = (url: string, out: string, shape: string[]): ReturnType<typeof runCli> =>
    runCli(['run', '--base-url', url, ...shape, '--concurrency', '1', '--repeats', '1', '--warmup', '0', '--seed', '7', '--out', out])

  it("a vocabulary below the prompts' token ids fails the probe with the server's own error, exit 2, no sweep", async () => {
    sim = await startSim({ ttftMs: 1, itlMs: 1, vocab: 100 })
    const out = join(dir, 'vocab.json')
    const r = await sweep(sim.url, out, ['--input-len', '16', '--output-len', '8', '--prompts-per-concurrency', '2'])
    expect(r.code, r.stderr).toBe(2)
    const lines = r.stderr.trimEnd().split('\n')
    expect(lines.at(-2)).toBe(
      `servegate: The server at ${sim.url}/v1/completions refused a probe request shaped like the sweep's (8 prompt token ids in 1000..30000): HTTP 400: Token id 30000 is out of vocabulary`,
    )
    expect(lines.at(-1)).toMatch(/^hint: Every request of the sweep would be refused too\. .*--api chat/)
    expect(existsSync(out)).toBe(false)
  }, 60_000)

  it('every sweep request refused past the probe (context too long): the first error is shown, exit 1, the result written', async () => {
    // The probe (8 + 2 tokens) fits a 32-token context; the sweep's 32 + 8 does not.
    sim = await startSim({ profile: { ...BUILTIN_PROFILES.small!, name: 'ctx32', maxModelLen: 32 }, timeScale: 0.2 })
    const out = join(dir, 'ctx.json')
    const r = await sweep(sim.url, out, ['--input-len', '32', '--output-len', '8', '--prompts-per-concurrency', '2'])
    expect(r.code, r.stderr).toBe(1)
    expect(r.stderr).toContain(
      "\nEvery request of 32 in / 8 out, C=1, repeat 1 failed; the server's first error: HTTP 400: This model's maximum context length is 32 tokens. " +
        'However, you requested 40 tokens (32 in the messages, 8 in the completion). Please reduce the length of the messages or completion.\n',
    )
    const run = readResult(out)!.points[0]!.runs[0]!
    expect(run).toMatchObject({ completed: 0, failed: 2, errors: { http_status: 2 } })
    expect(run.validity.valid).toBe(false)
    // The line names the run's issues as the file records them (a run of failures may also look client-bound).
    const codes = run.validity.issues.map((i) => `${i.code} ×1`).join(', ')
    expect(codes).toMatch(/^requests_failed ×1, too_few_requests ×1/)
    expect(r.stderr.trimEnd().split('\n').at(-1)).toBe(`servegate: no run of the sweep is valid (1 run: ${codes}); the result is written to ${out}`)
  }, 60_000)

  it('a clean sweep still exits 0', async () => {
    sim = await startSim({ ttftMs: 1, itlMs: 1, vocab: 32_000 })
    const out = join(dir, 'ok.json')
    // 10 requests × 15 gaps: just enough for a valid run (at least 10 requests and 100 gaps).
    const r = await sweep(sim.url, out, ['--input-len', '16', '--output-len', '16', '--prompts-per-concurrency', '10'])
    const run = readResult(out)!.points[0]!.runs[0]!
    expect(run).toMatchObject({ completed: 10, failed: 0 })
    // Only a busy host (a starved load generator) may spoil this run, and then exit 1 is the right answer.
    const codes = run.validity.issues.map((i) => i.code)
    expect(codes.filter((c) => c !== 'client_saturated')).toEqual([])
    expect(r.code, r.stderr).toBe(run.validity.valid ? 0 : 1)
    if (run.validity.valid) expect(r.stderr.trimEnd().split('\n').at(-1)).toBe(`Result written to ${out}`)
    // The file states the load client's headroom at its heaviest run, and the console says it.
    const result = readResult(out)!
    expect(result.client_headroom).toEqual(clientHeadroom(result.points))
    expect(result.client_headroom).toMatchObject({ input_len: 16, output_len: 16, concurrency: 1, repeat: 1 })
    expect(result.client_headroom!.events_per_second).toBe(run.client!.events_per_second)
    expect(r.stdout).toContain(`\n${headroomLine(result.client_headroom!)}\n`)
  }, 60_000)
})
