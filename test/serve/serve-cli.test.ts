import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { resolveConfig } from '../../src/config/resolve.js'
import { startSim } from '../../src/sim/index.js'
import { writeBaseline } from '../../src/store/baseline.js'
import { appendRefresh } from '../../src/gate/refresh.js'
import { readResultFile } from '../../src/store/result-file.js'
import { runSweep } from '../../src/sweep/run-sweep.js'
import { expectNoValidRun, readResult, runCli, runCount, startCli, waitFor } from '../sweep/cli-child.js'
import { groupGone } from './processes.js'
import { cliArgs } from '../fixtures/servegate-cli.js'

// Issue 12, part 1: `servegate run --serve CMD` starts the server, watches it and stops it.
// Every server here is a real process on 127.0.0.1: the simulator run from the sources.
const SIM = `"${process.execPath}" "${cliArgs()[0]}" sim --port {port} --ttft-ms 5 --itl-ms 5`

/** The pid servegate logged for the server it started. */
function serverPid(stderr: string): number {
  const m = /Starting the server \(pid (\d+), its own process group\)/.exec(stderr)
  if (m === null) throw new Error(`no server pid in:\n${stderr}`)
  return Number(m[1])
}

async function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port
      s.close(() => resolve(port))
    })
  })
}

describe('servegate run --serve', () => {
  let dir: string
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'servegate-serve-'))
  })
  afterAll(() => rmSync(dir, { recursive: true, force: true }))

  it('starts the server on a free port, sweeps it, records the command redacted, and stops it', async () => {
    const out = join(dir, 'ok.json')
    // The command prints secrets the way an engine prints its arguments: none may reach a file or the terminal.
    const command = `export HF_TOKEN=hf_abcdefghijklmnopqrstu; echo "key $MY_API_KEY hf $HF_TOKEN" >&2; exec ${SIM}`
    const r = await runCli(
      [
        'run',
        '--serve',
        command,
        '--input-len',
        '16',
        '--output-len',
        '16',
        '--concurrency',
        '1',
        '--repeats',
        '1',
        '--prompts-per-concurrency',
        '2',
        '--out',
        out,
      ],
      {
        env: { ...process.env, CI: '1', MY_API_KEY: 'plain-secret-value-42' },
      },
    )
    // Two requests are too few for a valid run: the sweep ends with exit 1 once the server is stopped.
    expectNoValidRun(r, out)
    const result = readResult(out)!
    expect(runCount(result)).toBe(1)
    expect(result.env.serve_command).toContain('sim --port {port} --ttft-ms 5 --itl-ms 5')
    expect(result.env.serve_command).toContain('HF_TOKEN=***')
    expect(result.env.base_url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/)
    expect(result.env.engine.name).toBe('servegate-sim')
    const log = readFileSync(join(dir, 'ok.server.log'), 'utf8')
    expect(log).toContain('servegate sim listening on http://127.0.0.1:')
    // MY_API_KEY is not on the allow-list and no server.env names it: the engine never saw it.
    expect(log).toContain('key  hf ***')
    for (const text of [JSON.stringify(result), log, r.stderr, r.stdout]) {
      expect(text).not.toContain('plain-secret-value-42')
      expect(text).not.toContain('hf_abcdefghijklmnopqrstu')
    }
    expect(r.stderr).toContain(`its output goes to ${join(dir, 'ok.server.log')}`)
    expect(r.stderr).toMatch(/The server is ready \(\/health answered 200/)
    expect(await groupGone(serverPid(r.stderr))).toBe(true)
  }, 60_000)

  it('fails with one line, the exit status and the log tail when the server exits before it is ready', async () => {
    const out = join(dir, 'boom.json')
    // No {port}: the server answers at the --base-url given.
    const r = await runCli(['run', '--serve', "sh -c 'echo boom >&2; exit 3'", '--base-url', `http://127.0.0.1:${await freePort()}`, '--out', out])
    expect(r.code, r.stderr).toBe(2)
    expect(r.stderr).toMatch(/^servegate: the server exited with status 3 before it was ready \(after [\d.]+ s\)$/m)
    expect(r.stderr).toContain(`last 1 line of the server log (${join(dir, 'boom.server.log')}):\n  | boom`)
    expect(await groupGone(serverPid(r.stderr))).toBe(true)
  }, 30_000)

  it('stops a server that is not ready within --ready-timeout, and says so', async () => {
    const t0 = Date.now()
    const r = await runCli(['run', '--serve', 'echo loading weights; sleep 60 # {port}', '--ready-timeout', '2', '--out', join(dir, 'slow.json')])
    expect(r.code, r.stderr).toBe(2)
    expect(r.stderr).toMatch(/^servegate: the server was not ready after 2\.0 s \(last: connection refused\); servegate stopped it$/m)
    expect(r.stderr).toContain('  | loading weights')
    expect(r.stderr).toContain('raise --ready-timeout')
    // The shell and its sleep are gone, not orphaned for 60 s.
    expect(await groupGone(serverPid(r.stderr), 2000)).toBe(true)
    expect(Date.now() - t0).toBeLessThan(25_000)
  }, 30_000)
})

