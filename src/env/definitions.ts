/**
 * The definitions every result is measured under, recorded in `env.definitions`
 * so a reader never has to guess where a clock started (METHODOLOGY: "Forgetting
 * where the clock starts"). They follow `vllm bench serve` so numbers compare;
 * docs/methodology.md, "Where servegate differs from `vllm bench serve`", lists the exceptions.
 */
export const DEFINITIONS: Readonly<Record<string, string>> = {
  clock: 'client-side monotonic clock (process.hrtime.bigint) on the load-generating host; includes network, proxies and server tokenization',
  ttft: 'time to first token: request sent → first SSE chunk carrying non-empty content or reasoning text, at the client',
  itl: 'inter-token latency: gaps between consecutive content chunks of one request, at the client (per chunk; itl_per_token_ms divides multi-token chunks)',
  tpot: 'time per output token: (E2EL − TTFT) / (output_tokens − 1) per request; undefined for 1-token outputs',
  e2el: 'end-to-end latency: request sent → last content chunk, at the client (stream end recorded beside it)',
  output_tokens:
    "server's usage.completion_tokens (stream_options.include_usage); the client's count of content chunks is kept beside it and disagreements are reported",
  output_throughput: 'completed output tokens / measured duration (first send → last completion), tok/s',
  tok_s_per_user: 'median over requests of 1000 / TPOT_ms, tok/s',
  percentiles: 'p50/p95/p99 and mean over the full distribution of measured (non-warmup) requests of one run; never means of means',
  warmup: 'warmup requests run before each point at its concurrency and are discarded; their count is recorded per run',
}
