import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { resolveConfig } from '../../src/config/resolve.js'
import { startSim } from '../../src/sim/index.js'
import { runSweep } from '../../src/sweep/run-sweep.js'
import { answerJson, startFront } from '../fixtures/http-front.js'

// A sweep through a gateway that routes on a header: every request to the server (probe, models,
// /tokenize, /metrics, generation) must carry it, every generation body carries the extra fields
// beside the methodology's own, and the header's value appears in no file servegate writes.
const ROUTE = 'route-token-5f1c2a9e7b'

describe('--header and --extra-body through a routing gateway', () => {
  let dir: string
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'servegate-request-extras-'))
  })
  afterAll(() => rmSync(dir, { recursive: true, force: true }))

  it('sends the header on every request and the extra fields in every body; records neither value', async () => {
    const sim = await startSim({ ttftMs: 2, itlMs: 1 })
    const gw = await gateway(sim.url)
    const out = join(dir, 'result.json')
    const lines: string[] = []
    try {
      const cfg = resolveConfig({
        file: null,
        filePath: null,
        flags: {
          baseUrl: gw.url,
          api: 'chat',
          inputLen: '32',
          outputLen: '8',
          concurrency: '2',
          repeats: '1',
          promptsPerConcurrency: '4',
          warmup: '1',
          out,
          header: [`x-route: ${ROUTE}`],
          extraBody: '{"min_tokens": 8, "chat_template_kwargs": {"enable_thinking": false}}',
        },
        env: {},
      })
      const { result } = await runSweep(cfg, { log: (l) => lines.push(l) })
      expect(gw.refused).toEqual([])
      // Every kind of request went through the gateway, and passed it.
      const paths = new Set(gw.seen.map((s) => s.path))
      for (const p of ['/v1/models', '/tokenize', '/v1/chat/completions']) expect(paths, [...paths].join(' ')).toContain(p)
      const bodies = gw.seen.filter((s) => s.path === '/v1/chat/completions').map((s) => JSON.parse(s.body) as Record<string, unknown>)
      // The probe of 2 tokens carries the extra fields too: a server that needs them would refuse it otherwise.
      const [probes, sweep] = [bodies.filter((b) => b['max_tokens'] === 2), bodies.filter((b) => b['max_tokens'] === 8)]
      expect(probes.length).toBeGreaterThan(0)
      expect(sweep.length).toBeGreaterThanOrEqual(4 * 2)
      for (const body of probes) expect(body).toMatchObject({ min_tokens: 8, chat_template_kwargs: { enable_thinking: false }, ignore_eos: true })
      for (const body of sweep) {
        expect(body).toMatchObject({ min_tokens: 8, chat_template_kwargs: { enable_thinking: false }, ignore_eos: true, stream: true, temperature: 0 })
      }
      expect(result.config['server']).toMatchObject({ headers: { 'x-route': '<redacted>' }, extra_body: { min_tokens: 8 } })
      expect(result.fingerprint?.request_extras).toBe('headers x-route; extra_body {"chat_template_kwargs":{"enable_thinking":false},"min_tokens":8}')
      expect(readFileSync(out, 'utf8')).not.toContain(ROUTE)
      expect(lines.join('\n')).not.toContain(ROUTE)
      // The header ends with the sweep: a later request of this process carries none.
      const { authHeaders } = await import('../../src/util/auth.js')
      expect(authHeaders(null)).toEqual({})
    } finally {
      await gw.close()
      await sim.close()
    }
  }, 60_000)
})

/** A front to `target` that refuses (403) any request without `x-route: ROUTE`, keeping what it saw; the header goes no further. */
async function gateway(target: string) {
  const seen: Array<{ path: string; body: string }> = []
  const refused: string[] = []
  const front = await startFront(target, (req, res) => {
    if (req.headers['x-route'] !== ROUTE) {
      refused.push(`${req.method} ${req.path}`)
      return answerJson(res, 403, { error: 'no route' })
    }
    seen.push({ path: req.path, body: req.body.toString() })
    const forward = { ...req.headers }
    delete forward['x-route']
    return { forward }
  })
  return { ...front, seen, refused }
}
