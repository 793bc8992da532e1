/**
 * Server-side metrics in Prometheus text format under vLLM's names. Times are
 * measured from when a request reaches the engine (after any front delay), so
 * client-minus-server differences are attributable. Buckets are a superset of
 * vLLM's, with finer low buckets so time-scaled runs still resolve.
 */

const TTFT_BUCKETS = [
  0.001, 0.0025, 0.005, 0.0075, 0.01, 0.015, 0.02, 0.03, 0.04, 0.05, 0.06, 0.08, 0.1, 0.125, 0.15, 0.2, 0.25, 0.3, 0.4, 0.5, 0.75, 1, 2.5, 5, 7.5, 10, 20, 40,
  80, 160, 640, 2560,
]
const ITL_BUCKETS = [
  0.0005, 0.001, 0.0025, 0.005, 0.0075, 0.01, 0.0125, 0.015, 0.0175, 0.02, 0.0225, 0.025, 0.03, 0.035, 0.04, 0.045, 0.05, 0.06, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4,
  0.5, 0.75, 1, 2.5, 5, 7.5, 10, 20, 40, 80,
]
const E2E_BUCKETS = [0.05, 0.1, 0.2, 0.3, 0.5, 0.8, 1, 1.5, 2, 2.5, 5, 10, 15, 20, 30, 40, 50, 60, 120, 240, 480, 960, 1920, 7680]

/** A cumulative-bucket histogram of seconds; observe() is allocation-free. */
export class PromHistogram {
  readonly counts: Float64Array
  sum = 0
  count = 0

  constructor(
    readonly name: string,
    readonly help: string,
    readonly buckets: readonly number[],
  ) {
    this.counts = new Float64Array(buckets.length)
  }

  /** Record one value in seconds. */
  observe(seconds: number): void {
    this.sum += seconds
    this.count++
    const b = this.buckets
    let lo = 0
    let hi = b.length
    while (lo < hi) {
      const mid = (lo + hi) >>> 1
      if ((b[mid] as number) < seconds) lo = mid + 1
      else hi = mid
    }
    if (lo < b.length) this.counts[lo] = (this.counts[lo] as number) + 1
  }

  render(labels: string): string {
    let out = `# HELP ${this.name} ${this.help}\n# TYPE ${this.name} histogram\n`
    let cum = 0
    for (let i = 0; i < this.buckets.length; i++) {
      cum += this.counts[i] as number
      out += `${this.name}_bucket{${labels},le="${this.buckets[i]}"} ${cum}\n`
    }
    out += `${this.name}_bucket{${labels},le="+Inf"} ${this.count}\n`
    out += `${this.name}_sum{${labels}} ${this.sum}\n${this.name}_count{${labels}} ${this.count}\n`
    return out
  }
}

/** Instantaneous engine state for the gauges. */
export interface EngineGauges {
  running: number
  waiting: number
  /** KV cache usage, 0..1. */
  kvUsage: number
}

/** All counters and histograms of one simulator instance. */
export class SimMetrics {
  readonly ttft = new PromHistogram('vllm:time_to_first_token_seconds', 'Histogram of time to first token in seconds.', TTFT_BUCKETS)
  readonly itl = new PromHistogram('vllm:inter_token_latency_seconds', 'Histogram of inter-token latency in seconds.', ITL_BUCKETS)
  /** Per-gap, as older engine versions name the inter-token histogram. */
  readonly tpotGap = new PromHistogram('vllm:time_per_output_token_seconds', 'Histogram of time per output token in seconds.', ITL_BUCKETS)
  /** Per request: (e2e - ttft) / (tokens - 1). */
  readonly tpotReq = new PromHistogram('vllm:request_time_per_output_token_seconds', 'Histogram of time_per_output_token_seconds per request.', ITL_BUCKETS)
  readonly e2e = new PromHistogram('vllm:e2e_request_latency_seconds', 'Histogram of e2e request latency in seconds.', E2E_BUCKETS)
  readonly queue = new PromHistogram('vllm:request_queue_time_seconds', 'Histogram of time spent waiting before the first step.', E2E_BUCKETS)
  promptTokens = 0
  generationTokens = 0
  prefixQueries = 0
  prefixHits = 0
  preemptions = 0
  /**
   * Streams a tail fault took over: the engine has let them go, but the
   * server still holds each request open, so they count as running (a hung
   * request on a real server does too).
   */
  faultTails = 0
  readonly finished: Record<string, number> = { stop: 0, length: 0, abort: 0, error: 0 }

  /** Prometheus text exposition for `model`. */
  render(model: string, g: EngineGauges): string {
    const l = `model_name=${JSON.stringify(model)}`
    const counter = (name: string, help: string, v: number): string => `# HELP ${name} ${help}\n# TYPE ${name} counter\n${name}{${l}} ${v}\n`
    const gauge = (name: string, help: string, v: number): string => `# HELP ${name} ${help}\n# TYPE ${name} gauge\n${name}{${l}} ${v}\n`
    let out = ''
    out += gauge('vllm:num_requests_running', 'Number of requests in model execution batches.', g.running + this.faultTails)
    out += gauge('vllm:num_requests_waiting', 'Number of requests waiting to be processed.', g.waiting)
    out += gauge('vllm:kv_cache_usage_perc', 'KV-cache usage. 1 means 100 percent usage.', g.kvUsage)
    out += gauge('vllm:gpu_cache_usage_perc', 'GPU KV-cache usage. 1 means 100 percent usage.', g.kvUsage)
    out += counter('vllm:prompt_tokens_total', 'Number of prefill tokens processed.', this.promptTokens)
    out += counter('vllm:generation_tokens_total', 'Number of generation tokens processed.', this.generationTokens)
    out += counter('vllm:prefix_cache_queries_total', 'Prefix cache queries, in terms of number of queried tokens.', this.prefixQueries)
    out += counter('vllm:prefix_cache_hits_total', 'Prefix cache hits, in terms of number of cached tokens.', this.prefixHits)
    out += counter('vllm:num_preemptions_total', 'Cumulative number of preemptions from the engine.', this.preemptions)
    out += '# HELP vllm:request_success_total Count of finished requests by reason.\n# TYPE vllm:request_success_total counter\n'
    for (const [reason, v] of Object.entries(this.finished)) {
      out += `vllm:request_success_total{${l},finished_reason="${reason}"} ${v}\n`
    }
    for (const h of [this.ttft, this.itl, this.tpotGap, this.tpotReq, this.e2e, this.queue]) out += h.render(l)
    return out
  }
}
