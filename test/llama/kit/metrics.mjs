// What the front measures of each request on its own clock (process.hrtime, ns), and each engine's
// exposition of it under that engine's names, units and buckets. Nothing here is invented: a figure
// the front cannot measure is left out, never filled in.
//
// - llama.cpp's llama-server (tools/server/server-context.cpp, the /metrics handler): llamacpp:*
//   counters and gauges only, no latency histograms. prompt_tokens_total counts the prompt tokens
//   llama.cpp evaluated (n_prompt_tokens_processed), so tokens reused from a sequence's cache do not
//   count; prompt_seconds_total and tokens_predicted_seconds_total are the time spent on them.
// - SGLang (python/sglang/srt/metrics/collector.py, TokenizerMetricsCollector): sglang:* seconds
//   histograms of time to first token, inter-token latency (one observation per streamed token) and
//   end-to-end latency, and counters of prompt, generated and cached prompt tokens, all counted when a
//   request finishes; cached_tokens_total has no sample until a request had a cached token
//   (observe_one_finished_request increments it only when cached_tokens > 0).
// - TensorRT-LLM's trtllm-serve (tensorrt_llm/metrics/collector.py, at /prometheus/metrics;
//   tensorrt_llm/executor/result.py, _process_req_perf_metrics): trtllm_* seconds histograms of time
//   to first token, time per output token (per request: (last − first token) / (tokens − 1)),
//   end-to-end latency (to the last token) and queue time, a success counter by finish reason and
//   the prompt and generation token counters, with the labels openai_server.py gives its collector.

/** A cumulative histogram as prometheus_client keeps one: counts by upper bound (+Inf last), the sum. */
export class Histogram {
  constructor(bounds) {
    this.bounds = bounds
    this.counts = new Array(bounds.length + 1).fill(0)
    this.sum = 0
  }
  observe(value) {
    let i = this.bounds.findIndex((b) => value <= b)
    if (i < 0) i = this.bounds.length
    this.counts[i]++
    this.sum += value
  }
  get count() {
    return this.counts.reduce((a, b) => a + b, 0)
  }
}

// SGLang's default buckets (TokenizerMetricsCollector), seconds.
const SGLANG_TTFT = [0.1, 0.2, 0.4, 0.6, 0.8, 1, 2, 4, 6, 8, 10, 20, 40, 60, 80, 100, 200, 400]
const SGLANG_ITL = [0.002, 0.004, 0.006, 0.008, 0.01, 0.015, 0.02, 0.025, 0.03, 0.035, 0.04, 0.06, 0.08, 0.1, 0.2, 0.4, 0.6, 0.8, 1, 2, 4, 6, 8]
const SGLANG_E2E = [0.1, 0.2, 0.4, 0.6, 0.8, 1, 2, 4, 6, 8, 10, 20, 40, 60, 80, 100, 200, 400, 600, 1200, 1800, 2400]
// TensorRT-LLM's default buckets (MetricsCollector), seconds.
const TRTLLM_E2E = [0.3, 0.5, 0.8, 1, 1.5, 2, 2.5, 5, 10, 15, 20, 30, 40, 50, 60, 120, 240, 480, 960, 1920, 7680]
const TRTLLM_TTFT = [0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10, 20, 40, 80, 160, 640, 2560]
const TRTLLM_TPOT = [0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1, 2.5, 5, 7.5, 10, 20, 40, 80]

const seconds = (fromNs, toNs) => Number(toNs - fromNs) / 1e9

/** The front's counts and latency histograms; `record` takes one finished request. */
export class FrontStats {
  constructor() {
    // Live, as llama-server counts: requests holding or waiting for a sequence, tokens as llama.cpp works on them.
    this.processing = 0
    this.deferred = 0
    this.promptEvaluated = 0
    this.generatedLive = 0
    this.promptSeconds = 0
    this.predictSeconds = 0
    // Counted when a request finishes, as SGLang and TensorRT-LLM count.
    this.promptTokens = 0
    this.cachedTokens = 0
    this.generatedTokens = 0
    this.finished = new Map()
    this.completedSinceStats = 0
    this.sglang = { ttft: new Histogram(SGLANG_TTFT), itl: new Histogram(SGLANG_ITL), e2e: new Histogram(SGLANG_E2E) }
    this.trtllm = { ttft: new Histogram(TRTLLM_TTFT), tpot: new Histogram(TRTLLM_TPOT), e2e: new Histogram(TRTLLM_E2E), queue: new Histogram(TRTLLM_E2E) }
  }