describe('a server killed mid-sweep', () => {
  let dir: string
  // ~1 s a run: 10 requests per slot of 16 tokens at 5 ms (enough requests and gaps for a valid run).
  const sweep = { inputLen: '16', outputLen: '16', concurrency: '1,2,4', repeats: '1', promptsPerConcurrency: '10', warmup: '0', seed: '5' }
  const args = (out: string): string[] => [
    ...Object.entries(sweep).flatMap(([k, v]) => [`--${k.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}`, v]),
    '--out',
    out,
  ]

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'servegate-serve-kill-'))
    // The baseline: the same sweep against the same simulator, measured and stored the way the pipeline does.
    // A refresh needs a valid run: a host too busy to time one (client_saturated) measures again.
    for (let attempt = 1; ; attempt++) {
      const sim = await startSim({ ttftMs: 5, itlMs: 5 })
      try {
        const out = join(dir, 'refresh.json')
        await runSweep(resolveConfig({ file: null, filePath: null, flags: { ...sweep, baseUrl: sim.url, out }, env: {} }), { log: () => {} })
        await writeBaseline(join(dir, 'baseline.json'), appendRefresh(null, await readResultFile(out), { name: 'baseline' }))
        break
      } catch (err) {
        if (attempt >= 3) throw err
      } finally {
        await sim.close()
      }
    }
  }, 60_000)
  afterAll(() => rmSync(dir, { recursive: true, force: true }))

  it('cuts the sweep with one clear line and the log tail, records server_exited, and the gate says broken', async () => {
    const out = join(dir, 'cand.json')
    const run = startCli(['run', '--serve', `echo engine up; exec ${SIM}`, ...args(out)])
    let stderr = ''
    run.child.stderr!.on('data', (b: Buffer) => (stderr += b.toString()))
    await waitFor(() => runCount(readResult(out)) >= 1, run, 40_000)
    const pid = serverPid(stderr)
    process.kill(pid, 'SIGKILL')
    const r = await run.done
    expect(r.code, r.stderr).toBe(2)
    expect(r.code).not.toBe(130)
    expect(r.stderr).toMatch(
      /^servegate: the server was killed by SIGKILL (during 16 in \/ 16 out, C=[24], repeat 1|between runs); [12] of 3 runs finished and are saved in /m,
    )
    expect(r.stderr).toContain('  | engine up')

    const partial = readResult(out)!
    expect(partial.interrupted).toMatchObject({ reason: 'server_exited', planned_runs: 3, server: { exit_code: null, signal: 'SIGKILL' } })
    expect(partial.interrupted!.server!.log_tail).toContain('engine up')
    expect(await groupGone(pid)).toBe(true)

    const cmp = await runCli(['compare', join(dir, 'baseline.json'), out])
    expect(cmp.code, cmp.stdout + cmp.stderr).toBe(1)
    expect(cmp.stdout).toMatch(/broken/i)
    expect(cmp.stdout).toContain('the server was killed by SIGKILL')

    const report = await runCli(['report', out])
    expect(report.stdout).toContain('Interrupted (the server was killed by SIGKILL, ')
  }, 60_000)
})

describe('Ctrl-C while servegate runs a server', () => {
  let dir: string
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'servegate-serve-int-'))
  })
  afterAll(() => rmSync(dir, { recursive: true, force: true }))

  /** Start a long sweep against a started simulator and wait until its first run is on disk. */
  async function sweeping(name: string): Promise<{ run: ReturnType<typeof startCli>; pid: () => number }> {
    const out = join(dir, `${name}.json`)
    const run = startCli([
      'run',
      '--serve',
      SIM,
      '--input-len',
      '16',
      '--output-len',
      '200',
      '--concurrency',
      '1,2,4',
      '--repeats',
      '2',
      '--prompts-per-concurrency',
      '1',
      '--warmup',
      '0',
      '--out',
      out,
    ])
    let stderr = ''
    run.child.stderr!.on('data', (b: Buffer) => (stderr += b.toString()))
    await waitFor(() => runCount(readResult(out)) >= 1, run, 40_000)
    return { run, pid: () => serverPid(stderr) }
  }

  it('stops the server in order on the first signal (exit 130, the group gone)', async () => {
    const { run, pid } = await sweeping('once')
    run.child.kill('SIGINT')
    const r = await run.done
    expect(r.code, r.stderr).toBe(130)
    expect(r.stderr).toContain('Stopping the server (SIGTERM to its process group')
    expect(await groupGone(pid())).toBe(true)
  }, 60_000)

  it('kills the server group on a second signal that exits at once', async () => {
    const { run, pid } = await sweeping('twice')
    run.child.kill('SIGINT')
    run.child.kill('SIGINT')
    const r = await run.done
    expect(r.code, r.stderr).toBe(130)
    expect(await groupGone(pid())).toBe(true)
  }, 60_000)
})
