import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createServer, request, type Server } from 'node:http'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { startSim, type SimHandle } from '../../src/sim/index.js'
import { expectNoValidRun, runCli } from './cli-child.js'

// The API key is read from the environment variable the config names, sent on every request
// (inference, /v1/models, /version, /metrics, /tokenize), and written nowhere.
const SECRET = 'sk-servegate-test-7f3a9c'

describe('servegate run with server.api_key_env', () => {
  let sim: SimHandle
  let gate: Server
  let url: string
  let dir: string
  const seen: Array<{ path: string; auth: string | undefined }> = []

  beforeAll(async () => {
    sim = await startSim({ ttftMs: 2, itlMs: 1 })
    const upstream = new URL(sim.url)
    // A stand-in for a server behind a key: 401 without it, otherwise forwarded to the simulator.
    gate = createServer((req, res) => {
      seen.push({ path: req.url ?? '', auth: req.headers.authorization })
      if (req.headers.authorization !== `Bearer ${SECRET}`) {
        res.writeHead(401, { 'content-type': 'application/json' }).end('{"error":{"message":"bad key"}}')
        return
      }
      const fwd = request({ host: upstream.hostname, port: upstream.port, path: req.url, method: req.method, headers: req.headers }, (up) => {
        res.writeHead(up.statusCode ?? 502, up.headers)
        up.pipe(res)
      })
      req.pipe(fwd)
    })
    await new Promise<void>((r) => gate.listen(0, '127.0.0.1', r))
    const addr = gate.address() as { port: number }
    url = `http://127.0.0.1:${addr.port}`
    dir = mkdtempSync(join(tmpdir(), 'servegate-key-'))
  })

  afterAll(async () => {
    gate?.closeAllConnections()
    await new Promise((r) => gate?.close(r))
    await sim?.close()
    if (dir) rmSync(dir, { recursive: true, force: true })
  })

  it('authenticates every request and keeps the key out of output, result and report', async () => {
    const config = join(dir, 'servegate.yaml')
    const out = join(dir, 'result.json')
    const md = join(dir, 'report.md')
    writeFileSync(
      config,
      `server:\n  base_url: ${url}\n  api_key_env: SG_TEST_KEY\nsweeps:\n  full:\n    shapes: [{input_len: 16, output_len: 4}]\n    concurrency: [1, 2]\n    repeats: 1\n    prompts_per_concurrency: 2\n    warmup: 0\n`,
    )
    const r = await runCli(['run', '--config', config, '--out', out], { env: { ...process.env, CI: '1', SG_TEST_KEY: SECRET } })
    expect(r.stderr).not.toMatch(/crashed/)
    // Runs of 2 and 4 requests are too few to be valid (validity is not what this tests): exit 1, the file written.
    expectNoValidRun(r, out)
    expect(seen.length).toBeGreaterThan(6)
    expect(seen.filter((s) => s.auth !== `Bearer ${SECRET}`).map((s) => s.path)).toEqual([])
    expect(seen.some((s) => s.path.startsWith('/v1/completions'))).toBe(true)
    const rep = await runCli(['report', out, '--markdown', md])
    expect(rep.code).toBe(0)
    for (const text of [r.stdout, r.stderr, readFileSync(out, 'utf8'), rep.stdout, readFileSync(md, 'utf8')]) expect(text).not.toContain(SECRET)
    expect(readFileSync(out, 'utf8')).toContain('SG_TEST_KEY') // the variable's name is recorded, not its value
  }, 60_000)

  it('fails clearly without the key: the variable named in the config is not set', async () => {
    const config = join(dir, 'servegate.yaml')
    const env: NodeJS.ProcessEnv = { ...process.env, CI: '1' }
    delete env.SG_TEST_KEY
    const r = await runCli(['run', '--config', config, '--out', join(dir, 'nokey.json')], { env })
    expect(r.code).not.toBe(0)
    expect(r.stderr).toContain('SG_TEST_KEY')
    expect(r.stderr).not.toMatch(/crashed/)
  }, 60_000)
})
