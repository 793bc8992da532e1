import { describe, expect, it } from 'vitest'
import { bucketQuantile, counterDelta, histogramDelta, parsePrometheusText, serverSideFigures } from '../../src/metrics/prometheus.js'

/** A vLLM-style exposition with two models (label sets), in vLLM's label order and style. */
function exposition(o: {
  ttftA: [number, number, number, number]
  ttftSumA: number
  ttftB: [number, number, number, number]
  ttftSumB: number
  prompt: [number, number]
  gen: [number, number]
  hits: number
  queries: number
  itlName?: string
}): string {
  const hist = (name: string, model: string, c: number[], sum: number, les = ['0.01', '0.05', '0.1', '+Inf']) =>
    les.map((le, i) => `${name}_bucket{le="${le}",model_name="${model}"} ${c[i]}.0`).join('\n') +
    `\n${name}_sum{model_name="${model}"} ${sum}\n${name}_count{model_name="${model}"} ${c[3]}.0\n`
  const itl = o.itlName ?? 'vllm:inter_token_latency_seconds'
  return `# HELP vllm:num_requests_running Number of requests in model execution batches.
# TYPE vllm:num_requests_running gauge
vllm:num_requests_running{model_name="A"} 3.0
# HELP vllm:prompt_tokens_total Number of prefill tokens processed.
# TYPE vllm:prompt_tokens_total counter
vllm:prompt_tokens_total{model_name="A"} ${o.prompt[0]}.0
vllm:prompt_tokens_total{model_name="B"} ${o.prompt[1]}.0 1700000000000
# TYPE vllm:generation_tokens_total counter
vllm:generation_tokens_total{model_name="A"} ${o.gen[0]}.0
vllm:generation_tokens_total{model_name="B"} ${o.gen[1]}.0
# TYPE vllm:prefix_cache_queries_total counter
vllm:prefix_cache_queries_total{model_name="A"} ${o.queries}.0
# TYPE vllm:prefix_cache_hits_total counter
vllm:prefix_cache_hits_total{model_name="A"} ${o.hits}.0
# HELP vllm:time_to_first_token_seconds Histogram of time to first token in seconds.
# TYPE vllm:time_to_first_token_seconds histogram
${hist('vllm:time_to_first_token_seconds', 'A', o.ttftA, o.ttftSumA)}${hist('vllm:time_to_first_token_seconds', 'B', o.ttftB, o.ttftSumB)}# TYPE ${itl} histogram
${hist(itl, 'A', [0, 0, 0, 0], 0)}# TYPE vllm:e2e_request_latency_seconds histogram
${hist('vllm:e2e_request_latency_seconds', 'A', [0, 0, 0, 0], 0, ['1.0', '2.0', '5.0', '+Inf'])}`
}

const BEFORE = exposition({
  ttftA: [0, 0, 0, 0],
  ttftSumA: 0,
  ttftB: [1, 1, 1, 1],
  ttftSumB: 0.005,
  prompt: [100, 0],
  gen: [50, 0],
  hits: 7,
  queries: 100,
})
const AFTER = exposition({
  ttftA: [2, 6, 9, 10],
  ttftSumA: 0.55,
  ttftB: [1, 3, 3, 4],
  ttftSumB: 0.205,
  prompt: [1380, 20],
  gen: [690, 10],
  hits: 7,
  queries: 1500,
})

describe('parsePrometheusText', () => {
  it('parses samples with labels in any order, escapes, +Inf and timestamps', () => {
    const p = parsePrometheusText('# TYPE x counter\nx_total{b="2",a="q\\"u\\\\o\\nte",} 5 123\ny +Inf\nz{le="+Inf"} NaN\n\nbad line here\n')
    expect(p.samples[0]).toEqual({ name: 'x_total', labels: { b: '2', a: 'q"u\\o\nte' }, value: 5 })
    expect(p.samples[1]).toEqual({ name: 'y', labels: {}, value: Number.POSITIVE_INFINITY })
    expect(Number.isNaN(p.samples[2]?.value)).toBe(true)
    expect(p.types.get('x')).toBe('counter')
    expect(p.skippedLines).toBe(1)
  })
})

describe('histogram deltas and quantiles', () => {
  it('interpolates inside buckets like histogram_quantile', () => {
    const b = [
      { le: 1, count: 10 },
      { le: 2, count: 20 },
      { le: Number.POSITIVE_INFINITY, count: 20 },
    ]
    expect(bucketQuantile(0.5, b)).toBe(1)
    expect(bucketQuantile(0.75, b)).toBe(1.5)
    expect(bucketQuantile(0.25, b)).toBe(0.5)
    expect(bucketQuantile(0.5, [{ le: Number.POSITIVE_INFINITY, count: 0 }])).toBeNull()
  })

  it('answers the highest finite bound for ranks in the +Inf bucket', () => {
    expect(
      bucketQuantile(0.99, [
        { le: 1, count: 1 },
        { le: Number.POSITIVE_INFINITY, count: 10 },
      ]),
    ).toBe(1)
  })

  it('subtracts before from after and sums label sets', () => {
    const before = parsePrometheusText(BEFORE).samples
    const after = parsePrometheusText(AFTER).samples
    const h = histogramDelta(before, after, 'vllm:time_to_first_token_seconds')
    expect(h?.buckets).toEqual([
      { le: 0.01, count: 2 },
      { le: 0.05, count: 8 },
      { le: 0.1, count: 11 },
      { le: Number.POSITIVE_INFINITY, count: 13 },
    ])
    expect(h?.count).toBe(13)
    expect(h?.sum).toBeCloseTo(0.75, 12)
    expect(counterDelta(before, after, 'vllm:prompt_tokens_total')).toBe(1300)
  })

  it('returns null for a counter that went down (server restart)', () => {
    const a = parsePrometheusText('c_total 5').samples
    const b = parsePrometheusText('c_total 9').samples
    expect(counterDelta(b, a, 'c_total')).toBeNull()
  })
})

