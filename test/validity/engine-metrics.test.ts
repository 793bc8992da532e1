import { request as httpRequest } from 'node:http'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { SimHandle } from '../../src/sim/index.js'
import type { RunResult } from '../../src/types.js'
import { codes, detail, measure, point, sim } from './harness.js'
import { answerJson, startFront, type HttpFront } from '../fixtures/http-front.js'

// The server-side figures and the prefix-cache check read each engine's own metric names. Fronts
// over the simulator rename its vLLM metrics as each engine exposes them: SGLang (`sglang:*` at
// /metrics, the prefix cache as cached_tokens_total out of prompt_tokens_total) and trtllm-serve
// (JSON iteration stats at /metrics, `trtllm_*` Prometheus text at /prometheus/metrics, its time
// per output token a per-request figure).
const SGLANG: Record<string, string> = {
  'vllm:time_to_first_token_seconds': 'sglang:time_to_first_token_seconds',
  'vllm:inter_token_latency_seconds': 'sglang:inter_token_latency_seconds',
  'vllm:e2e_request_latency_seconds': 'sglang:e2e_request_latency_seconds',
  'vllm:prompt_tokens_total': 'sglang:prompt_tokens_total',
  'vllm:generation_tokens_total': 'sglang:generation_tokens_total',
  'vllm:prefix_cache_hits_total': 'sglang:cached_tokens_total',
}
const TRTLLM: Record<string, string> = {
  'vllm:time_to_first_token_seconds': 'trtllm_time_to_first_token_seconds',
  'vllm:request_time_per_output_token_seconds': 'trtllm_time_per_output_token_seconds',
  'vllm:e2e_request_latency_seconds': 'trtllm_e2e_request_latency_seconds',
}

