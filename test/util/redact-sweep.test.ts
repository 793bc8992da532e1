import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { resolveConfig } from '../../src/config/resolve.js'
import { startSim, type SimHandle } from '../../src/sim/index.js'
import { runSweep } from '../../src/sweep/run-sweep.js'

const API_KEY = 'sk-live-0123456789abcdefXYZ'
const HF = 'hf_SecretHuggingFaceToken0123'
const DIGEST_TOKEN = 'ghp_0123456789abcdefghijABCDEFGHIJ'

// A real sweep against the simulator: whatever the serve command carried, the result file on disk holds `***`.
describe('secrets in the recorded environment', () => {
  let sim: SimHandle
  let dir: string
  beforeAll(async () => {
    sim = await startSim({ ttftMs: 2, itlMs: 1 })
    dir = mkdtempSync(join(tmpdir(), 'servegate-redact-'))
  })
  afterAll(async () => {
    await sim?.close()
    if (dir) rmSync(dir, { recursive: true, force: true })
  })

  it('never reach the result file written by a sweep', async () => {
    const out = join(dir, 'result.json')
    const cfg = resolveConfig({
      file: null,
      filePath: null,
      flags: {
        baseUrl: sim.url,
        inputLen: '16',
        outputLen: '4',
        concurrency: '1',
        repeats: '1',
        promptsPerConcurrency: '2',
        warmup: '0',
        out,
        serveCommand: `docker run -e HF_TOKEN=${HF} vllm/vllm-openai --model org/m --api-key ${API_KEY} --tokenizer org/tok`,
        containerDigest: `registry.example/vllm@sha256:abc?token=${DIGEST_TOKEN}`,
      },
      env: { HF_TOKEN: HF },
    })
    await runSweep(cfg, { log: () => {} })
    const text = readFileSync(out, 'utf8')
    for (const secret of [API_KEY, HF, DIGEST_TOKEN]) expect(text).not.toContain(secret)
    const result = JSON.parse(text) as { env: { serve_command: string; container_digest: string }; config: { serve_command: string } }
    expect(result.env.serve_command).toBe('docker run -e HF_TOKEN=*** vllm/vllm-openai --model org/m --api-key *** --tokenizer org/tok')
    expect(result.config.serve_command).toBe(result.env.serve_command)
    expect(result.env.container_digest).toBe('registry.example/vllm@sha256:abc?token=***')
  })
})