  /**
   * One finished request: `arrivalNs` (the front read it), `scheduledNs` (it got a sequence),
   * `tokenNs` (each generated token, as it was written), `endNs`, its prompt's tokens, how many of
   * them llama.cpp reused from the sequence's cache, and its finish reason.
   */
  record({ arrivalNs, scheduledNs, tokenNs, endNs, promptTokens, cachedTokens, finish }) {
    const n = tokenNs.length
    this.promptTokens += promptTokens
    this.cachedTokens += cachedTokens
    this.generatedTokens += n
    this.finished.set(finish, (this.finished.get(finish) ?? 0) + 1)
    this.completedSinceStats++
    if (n === 0) return
    const first = tokenNs[0]
    const last = tokenNs[n - 1]
    this.promptSeconds += seconds(scheduledNs, first)
    this.predictSeconds += seconds(first, last)
    this.sglang.ttft.observe(seconds(arrivalNs, first))
    for (let i = 1; i < n; i++) this.sglang.itl.observe(seconds(tokenNs[i - 1], tokenNs[i]))
    this.sglang.e2e.observe(seconds(arrivalNs, endNs))
    this.trtllm.ttft.observe(seconds(arrivalNs, first))
    this.trtllm.e2e.observe(seconds(arrivalNs, last))
    if (n > 1) this.trtllm.tpot.observe(seconds(first, last) / (n - 1))
    // trtllm keeps only positive figures (_process_req_perf_metrics): a request that got a sequence at once has no queue time.
    if (scheduledNs > arrivalNs) this.trtllm.queue.observe(seconds(arrivalNs, scheduledNs))
  }
}

/** A number as prometheus_client writes it (floatToGoString): 3 → "3.0", ∞ → "+Inf". */
function num(v) {
  if (v === Number.POSITIVE_INFINITY) return '+Inf'
  return Number.isInteger(v) ? `${v}.0` : String(v)
}

function labelText(labels) {
  const parts = Object.entries(labels).map(([k, v]) => `${k}="${String(v).replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`)
  return parts.length === 0 ? '' : `{${parts.join(',')}}`
}

/** One family: HELP, TYPE and its samples (none where `samples` is empty, as for a labelled metric never touched). */
function family(name, type, help, samples) {
  return [`# HELP ${name} ${help}`, `# TYPE ${name} ${type}`, ...samples].join('\n') + '\n'
}

function histogramFamily(name, help, h, labels) {
  const samples = []
  if (h.count > 0) {
    let cumulative = 0
    const bounds = [...h.bounds, Number.POSITIVE_INFINITY]
    bounds.forEach((le, i) => {
      cumulative += h.counts[i]
      samples.push(`${name}_bucket${labelText({ ...labels, le: num(le) })} ${num(cumulative)}`)
    })
    samples.push(`${name}_count${labelText(labels)} ${num(h.count)}`, `${name}_sum${labelText(labels)} ${num(h.sum)}`)
  }
  return family(name, 'histogram', help, samples)
}

/** llama-server's /metrics: counters, then gauges, as its handler writes them (uint64 counts print without a decimal point). */
export function llamacppText(s) {
  const m = [
    ['prompt_tokens_total', 'counter', 'Number of prompt tokens processed.', s.promptEvaluated],
    ['prompt_seconds_total', 'counter', 'Prompt process time', s.promptSeconds],
    ['tokens_predicted_total', 'counter', 'Number of generation tokens processed.', s.generatedLive],
    ['tokens_predicted_seconds_total', 'counter', 'Predict process time', s.predictSeconds],
    ['requests_processing', 'gauge', 'Number of requests processing.', s.processing],
    ['requests_deferred', 'gauge', 'Number of requests deferred.', s.deferred],
  ]
  return m.map(([name, type, help, v]) => family(`llamacpp:${name}`, type, help, [`llamacpp:${name} ${v}`])).join('')
}