/** Prometheus text with the families of `names` renamed and every other vllm: family dropped. */
function rename(text: string, names: Record<string, string>): string {
  const out: string[] = []
  for (const line of text.split('\n')) {
    const m = /^(# (?:HELP|TYPE) )?(vllm:[a-z_]+?)(_bucket|_sum|_count)?([ {].*)$/.exec(line)
    if (m === null) {
      out.push(line)
      continue
    }
    const base = Object.keys(names).find((n) => m[2] === n || `${m[2]}${m[3] ?? ''}` === n)
    if (base === undefined) continue
    out.push(line.replace(base, names[base]!))
  }
  return out.join('\n')
}

/** A front over the simulator speaking one engine's metrics; everything else passes through. */
function front(target: string, engine: 'sglang' | 'trtllm'): Promise<HttpFront> {
  return startFront(target, async (req, res, { get }) => {
    const prometheus = async (names: Record<string, string>): Promise<true> => {
      const up = await get('/metrics')
      res.writeHead(up.status, { 'content-type': 'text/plain; version=0.0.4' })
      res.end(rename(up.body, names))
      return true
    }
    if (engine === 'sglang' && req.path === '/metrics') return prometheus(SGLANG)
    if (engine === 'trtllm' && req.path === '/metrics') return answerJson(res, 200, '[{"gpuMemUsage": 1024, "iter": 1, "numActiveRequests": 0}]')
    if (engine === 'trtllm' && req.path === '/prometheus/metrics') return prometheus(TRTLLM)
    return false
  })
}

/**
 * A front over the simulator for an engine with no cache counters it exposes, whose usage reports
 * `prompt_tokens_details.cached_tokens` (OpenAI's field; SGLang's usage, vLLM's with
 * --enable-prompt-tokens-details): a prompt it has seen before is served from its cache whole.
 */
function usageCacheFront(target: string): Promise<HttpFront> {
  const seen = new Set<string>()
  const t = new URL(target)
  return startFront(target, (req, res) => {
    if (req.path === '/metrics') return answerJson(res, 404, { detail: 'Not Found' })
    if (req.path !== '/v1/completions') return false
    const body = JSON.parse(req.body.toString()) as { prompt: unknown }
    const key = JSON.stringify(body.prompt)
    const cached = seen.has(key) && Array.isArray(body.prompt) ? body.prompt.length : 0
    seen.add(key)
    const up = httpRequest({ host: t.hostname, port: t.port, path: '/v1/completions', method: 'POST', headers: req.headers }, (r) => {
      res.writeHead(r.statusCode ?? 502, r.headers)
      r.on('data', (c: Buffer) =>
        res.write(
          c.toString().replace(/"usage":\{"prompt_tokens":(\d+),/g, `"usage":{"prompt_tokens":$1,"prompt_tokens_details":{"cached_tokens":${cached}},`),
        ),
      )
      r.on('end', () => res.end())
    })
    up.on('error', () => res.destroy())
    up.end(req.body)
    return true
  })
}

describe("each engine's metric names", () => {
  let handle: SimHandle
  const fronts: Array<{ close(): Promise<void> }> = []
  beforeAll(async () => {
    handle = await sim({ ttftMs: 10, itlMs: 2, prefixCache: true })
  })
  afterAll(async () => {
    await Promise.all(fronts.map((f) => f.close()))
    await handle?.close()
  })
  const through = async (engine: 'sglang' | 'trtllm'): Promise<SimHandle> => {
    const f = await front(handle.url, engine)
    fronts.push(f)
    return { ...handle, url: f.url }
  }

  it("reads SGLang's sglang:* histograms and counters as server-side figures", async () => {
    const run: RunResult = await measure(await through('sglang'), point({ concurrency: 2, outputLen: 16, seed: 101 }))
    const s = run.server_side
    expect(s).not.toBeNull()
    expect(s!.ttft_ms.p50).toBeGreaterThan(0)
    expect(s!.itl_ms?.p50).toBeGreaterThan(0)
    expect(s!.e2el_ms.p50).toBeGreaterThan(s!.ttft_ms.p50!)
    expect(s!.generation_tokens).toBe(run.completed * 16)
    expect(s!.prompt_tokens).toBe(run.completed * 32)
    expect(s!.prefix_cache_hits).toBe(0)
  })

  it('catches a contaminated prefix cache on SGLang’s names: the same prompts twice', async () => {
    const sglang = await through('sglang')
    const p = point({ concurrency: 4, inputLen: 256, outputLen: 8, numPrompts: 16, seed: 202 })
    const first = await measure(sglang, p)
    const second = await measure(sglang, p)
    expect(codes(first)).not.toContain('prefix_cache_contaminated')
    const hits = second.server_side?.prefix_cache_hits ?? 0
    expect(hits).toBeGreaterThan(0)
    expect(codes(second)).toContain('prefix_cache_contaminated')
    expect(detail(second, 'prefix_cache_contaminated')).toContain(`served ${hits} prompt tokens of `)
  })

  it("catches a contaminated prefix cache from usage's cached_tokens where the engine exposes no cache counters", async () => {
    const f = await usageCacheFront(handle.url)
    fronts.push(f)
    const engine = { ...handle, url: f.url }
    const p = point({ concurrency: 4, inputLen: 256, outputLen: 8, numPrompts: 16, seed: 404 })
    const first = await measure(engine, p)
    const second = await measure(engine, p)
    expect(first.server_side?.prefix_cache_hits ?? null).toBeNull()
    expect(first.tokens.prompt_cached_usage).toBe(0)
    expect(codes(first)).not.toContain('prefix_cache_contaminated')
    expect(second.tokens.prompt_cached_usage).toBe(second.completed * 256)
    expect(codes(second)).toContain('prefix_cache_contaminated')
    expect(detail(second, 'prefix_cache_contaminated')).toContain(
      `The server's usage (prompt_tokens_details.cached_tokens) says its prefix cache served ${second.completed * 256} prompt tokens of ${second.completed * 256} prompt tokens (100`,
    )
  })

  it("reads trtllm-serve's trtllm_* metrics at /prometheus/metrics when /metrics answers JSON", async () => {
    const run = await measure(await through('trtllm'), point({ concurrency: 2, outputLen: 16, seed: 303 }))
    const s = run.server_side
    expect(s).not.toBeNull()
    expect(s!.ttft_ms.p50).toBeGreaterThan(0)
    expect(s!.tpot_ms?.p50).toBeGreaterThan(0)
    // Its time per output token is per request: no per-gap histogram, so no server-side ITL.
    expect(s!.itl_ms).toBeNull()
    expect(s!.e2el_ms.p50).toBeGreaterThan(0)
  })
})
