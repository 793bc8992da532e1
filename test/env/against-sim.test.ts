import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { collectEnv } from '../../src/env/collect.js'
import { createFetchJson } from '../../src/client/http.js'
import { startSim, SIM_ENGINE_NAME, type SimHandle } from '../../src/sim/index.js'
import { HARNESS_VERSION } from '../../src/version.js'
import { pathWith } from './fake-nvidia-smi.js'

describe('collectEnv against the simulator', () => {
  let sim: SimHandle
  const none = pathWith(null)
  beforeAll(async () => {
    sim = await startSim({ ttftMs: 10, itlMs: 5 })
  })
  afterAll(async () => {
    await sim?.close()
    none.cleanup()
  })

  it("records the simulator's engine version and model revision, and unknown GPU without nvidia-smi", async () => {
    const env = await collectEnv({
      baseUrl: sim.url.replace(/\/+$/, ''),
      model: null,
      containerDigest: null,
      serveCommand: 'servegate sim --ttft-ms 10 --itl-ms 5',
      startedAt: new Date().toISOString(),
      fetchJson: createFetchJson(),
      exec: none.exec,
    })
    expect(env.engine).toEqual({ name: SIM_ENGINE_NAME, version: HARNESS_VERSION })
    expect(env.model.revision).toBe('sim-deterministic-ttft10-itl5')
    expect(env.gpu.count).toBe('unknown')
    expect(env.harness.version).toBe(HARNESS_VERSION)
    expect(env.serve_command).toBe('servegate sim --ttft-ms 10 --itl-ms 5')
  })
})

describe('createFetchJson', () => {
  let server: Server
  let root: string
  const seen: (string | undefined)[] = []
  beforeAll(async () => {
    server = createServer((req, res) => {
      seen.push(req.headers.authorization)
      if (req.url === '/ok') {
        res.writeHead(200, { 'content-type': 'application/json' }).end('{"a":1}')
      } else if (req.url === '/bad-json') {
        res.writeHead(200).end('not json')
      } else res.writeHead(404).end('{}')
    })
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
    root = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  })
  afterAll(() => new Promise<void>((r) => server.close(() => r())))

  it('gives the JSON of a 200 answer and sends the key as a bearer token', async () => {
    expect(await createFetchJson({ apiKey: 'k1' })(`${root}/ok`)).toEqual({ a: 1 })
    expect(seen.at(-1)).toBe('Bearer k1')
  })

  it('gives null for a 404, invalid JSON or a closed port', async () => {
    const get = createFetchJson({ timeoutMs: 2000 })
    expect(await get(`${root}/missing`)).toBeNull()
    expect(await get(`${root}/bad-json`)).toBeNull()
    expect(await get('http://127.0.0.1:1/ok')).toBeNull()
  })
})
