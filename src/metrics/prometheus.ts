/**
 * Server-side figures from the engine's Prometheus `/metrics`, scraped before
 * and after a run: the run's share is the difference (counters and histogram
 * buckets only grow). Series of one metric are summed across label sets
 * (several models or engines behind one endpoint). Seconds become ms.
 *
 * Percentiles follow Prometheus' histogram_quantile: rank = q × count; the
 * first bucket whose cumulative count reaches the rank is interpolated
 * linearly between its lower bound (the previous `le`, or 0) and its `le`;
 * a rank in the +Inf bucket returns the highest finite `le`. The mean is
 * Δ_sum / Δ_count. These are bucket estimates, never as fine as the client's.
 */
import type { LatencyStats, ServerSide } from '../types.js'
import { parsePrometheusText, parseValue, type PromSample } from './prom-text.js'

export { parsePrometheusText, type PromExposition, type PromSample } from './prom-text.js'

/** Cumulative bucket counts of a histogram ({le, count}, le ascending, last le = +Inf), with _sum and _count. */
export interface PromHistogramData {
  buckets: Array<{ le: number; count: number }>
  sum: number
  count: number
}

function seriesKey(labels: Record<string, string>, omit: string): string {
  return Object.keys(labels)
    .filter((k) => k !== omit)
    .sort()
    .map((k) => `${k}=${JSON.stringify(labels[k])}`)
    .join(',')
}

/** Sum by label set (ignoring `le`) of the samples named `name`. */
function byLabelSet(samples: readonly PromSample[], name: string): Map<string, number> {
  const out = new Map<string, number>()
  for (const s of samples) if (s.name === name) out.set(seriesKey(s.labels, ''), s.value)
  return out
}

/** Counter delta after − before summed over label sets; null when absent from `after` or reset (went down). */
export function counterDelta(before: readonly PromSample[], after: readonly PromSample[], name: string): number | null {
  const a = byLabelSet(after, name)
  if (a.size === 0) return null
  const b = byLabelSet(before, name)
  let total = 0
  for (const [key, v] of a) {
    const d = v - (b.get(key) ?? 0)
    if (!(d >= 0)) return null
    total += d
  }
  return total
}

/**
 * Histogram `base` (without _bucket/_sum/_count) as after − before, summed
 * across label sets; null when absent from `after` or any series went down.
 * Series with different bucket bounds are summed over the union of bounds,
 * each counting at a bound what it had at its own largest bound below it.
 */
export function histogramDelta(before: readonly PromSample[], after: readonly PromSample[], base: string): PromHistogramData | null {
  const perSeries = (samples: readonly PromSample[]): Map<string, Map<number, number>> => {
    const out = new Map<string, Map<number, number>>()
    for (const s of samples) {
      if (s.name !== `${base}_bucket` || s.labels.le === undefined) continue
      const le = parseValue(s.labels.le)
      if (le === null || Number.isNaN(le)) continue
      const key = seriesKey(s.labels, 'le')
      const m = out.get(key) ?? new Map<number, number>()
      m.set(le, s.value)
      out.set(key, m)
    }
    return out
  }
  const a = perSeries(after)
  if (a.size === 0) return null
  const b = perSeries(before)
  const deltas: Array<Array<[number, number]>> = []
  const bounds = new Set<number>()
  for (const [key, buckets] of a) {
    const prev = b.get(key)
    const series: Array<[number, number]> = []
    for (const [le, v] of buckets) {
      const d = v - (prev?.get(le) ?? 0)
      if (!(d >= 0)) return null
      series.push([le, d])
      bounds.add(le)
    }
    deltas.push(series.sort((x, y) => x[0] - y[0]))
  }
  bounds.add(Number.POSITIVE_INFINITY)
  const les = [...bounds].sort((x, y) => x - y)
  const buckets = les.map((le) => {
    let count = 0
    for (const series of deltas) {
      let at = 0
      for (const [l, c] of series) if (l <= le) at = c
      count += at
    }
    return { le, count }
  })
  const sum = counterDelta(before, after, `${base}_sum`)
  const count = counterDelta(before, after, `${base}_count`)
  const total = buckets[buckets.length - 1]?.count ?? 0
  return { buckets, sum: sum ?? Number.NaN, count: count ?? total }
}

/** histogram_quantile(q) over cumulative buckets (q in 0..1); null when there are no observations. */
export function bucketQuantile(q: number, buckets: ReadonlyArray<{ le: number; count: number }>): number | null {
  const total = buckets[buckets.length - 1]?.count ?? 0
  if (!(total > 0)) return null
  const rank = q * total
  let i = buckets.findIndex((bk) => bk.count >= rank)
  if (i < 0) i = buckets.length - 1
  const bucket = buckets[i] as { le: number; count: number }
  if (bucket.le === Number.POSITIVE_INFINITY) {
    // The +Inf bucket has no width: answer with the highest finite bound.
    return i > 0 ? (buckets[i - 1] as { le: number }).le : null
  }
  const lower = i > 0 ? (buckets[i - 1] as { le: number }).le : 0
  const below = i > 0 ? (buckets[i - 1] as { count: number }).count : 0
  if (i === 0 && bucket.le <= 0) return bucket.le
  const inBucket = bucket.count - below
  if (inBucket <= 0) return bucket.le
  return lower + (bucket.le - lower) * ((rank - below) / inBucket)
}

/** Mean and p50/p95/p99 of a histogram delta, converted from seconds to ms. */
function histogramStatsMs(h: PromHistogramData): LatencyStats {
  const q = (p: number): number | null => {
    const v = bucketQuantile(p, h.buckets)
    return v === null ? null : v * 1000
  }
  const mean = h.count > 0 && Number.isFinite(h.sum) ? (h.sum / h.count) * 1000 : null
  return { mean, p50: q(0.5), p95: q(0.95), p99: q(0.99) }
}

