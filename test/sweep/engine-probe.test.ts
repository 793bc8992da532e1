import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createFetchJson } from '../../src/client/http.js'
import { scrapeMetrics } from '../../src/client/endpoints.js'
import { engineFromMetrics, queryServerInfo } from '../../src/env/server-info.js'
import { UsageError } from '../../src/errors.js'
import { startSim, type SimHandle } from '../../src/sim/index.js'
import { preflight } from '../../src/sweep/preflight.js'
import { answerJson, startFront, type HttpFront } from '../fixtures/http-front.js'

// Which engine answers, from its own endpoints, in front of the simulator: TGI's GET /info
// (`"router": "text-generation-router"`, router/src/lib.rs's Info) refuses the run at the probe
// with why; llama-server's and trtllm-serve's model cards name the engine (`owned_by`), which the
// environment records.
describe('the engine behind the base URL', () => {
  let sim: SimHandle
  const fronts: HttpFront[] = []
  beforeAll(async () => {
    sim = await startSim({ ttftMs: 2, itlMs: 1 })
  })
  afterAll(async () => {
    for (const f of fronts) await f.close()
    await sim.close()
  })
  const front = async (owner: string, info: unknown): Promise<string> => {
    const f = await startFront(sim.url, (req, res, { get }) => {
      // The engine's own /version, where it has one, gives its version but no name (vLLM's shape).
      if (req.path === '/version') return answerJson(res, 200, { version: '1.2.3' })
      if (req.path === '/info') return info === null ? answerJson(res, 404, { error: 'Not Found' }) : answerJson(res, 200, info)
      if (req.path === '/v1/models') {
        return get('/v1/models').then(({ body }) => {
          const j = JSON.parse(body) as { data: Array<Record<string, unknown>> }
          return answerJson(res, 200, { ...j, data: j.data.map((c) => ({ ...c, owned_by: owner })) })
        })
      }
      return false
    })
    fronts.push(f)
    return f.url
  }

  it('refuses TGI at the probe, naming it and why it cannot be measured to these rules', async () => {
    const url = await front('sim-model', { model_id: 'sim-model', router: 'text-generation-router', version: '3.3.6' })
    const err = await preflight(url, null, 'chat', null).then(
      () => null,
      (e: unknown) => e,
    )
    expect(err).toBeInstanceOf(UsageError)
    expect((err as UsageError).message).toBe(
      `The server at ${url} is Hugging Face TGI 3.3.6 (its /info names the router text-generation-router), which servegate cannot measure to its rules: TGI takes string prompts only and drops ignore_eos, so no request is held to its output length`,
    )
  })

  it('probes any other server whose /info is absent or another router, and records the engine its model card names', async () => {
    for (const [owner, info] of [
      ['llamacpp', null],
      ['tensorrt_llm', { router: 'something-else' }],
    ] as const) {
      const url = await front(owner, info)
      await expect(preflight(url, null, 'chat', null)).resolves.toEqual({ model: expect.any(String) })
      const got = await queryServerInfo(createFetchJson(), url, null)
      expect(got.engine).toEqual({ name: owner, version: '1.2.3' })
    }
    // A model card that names a model, not an engine, is no evidence.
    const other = await queryServerInfo(createFetchJson(), await front('some-org', null), null)
    expect(other.engine).toEqual({ name: 'unknown', version: '1.2.3' })
  })

  // Dynamo's frontend: its model cards say `owned_by: "nvidia"` (the vendor, as NIM's and many
  // gateways' do), its metrics are `dynamo_frontend_*` (lib/llm/src/http/service/metrics.rs).
  it("names Dynamo from its metric families, not from a vendor's owned_by", async () => {
    const dynamo = '# TYPE dynamo_frontend_requests_total counter\ndynamo_frontend_requests_total{model="m"} 3\n'
    const f = await startFront(sim.url, (req, res, { get }) => {
      if (req.path === '/version') return answerJson(res, 404, { error: 'Not Found' })
      if (req.path === '/metrics') {
        res.writeHead(200, { 'content-type': 'text/plain; version=0.0.4' })
        res.end(dynamo)
        return true
      }
      if (req.path === '/v1/models')
        return get('/v1/models').then(({ body }) => {
          const j = JSON.parse(body) as { data: Array<Record<string, unknown>> }
          return answerJson(res, 200, { ...j, data: j.data.map((c) => ({ ...c, owned_by: 'nvidia' })) })
        })
      return false
    })
    fronts.push(f)
    const got = await queryServerInfo(createFetchJson(), f.url, null, () => scrapeMetrics(f.url))
    expect(got.engine).toEqual({ name: 'dynamo', version: 'unknown' })
    // Without its metrics nothing names it.
    expect((await queryServerInfo(createFetchJson(), f.url, null)).engine).toEqual({ name: 'unknown', version: 'unknown' })
  })

  it("reads an engine from a Prometheus text only where one engine's families appear", () => {
    expect(engineFromMetrics('# HELP vllm:num_requests_running x\nvllm:num_requests_running{model_name="m"} 0\n')).toBe('vllm')
    expect(engineFromMetrics('sglang:num_running_reqs 0\n')).toBe('sglang')
    expect(engineFromMetrics('trtllm_request_success_total 4\n')).toBe('tensorrt_llm')
    expect(engineFromMetrics('llamacpp:requests_processing 1\n')).toBe('llamacpp')
    // A gateway that re-exports an engine's metrics beside its own names no one engine; a comment names none.
    expect(engineFromMetrics('dynamo_frontend_requests_total 1\nvllm:num_requests_running 0\n')).toBeNull()
    expect(engineFromMetrics('# vllm:num_requests_running\nprocess_cpu_seconds_total 1\n')).toBeNull()
    expect(engineFromMetrics(null)).toBeNull()
  })
})
