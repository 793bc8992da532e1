/**
 * Hand-made `vllm bench serve --save-result` files, written from vLLM's
 * documented key set: the setup keys, the totals and throughputs,
 * `{mean,median,std}_{metric}_ms` and `p{P}_{metric}_ms` (P as vLLM writes it,
 * `99.9` included), and with `--save-detailed` the per-request arrays in seconds.
 */
export type VllmJson = Record<string, unknown>

/** A summary-only file (no per-request arrays) at concurrency `c`; `scale` moves every latency. */
export function summaryFile(c: number, scale: number, date: string): VllmJson {
  const out: VllmJson = {
    date,
    endpoint_type: 'openai',
    backend: 'openai',
    label: null,
    model_id: 'meta-llama/Llama-3.1-8B-Instruct',
    tokenizer_id: 'meta-llama/Llama-3.1-8B-Instruct',
    num_prompts: 12 * c,
    request_rate: 'inf',
    burstiness: 1.0,
    max_concurrency: c,
    isl: 1024,
    osl: 128,
    duration: 20.5 * scale,
    completed: 12 * c,
    failed: 0,
    total_input_tokens: 12 * c * 1024,
    total_output_tokens: 12 * c * 128,
    request_throughput: (12 * c) / (20.5 * scale),
    request_goodput: null,
    output_throughput: (12 * c * 128) / (20.5 * scale),
    total_token_throughput: (12 * c * (1024 + 128)) / (20.5 * scale),
    max_output_tokens_per_s: 900,
    max_concurrent_requests: c,
  }
  const base = { ttft: 45, tpot: 11, itl: 10.5, e2el: 1450 }
  for (const [m, v] of Object.entries(base)) {
    out[`mean_${m}_ms`] = v * scale
    out[`median_${m}_ms`] = v * scale * 0.98
    out[`std_${m}_ms`] = v * scale * 0.05
    out[`p50_${m}_ms`] = v * scale * 0.98
    out[`p95_${m}_ms`] = v * scale * 1.2
    out[`p99_${m}_ms`] = v * scale * 1.4
    out[`p99.9_${m}_ms`] = v * scale * 1.6
  }
  return out
}

/** The same file without its p95 keys (vLLM's default --metric-percentiles is 99 alone). */
export function withoutP95(f: VllmJson): VllmJson {
  return Object.fromEntries(Object.entries(f).filter(([k]) => !k.startsWith('p95_') && !k.startsWith('p50_')))
}

/**
 * A `--save-detailed` file at concurrency `c`: `n` requests of `out` output tokens, TTFT 40 + i ms,
 * every ITL (10 + i % 3) ms, and one failed request (error text, zero timings) at the end.
 * It keeps the mean and median keys but no p95/p99: those come from the arrays.
 */
export function detailedFile(c: number, n: number, out: number, date: string): VllmJson {
  const ttfts: number[] = []
  const itls: number[][] = []
  const latencies: number[] = []
  for (let i = 0; i < n; i++) {
    const gap = (10 + (i % 3)) / 1000
    const ttft = (40 + i) / 1000
    ttfts.push(ttft)
    itls.push(Array.from({ length: out - 1 }, () => gap))
    latencies.push(ttft + gap * (out - 1))
  }
  const completed = n
  ttfts.push(0)
  itls.push([])
  latencies.push(0)
  const duration = 4
  return {
    date,
    backend: 'openai-chat',
    model_id: 'meta-llama/Llama-3.1-8B-Instruct',
    tokenizer_id: 'meta-llama/Llama-3.1-8B-Instruct',
    num_prompts: n + 1,
    request_rate: 'inf',
    burstiness: 1.0,
    max_concurrency: c,
    duration,
    completed,
    failed: 1,
    total_input_tokens: completed * 1024,
    total_output_tokens: completed * out,
    request_throughput: completed / duration,
    output_throughput: (completed * out) / duration,
    total_token_throughput: (completed * (1024 + out)) / duration,
    mean_ttft_ms: 999,
    median_ttft_ms: 998,
    input_lens: [...Array.from({ length: n }, () => 1024), 1024],
    output_lens: [...Array.from({ length: n }, () => out), 0],
    ttfts,
    itls,
    latencies,
    errors: [...Array.from({ length: n }, () => ''), 'HTTP 500: Internal Server Error'],
    generated_texts: Array.from({ length: n + 1 }, () => ''),
  }
}

/** numpy's default (linear) percentile of a list, ms. */
export function numpyPercentile(values: readonly number[], p: number): number {
  const xs = [...values].sort((a, b) => a - b)
  const h = ((xs.length - 1) * p) / 100
  const lo = Math.floor(h)
  const hi = Math.ceil(h)
  return xs[lo]! + (h - lo) * (xs[hi]! - xs[lo]!)
}