describe('serverSideFigures', () => {
  it('gives TTFT/ITL/E2EL in ms and token and prefix-cache counts for the run', () => {
    const s = serverSideFigures(BEFORE, AFTER)
    expect(s).not.toBeNull()
    // 13 observations summing 0.75 s; p50 rank 6.5 in (0.01, 0.05]: 0.01 + 0.04·4.5/6 = 0.04 s
    expect(s?.ttft_ms.mean).toBeCloseTo(750 / 13, 9)
    expect(s?.ttft_ms.p50).toBeCloseTo(40, 9)
    expect(s?.ttft_ms.p95).toBeCloseTo(100, 9) // rank 12.35 lands in +Inf → highest finite le
    expect(s?.itl_ms).toEqual({ mean: null, p50: null, p95: null, p99: null })
    expect(s?.tpot_ms).toBeNull()
    expect(s).toMatchObject({ source: 'prometheus', prompt_tokens: 1300, generation_tokens: 650, prefix_cache_queries: 1400, prefix_cache_hits: 0 })
  })

  it('accepts the older time_per_output_token and gpu_prefix_cache names', () => {
    const old = (gen: number, hits: number) =>
      exposition({
        ttftA: [0, 1, 1, 1],
        ttftSumA: 0.02,
        ttftB: [0, 0, 0, 0],
        ttftSumB: 0,
        prompt: [0, 0],
        gen: [gen, 0],
        hits: 0,
        queries: 0,
        itlName: 'vllm:time_per_output_token_seconds',
      }).replace(/vllm:prefix_cache_/g, 'vllm:gpu_prefix_cache_') +
      `vllm:time_per_output_token_seconds_bucket{le="0.01",model_name="B"} 0\n` +
      `vllm:gpu_prefix_cache_hits_total{model_name="B"} ${hits}\n`
    const s = serverSideFigures(old(0, 0), old(5, 40))
    expect(s?.itl_ms).not.toBeNull()
    expect(s?.prefix_cache_hits).toBe(40)
    expect(s?.generation_tokens).toBe(5)
  })

  it('is null without a TTFT histogram, or when a histogram went backwards', () => {
    expect(serverSideFigures('', 'vllm:prompt_tokens_total 5')).toBeNull()
    expect(serverSideFigures(AFTER, BEFORE)).toBeNull()
  })

  // Each engine's names, as its own exposition writes them: a labelled counter (prometheus_client)
  // is declared with no sample until its first increment.
  const engine = (ttft: string, e2e: string, counters: string, n: number): string =>
    [ttft, e2e].map((h) => `# TYPE ${h} histogram\n${h}_bucket{le="0.1"} ${n}\n${h}_bucket{le="+Inf"} ${n}\n${h}_sum ${0.05 * n}\n${h}_count ${n}\n`).join('') +
    counters

  it("reads SGLang's cached-token counter as 0 while it is declared with no sample, and its count once it has one", () => {
    const sglang = (prompt: number, cached: number | null): string =>
      engine(
        'sglang:time_to_first_token_seconds',
        'sglang:e2e_request_latency_seconds',
        `# TYPE sglang:prompt_tokens_total counter\nsglang:prompt_tokens_total{model_name="m"} ${prompt}\n` +
          `# HELP sglang:cached_tokens_total Number of cached prompt tokens.\n# TYPE sglang:cached_tokens_total counter\n` +
          (cached === null ? '' : `sglang:cached_tokens_total{model_name="m"} ${cached}\n`),
        prompt / 32,
      )
    expect(serverSideFigures(sglang(0, null), sglang(320, null))).toMatchObject({ prefix_cache_queries: 320, prefix_cache_hits: 0 })
    expect(serverSideFigures(sglang(320, null), sglang(640, 310))).toMatchObject({ prefix_cache_queries: 320, prefix_cache_hits: 310 })
    // Undeclared, it was never counted: not run, never 0.
    const bare = engine('sglang:time_to_first_token_seconds', 'sglang:e2e_request_latency_seconds', 'sglang:prompt_tokens_total 64\n', 2)
    expect(serverSideFigures('', bare)?.prefix_cache_hits).toBeNull()
  })

  it("reads TensorRT-LLM's token counters and the prompt tokens its KV cache served", () => {
    const trt = (prompt: number, gen: number, cached: number): string =>
      engine(
        'trtllm_time_to_first_token_seconds',
        'trtllm_e2e_request_latency_seconds',
        `trtllm_prompt_tokens_total{model_name="m"} ${prompt}\ntrtllm_generation_tokens_total{model_name="m"} ${gen}\n` +
          `trtllm_prompt_cached_tokens_total{model_name="m"} ${cached}\n`,
        prompt / 32,
      )
    expect(serverSideFigures(trt(64, 24, 0), trt(384, 144, 32))).toMatchObject({
      prompt_tokens: 320,
      generation_tokens: 120,
      prefix_cache_queries: 320,
      prefix_cache_hits: 32,
    })
  })

  it('treats a series missing before the run as starting from zero', () => {
    const s = serverSideFigures('', AFTER)
    expect(s?.ttft_ms.p50).toBeCloseTo(10 + (40 * (7 - 3)) / 6, 9) // buckets 3,9,12,14: rank 7
    expect(s?.prompt_tokens).toBe(1400)
  })
})