/** SGLang's /metrics (with --enable-metrics): the tokenizer manager's families, labelled by the served model's name. */
export function sglangText(s, modelName) {
  const l = { model_name: modelName }
  const counter = (name, help, v, always = true) =>
    family(`sglang:${name}`, 'counter', help, always || v > 0 ? [`sglang:${name}${labelText(l)} ${num(v)}`] : [])
  const touched = s.finished.size > 0
  return [
    counter('prompt_tokens_total', 'Number of prefill tokens processed.', s.promptTokens, touched),
    counter('generation_tokens_total', 'Number of generation tokens processed.', s.generatedTokens, touched),
    counter('cached_tokens_total', 'Number of cached prompt tokens.', s.cachedTokens, false),
    counter(
      'num_requests_total',
      'Number of requests processed.',
      [...s.finished.values()].reduce((a, b) => a + b, 0),
      touched,
    ),
    histogramFamily('sglang:time_to_first_token_seconds', 'Histogram of time to first token in seconds.', s.sglang.ttft, l),
    histogramFamily('sglang:inter_token_latency_seconds', 'Histogram of inter-token latency in seconds.', s.sglang.itl, l),
    histogramFamily('sglang:e2e_request_latency_seconds', 'Histogram of End-to-end request latency in seconds', s.sglang.e2e, l),
    family('sglang:num_running_reqs', 'gauge', 'The number of running requests.', [`sglang:num_running_reqs${labelText(l)} ${num(s.processing)}`]),
    family('sglang:num_queue_reqs', 'gauge', 'The number of requests in the waiting queue.', [`sglang:num_queue_reqs${labelText(l)} ${num(s.deferred)}`]),
  ].join('')
}

/** trtllm-serve's /prometheus/metrics: the per-request families of its MetricsCollector. */
export function trtllmText(s) {
  // openai_server.py: MetricsCollector({"model_name": "undefined", "engine_type": "undefined"}).
  const l = { model_name: 'undefined', engine_type: 'undefined' }
  const success = [...s.finished].map(([reason, n]) => `trtllm_request_success_total${labelText({ ...l, finished_reason: reason })} ${num(n)}`)
  const counter = (name, help, v) => family(`trtllm_${name}`, 'counter', help, v > 0 ? [`trtllm_${name}${labelText(l)} ${num(v)}`] : [])
  return [
    family('trtllm_request_success_total', 'counter', 'Count of successfully processed requests.', success),
    histogramFamily('trtllm_e2e_request_latency_seconds', 'Histogram of end to end request latency in seconds.', s.trtllm.e2e, l),
    histogramFamily('trtllm_time_to_first_token_seconds', 'Histogram of time to first token in seconds.', s.trtllm.ttft, l),
    histogramFamily('trtllm_time_per_output_token_seconds', 'Histogram of time per output token in seconds.', s.trtllm.tpot, l),
    histogramFamily('trtllm_request_queue_time_seconds', 'Histogram of time spent in WAITING phase for request.', s.trtllm.queue, l),
    counter('prompt_tokens_total', 'Cumulative number of prompt (input) tokens processed.', s.promptTokens),
    counter('generation_tokens_total', 'Cumulative number of generation (output) tokens produced.', s.generatedTokens),
  ].join('')
}

/**
 * trtllm-serve's /metrics: JSON, a list of the engine's iteration stats since the last call
 * (get_iteration_stats). The front does not see llama.cpp's iterations, so it answers one entry of
 * the fields it knows, in that shape.
 */
export function trtllmIterationStats(s, maxActive) {
  const entry = {
    timestamp: new Date().toISOString(),
    numActiveRequests: s.processing,
    numQueuedRequests: s.deferred,
    numCompletedRequests: s.completedSinceStats,
    maxNumActiveRequests: maxActive,
    cpuMemUsage: process.memoryUsage().rss,
  }
  s.completedSinceStats = 0
  return [entry]
}
