import { describe, expect, it } from 'vitest'
import {
  assessValidity,
  describeIssue,
  DEFAULT_VALIDITY_THRESHOLDS,
  HOST_CODES,
  spoiledOnlyByHost,
  tokenNotes,
  type ValidityContext,
} from '../../src/analysis/validity.js'
import type { GpuSample, RunResult, ServerSide, ValidityCode } from '../../src/types.js'
import { cleanRun, stats } from './run-fixture.js'

const CTX: ValidityContext = { concurrency: 4, ignoreEos: true, expectPrefixCacheMisses: true }
const codes = (run: RunResult, ctx: ValidityContext = CTX) => assessValidity(run, ctx).issues.map((i) => i.code)
const detail = (run: RunResult, code: ValidityCode, ctx: ValidityContext = CTX) => assessValidity(run, ctx).issues.find((i) => i.code === code)?.detail ?? ''

const server = (over: Partial<ServerSide> = {}): ServerSide => ({
  source: 'prometheus',
  ttft_ms: stats(100),
  itl_ms: stats(20),
  tpot_ms: stats(20),
  e2el_ms: stats(1300),
  prompt_tokens: 6144,
  generation_tokens: 3072,
  prefix_cache_queries: 6144,
  prefix_cache_hits: 0,
  ...over,
})
const gpu = (over: Partial<GpuSample> = {}): GpuSample => ({
  index: 0,
  name: 'NVIDIA B200',
  utilization_pct: 95,
  sm_clock_mhz: 1900,
  max_sm_clock_mhz: 1965,
  power_w: 900,
  temperature_c: 60,
  throttle_reasons: [],
  foreign_processes: 0,
  ...over,
})
const tokens = (over: Partial<RunResult['tokens']>): RunResult['tokens'] => ({ ...cleanRun().tokens, ...over })