/**
 * Metric names by engine, each engine's newest first: servegate takes the first one the server
 * exposes. vLLM (`vllm:`); SGLang with --enable-metrics (`sglang:`; its prefix cache is counted
 * in prompt tokens served from cache, `cached_tokens_total`, out of `prompt_tokens_total`);
 * TensorRT-LLM's trtllm-serve (`trtllm_`, at /prometheus/metrics; its time per output token is
 * per request, so TPOT; its token counters `trtllm_prompt_tokens_total` and
 * `trtllm_generation_tokens_total`, and the prompt tokens its KV cache served,
 * `trtllm_prompt_cached_tokens_total`, in tensorrt_llm/metrics/collector.py); Dynamo's frontend
 * (`dynamo_frontend_`). llama.cpp's llama-server has no latency histograms, so no server-side
 * figures (its `llamacpp:prompt_tokens_total` counts only the prompt tokens it evaluated, not
 * those its slot's cache kept, so it could not count queries either).
 */
const NAMES = {
  ttft: [
    'vllm:time_to_first_token_seconds',
    'sglang:time_to_first_token_seconds',
    'trtllm_time_to_first_token_seconds',
    'dynamo_frontend_time_to_first_token_seconds',
  ],
  // Older engines call the per-token gap histogram time_per_output_token.
  itl: [
    'vllm:inter_token_latency_seconds',
    'vllm:time_per_output_token_seconds',
    'sglang:inter_token_latency_seconds',
    'sglang:time_per_output_token_seconds',
    'dynamo_frontend_inter_token_latency_seconds',
  ],
  tpot: ['vllm:request_time_per_output_token_seconds', 'trtllm_time_per_output_token_seconds'],
  e2el: [
    'vllm:e2e_request_latency_seconds',
    'sglang:e2e_request_latency_seconds',
    'trtllm_e2e_request_latency_seconds',
    'dynamo_frontend_request_duration_seconds',
  ],
  promptTokens: ['vllm:prompt_tokens_total', 'vllm:prompt_tokens', 'sglang:prompt_tokens_total', 'trtllm_prompt_tokens_total'],
  generationTokens: [
    'vllm:generation_tokens_total',
    'vllm:generation_tokens',
    'sglang:generation_tokens_total',
    'trtllm_generation_tokens_total',
    'dynamo_frontend_output_tokens_total',
  ],
  prefixQueries: [
    'vllm:prefix_cache_queries_total',
    'vllm:gpu_prefix_cache_queries_total',
    'vllm:prefix_cache_queries',
    'vllm:gpu_prefix_cache_queries',
    'sglang:prompt_tokens_total',
    'trtllm_prompt_tokens_total',
  ],
  prefixHits: [
    'vllm:prefix_cache_hits_total',
    'vllm:gpu_prefix_cache_hits_total',
    'vllm:prefix_cache_hits',
    'vllm:gpu_prefix_cache_hits',
    'sglang:cached_tokens_total',
    'trtllm_prompt_cached_tokens_total',
  ],
} as const

function firstHistogram(before: PromSample[], after: PromSample[], names: readonly string[]): PromHistogramData | null | 'reset' {
  for (const name of names) {
    if (!after.some((s) => s.name === `${name}_bucket`)) continue
    return histogramDelta(before, after, name) ?? 'reset'
  }
  return null
}

/**
 * The first of `names` the server counts. A counter declared (`# TYPE`) with no sample yet has
 * counted nothing: a labelled counter gets its first series on its first increment (SGLang's
 * `sglang:cached_tokens_total` before any prompt token is served from cache), so it reads 0.
 */
function firstCounter(before: PromSample[], after: PromSample[], afterTypes: ReadonlyMap<string, string>, names: readonly string[]): number | null {
  for (const name of names) {
    if (after.some((s) => s.name === name)) return counterDelta(before, after, name)
    if (afterTypes.get(name) === 'counter' || afterTypes.get(name.replace(/_total$/, '')) === 'counter') return 0
  }
  return null
}

/**
 * Server-side TTFT, ITL, TPOT and E2EL (ms) and token/prefix-cache counts for
 * the run between two scrapes. Null when the engine exposes no TTFT or E2E
 * histogram, or a histogram went backwards (the server restarted mid-run).
 */
export function serverSideFigures(before: string, after: string): ServerSide | null {
  const b = parsePrometheusText(before).samples
  const parsedAfter = parsePrometheusText(after)
  const a = parsedAfter.samples
  const types = parsedAfter.types
  const ttft = firstHistogram(b, a, NAMES.ttft)
  const e2el = firstHistogram(b, a, NAMES.e2el)
  const itl = firstHistogram(b, a, NAMES.itl)
  const tpot = firstHistogram(b, a, NAMES.tpot)
  if (ttft === null || e2el === null) return null
  if ([ttft, e2el, itl, tpot].includes('reset')) return null
  const stats = (h: PromHistogramData | null | 'reset'): LatencyStats | null => (h === null || h === 'reset' ? null : histogramStatsMs(h))
  return {
    source: 'prometheus',
    ttft_ms: stats(ttft) as LatencyStats,
    itl_ms: stats(itl),
    tpot_ms: stats(tpot),
    e2el_ms: stats(e2el) as LatencyStats,
    prompt_tokens: firstCounter(b, a, types, NAMES.promptTokens),
    generation_tokens: firstCounter(b, a, types, NAMES.generationTokens),
    prefix_cache_queries: firstCounter(b, a, types, NAMES.prefixQueries),
    prefix_cache_hits: firstCounter(b, a, types, NAMES.prefixHits),
  }
}
