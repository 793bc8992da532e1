import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { spawn } from 'node:child_process'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { startSim, type SimHandle } from '../../src/sim/index.js'
import { cliArgs } from '../fixtures/servegate-cli.js'

const root = join(import.meta.dirname, '..', '..')

/** Run the CLI from its sources as a user would, collecting exit code and output. */
function cli(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, cliArgs(...args), { cwd: root, env: { ...process.env, CI: 'true' } })
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (b: Buffer) => (stdout += b.toString()))
    child.stderr.on('data', (b: Buffer) => (stderr += b.toString()))
    child.on('close', (code) => resolve({ code, stdout, stderr }))
  })
}

function expectOneClearError(r: { code: number | null; stderr: string }, pattern: RegExp): void {
  expect(r.code).toBe(2)
  expect(r.stderr).toMatch(pattern)
  // A user error is a message, not a stack trace.
  expect(r.stderr).not.toMatch(/^\s+at /m)
  expect(r.stderr.split('\n').filter((l) => l.startsWith('servegate:'))).toHaveLength(1)
}

describe('servegate run with bad input', () => {
  let dir: string
  let notFound: Server
  let notFoundUrl: string
  let failing: SimHandle

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'servegate-cli-'))
    notFound = createServer((_req, res) => {
      res.writeHead(404, { 'content-type': 'application/json' })
      res.end('{"detail":"Not Found"}')
    })
    await new Promise<void>((r) => notFound.listen(0, '127.0.0.1', r))
    notFoundUrl = `http://127.0.0.1:${(notFound.address() as AddressInfo).port}`
    failing = await startSim({ ttftMs: 5, itlMs: 5, faults: [{ kind: 'http500', rate: 1 }] })
  })

  afterAll(async () => {
    await new Promise((r) => notFound.close(r))
    await failing.close()
    rmSync(dir, { recursive: true, force: true })
  })

  it('names an unreachable server and exits 2', async () => {
    const r = await cli(['run', '--base-url', 'http://127.0.0.1:1', '--out', join(dir, 'a.json')])
    expectOneClearError(r, /127\.0\.0\.1:1.*ECONNREFUSED/)
  })

  it('names a server that answers 404 and exits 2', async () => {
    const r = await cli(['run', '--base-url', notFoundUrl, '--out', join(dir, 'b.json')])
    expectOneClearError(r, /HTTP 404/)
  })

  it('names a server whose completions answer 500 and exits 2', async () => {
    const r = await cli(['run', '--base-url', failing.url, '--out', join(dir, 'c.json')])
    expectOneClearError(r, /failed a probe request.*500/)
  })

  it('names the config file, the field and what was expected', async () => {
    const cfg = join(dir, 'bad.yaml')
    writeFileSync(cfg, 'sweeps:\n  full:\n    shapes: [{input_len: 4096, output_len: 512}]\n    concurrency: [1, "many"]\n')
    const r = await cli(['run', '--config', cfg])
    expect(r.code).toBe(2)
    expect(r.stderr).toContain(cfg)
    expect(r.stderr).toMatch(/sweeps\.full\.concurrency\[1\]: expected a concurrency \(a positive integer\)/)
    expect(r.stderr).not.toMatch(/^\s+at /m)
  })

  it('names a malformed flag value and what it expects', async () => {
    const r = await cli(['run', '--concurrency', '1,4,x'])
    expectOneClearError(r, /--concurrency "1,4,x": expected positive integers separated by commas/)
  })
})