describe('assessValidity', () => {
  it('finds nothing wrong with a clean run, server figures and a healthy GPU', () => {
    const run = cleanRun({ server_side: server(), gpu: [gpu(), gpu({ throttle_reasons: ['gpu_idle'], utilization_pct: 0, sm_clock_mhz: 345 })] })
    expect(assessValidity(run, CTX)).toEqual({ valid: true, issues: [] })
  })

  it('replaces earlier issues rather than appending (idempotent)', () => {
    const run = cleanRun({ validity: { valid: false, issues: [{ code: 'gpu_shared', detail: 'old' }] } })
    expect(assessValidity(run, CTX)).toEqual({ valid: true, issues: [] })
  })

  describe('client_saturated', () => {
    const client = (over: Partial<NonNullable<RunResult['client']>>) => cleanRun({ client: { ...cleanRun().client!, ...over } })
    it('fires on event-loop utilisation at the limit, with the figure', () => {
      expect(detail(client({ event_loop_utilization: 0.53 }), 'client_saturated')).toMatch(/53\.0% \(limit 50\.0%\)/)
    })
    it('fires on an event-loop delay p99 above 5 ms', () => {
      expect(detail(client({ event_loop_delay_p99_ms: 7 }), 'client_saturated')).toMatch(/event-loop delay p99 was 7 ms \(limit 5 ms\)/)
    })
    it('does not fire on send lag alone (closed-loop refill bursts)', () => {
      expect(codes(client({ send_lag_p99_ms: 70 }))).toEqual([])
    })
    it('fires when too few requests were in flight while others waited, and names an idle GPU', () => {
      const run = cleanRun({ client: { ...cleanRun().client!, mean_in_flight: 2.5 }, gpu: [gpu({ utilization_pct: 20 })] })
      expect(detail(run, 'client_saturated')).toMatch(/only 2\.50 of 4 requests were in flight.*GPU utilisation averaged only 20%/)
    })
    it('does not judge in-flight when every request fit in the slots at once', () => {
      expect(codes(cleanRun({ num_prompts: 4, client: { ...cleanRun().client!, mean_in_flight: 2 } }))).not.toContain('client_saturated')
    })
    it('does not fire just below the limits', () => {
      expect(codes(client({ event_loop_utilization: 0.49, event_loop_delay_p99_ms: 5, mean_in_flight: 3.8 }))).toEqual([])
    })
  })

  describe('token_count_mismatch', () => {
    it('fires when usage is below the chunk count (a chunk carries ≥ 1 token)', () => {
      const run = cleanRun({ tokens: tokens({ server_usage: 2400, client_chunks: 3072, tokens_per_chunk: 0.78 }) })
      expect(detail(run, 'token_count_mismatch')).toMatch(/usage reports 2400 .* client received 3072 content chunks/)
    })
    it('fires when usage exceeds what max_tokens allows', () => {
      const run = cleanRun({ tokens: tokens({ server_usage: 3840, tokens_per_chunk: 1.25 }) })
      expect(detail(run, 'token_count_mismatch')).toMatch(/3840 output tokens, more than the 3072/)
    })
    it('fires when re-tokenised text disagrees beyond its tolerance, but not within it', () => {
      expect(detail(cleanRun({ tokens: tokens({ retokenized: 2600 }) }), 'token_count_mismatch')).toMatch(/re-tokenising .* 2600 tokens/)
      expect(codes(cleanRun({ tokens: tokens({ retokenized: 2900 }) }))).toEqual([])
    })
    it("fires when the server's generation_tokens differs from the client total", () => {
      expect(detail(cleanRun({ server_side: server({ generation_tokens: 3500 }) }), 'token_count_mismatch')).toMatch(
        /counted 3500 generated tokens .* the client 3072/,
      )
    })
    it('does not fire for multi-token chunks with consistent totals, and notes them instead', () => {
      const run = cleanRun({ tokens: tokens({ server_usage: 3072, client_chunks: 1536, tokens_per_chunk: 2, retokenized: 3072 }) })
      expect(codes(run)).toEqual([])
      expect(tokenNotes(run).join(' ')).toMatch(/2\.00 tokens on average \(3072 tokens in 1536 chunks\)/)
    })
    it('allows the server more generated tokens than the client counted when requests failed', () => {
      const run = cleanRun({
        failed: 2,
        completed: 46,
        errors: { transport: 2 },
        tokens: tokens({ expected: 2944, server_usage: 2944, client_chunks: 2944 }),
        server_side: server({ generation_tokens: 3000 }),
      })
      expect(codes(run)).toEqual(['requests_failed'])
    })
  })

  describe('output_len_mismatch', () => {
    const early = cleanRun({ tokens: tokens({ server_usage: 1536, client_chunks: 1536 }) })
    it('fires when output is shorter than max_tokens with ignore_eos', () => {
      expect(detail(early, 'output_len_mismatch')).toMatch(/1536 output tokens, 50\.0% of the 3072/)
    })
    it('does not fire without ignore_eos', () => {
      expect(codes(early, { ...CTX, ignoreEos: false })).toEqual([])
    })
  })

  describe('prefix_cache_contaminated', () => {
    const hit = cleanRun({ server_side: server({ prefix_cache_hits: 512 }) })
    it('fires on any prefix-cache hit when prompts were meant to be unique', () => {
      expect(detail(hit, 'prefix_cache_contaminated')).toMatch(/served 512 prompt tokens of 6144 queried \(8\.3%\)/)
    })
    it('does not fire when reuse was expected, or under a raised hit-fraction limit', () => {
      expect(codes(hit, { ...CTX, expectPrefixCacheMisses: false })).toEqual([])
      expect(codes(hit, { ...CTX, thresholds: { prefixCacheMaxHitFraction: 0.1 } })).toEqual([])
    })
    it('lets chat prompts share the template preamble (64 tokens a request), and no more', () => {
      // 48 requests: up to 48 × 64 = 3,072 preamble tokens may come from the cache.
      const preamble = cleanRun({ server_side: server({ prefix_cache_hits: 48 * 32 }) })
      expect(codes(preamble, { ...CTX, api: 'chat' })).toEqual([])
      expect(codes(preamble, { ...CTX, api: 'completions' })).toEqual(['prefix_cache_contaminated'])
      const repeated = cleanRun({ server_side: server({ prefix_cache_hits: 48 * 64 + 1 }) })
      expect(codes(repeated, { ...CTX, api: 'chat' })).toEqual(['prefix_cache_contaminated'])
    })
    it("lets completions prompts share their unique code's head on a token-level cache (4 tokens a request), and no more", () => {
      // SGLang's radix tree matches token by token: every prompt's first code token (the serial's
      // high digit) is the same, and the same serial in two points shares up to four.
      const head = cleanRun({ server_side: server({ prefix_cache_hits: 48 * 4 }) })
      expect(codes(head, { ...CTX, api: 'completions' })).toEqual([])
      const beyond = cleanRun({ server_side: server({ prefix_cache_hits: 48 * 4 + 1 }) })
      expect(codes(beyond, { ...CTX, api: 'completions' })).toEqual(['prefix_cache_contaminated'])
      // A 4-token prompt served whole from the cache is reuse: it shares at most 3 tokens with another.
      const short = cleanRun({
        tokens: tokens({ prompt_expected: 48 * 4, prompt_server_usage: 48 * 4 }),
        server_side: server({ prefix_cache_hits: 48 * 4, prefix_cache_queries: 48 * 4 }),
      })
      expect(codes(short, { ...CTX, api: 'completions' })).toEqual(['prefix_cache_contaminated'])
      expect(
        codes(cleanRun({ tokens: tokens({ prompt_expected: 48 * 4, prompt_server_usage: 48 * 4 }), server_side: server({ prefix_cache_hits: 48 * 3 }) }), {
          ...CTX,
          api: 'completions',
        }),
      ).toEqual([])
    })
  })

  describe('ramp_dominated', () => {
    const ss = cleanRun().steady_state!
    it('fires when the ramp is above the bound', () => {
      expect(detail(cleanRun({ steady_state: { ...ss, ramp_fraction: 0.4 } }), 'ramp_dominated')).toMatch(/40\.0% of the run .*\(limit 25\.0%\)/)
    })
    it('fires when there was no all-slots-busy window at C > 1, but not at C = 1', () => {
      expect(codes(cleanRun({ steady_state: null }))).toEqual(['ramp_dominated'])
      expect(codes(cleanRun({ steady_state: null, client: { ...cleanRun().client!, mean_in_flight: 1 } }), { ...CTX, concurrency: 1 })).toEqual([])
    })
  })

  describe('requests_failed', () => {
    it('fires on any failure and counts error kinds', () => {
      const run = cleanRun({
        completed: 45,
        failed: 3,
        errors: { transport: 1, http_status: 2 },
        tokens: tokens({ expected: 2880, server_usage: 2880, client_chunks: 2880 }),
      })
      expect(assessValidity(run, CTX).issues).toEqual([{ code: 'requests_failed', detail: '3 of 48 requests failed (http_status ×2, transport ×1).' }])
    })
  })

  describe('too_few_requests', () => {
    it('fires below the minimum of completed requests', () => {
      const run = cleanRun({ completed: 8, num_prompts: 8, tokens: tokens({ expected: 512, server_usage: 512, client_chunks: 512 }) })
      expect(detail(run, 'too_few_requests', { ...CTX, concurrency: 1 })).toMatch(/only 8 requests completed \(at least 10/)
    })
    it('fires when there are too few inter-token gaps for a p99', () => {
      const run = cleanRun({ completed: 48, tokens: tokens({ expected: 96, server_usage: 96, client_chunks: 96 }) })
      expect(detail(run, 'too_few_requests')).toMatch(/only 48 inter-token gaps/)
    })
    it('does not fire at the minimums', () => {
      const run = cleanRun({ completed: 10, num_prompts: 10, tokens: tokens({ expected: 110, server_usage: 110, client_chunks: 110 }) })
      expect(codes(run, { ...CTX, concurrency: 1 })).toEqual([])
    })
  })

  describe('gpu_throttled and gpu_shared', () => {
    it('fires on a throttle reason other than idle, with the count of samples', () => {
      const run = cleanRun({ gpu: [gpu({ throttle_reasons: ['clocks_event_reasons.hw_thermal_slowdown'] }), gpu()] })
      expect(detail(run, 'gpu_throttled')).toMatch(/GPU 0 \(NVIDIA B200\) reported hw_thermal_slowdown in 1 of 2 samples/)
    })
    it('counts sw_power_cap only when the SM clock under load really dropped', () => {
      // At its power limit with the clock near maximum: the GPU doing its job.
      expect(codes(cleanRun({ gpu: [gpu({ throttle_reasons: ['sw_power_cap'], sm_clock_mhz: 1900 })] }))).toEqual([])
      expect(detail(cleanRun({ gpu: [gpu({ throttle_reasons: ['sw_power_cap'], sm_clock_mhz: 1200 })] }), 'gpu_throttled')).toMatch(
        /reported sw_power_cap in 1 of 1 samples/,
      )
    })
    it('fires on an SM clock well below max under load, not when idle', () => {
      expect(detail(cleanRun({ gpu: [gpu({ sm_clock_mhz: 1200 })] }), 'gpu_throttled')).toMatch(/1200 of 1965 MHz/)
      expect(codes(cleanRun({ gpu: [gpu({ sm_clock_mhz: 1200, utilization_pct: 10 })] }))).toEqual([])
    })
    it('fires gpu_shared when another process used the GPU', () => {
      const run = cleanRun({ gpu: [gpu(), gpu({ index: 1, foreign_processes: 2 })] })
      expect(codes(run)).toEqual(['gpu_shared'])
      expect(detail(run, 'gpu_shared')).toMatch(/GPU 1 .* up to 2 other processes/)
    })
  })
})

describe('describeIssue and thresholds', () => {
  it('has a plain sentence for every code', () => {
    const all: ValidityCode[] = [
      'client_saturated',
      'token_count_mismatch',
      'output_len_mismatch',
      'prefix_cache_contaminated',
      'ramp_dominated',
      'requests_failed',
      'too_few_requests',
      'gpu_throttled',
      'gpu_shared',
    ]
    for (const c of all) expect(describeIssue(c)).toMatch(/^[A-Z].{30,}\.$/)
  })
  it('exports frozen defaults', () => {
    expect(DEFAULT_VALIDITY_THRESHOLDS.clientEluMax).toBe(0.5)
    expect(Object.isFrozen(DEFAULT_VALIDITY_THRESHOLDS)).toBe(true)
  })
})

// Sweep host_retries measures again a run that only the host spoiled; the judgement is made on
// the run's own validity, as assessValidity gives it.
describe('spoiledOnlyByHost', () => {
  const judged = (run: RunResult) => assessValidity(run, CTX)
  const saturated = { ...cleanRun().client!, event_loop_delay_p99_ms: 9 }

  it('is true for a run invalid for host codes alone: a saturated client, a shared or throttled GPU', () => {
    expect(spoiledOnlyByHost(judged(cleanRun({ client: saturated })))).toBe(true)
    expect(spoiledOnlyByHost(judged(cleanRun({ gpu: [gpu({ foreign_processes: 1 })] })))).toBe(true)
    const both = judged(cleanRun({ client: saturated, gpu: [gpu({ foreign_processes: 1, throttle_reasons: ['hw_thermal_slowdown'] })] }))
    expect(both.issues.map((i) => i.code).sort()).toEqual(['client_saturated', 'gpu_shared', 'gpu_throttled'])
    expect(spoiledOnlyByHost(both)).toBe(true)
    expect([...HOST_CODES].sort()).toEqual(['client_saturated', 'gpu_shared', 'gpu_throttled'])
  })

  it('is false for a valid run, and for any run the engine or the sweep also spoiled', () => {
    expect(spoiledOnlyByHost(judged(cleanRun()))).toBe(false)
    // Failed requests beside a saturated client: the failures are the engine's, never measured away.
    const failing = judged(cleanRun({ client: saturated, failed: 3, errors: { http_status: 3 } }))
    expect(failing.issues.map((i) => i.code)).toEqual(expect.arrayContaining(['requests_failed', 'client_saturated']))
    expect(spoiledOnlyByHost(failing)).toBe(false)
    const cached = judged(cleanRun({ gpu: [gpu({ foreign_processes: 1 })], server_side: server({ prefix_cache_hits: 6144 }) }))
    expect(cached.issues.map((i) => i.code)).toEqual(expect.arrayContaining(['prefix_cache_contaminated', 'gpu_shared']))
    expect(spoiledOnlyByHost(cached)).toBe(false)
  })
})
