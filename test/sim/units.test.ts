import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { UsageError } from '../../src/errors.js'
import { planGeneration } from '../../src/sim/generation-plan.js'
import { MinHeap } from '../../src/sim/min-heap.js'
import { lognormalFactor } from '../../src/sim/noise.js'
import { blockHashes, PrefixCache } from '../../src/sim/prefix-cache.js'
import { resolveProfile } from '../../src/sim/profiles.js'
import { PromHistogram, SimMetrics } from '../../src/sim/prom-metrics.js'
import { parseSimRequest } from '../../src/sim/request.js'
import { SseFormat } from '../../src/sim/sse-format.js'
import { countTextTokens, textTokenIds, tokensText } from '../../src/sim/tokenizer.js'
import { TraceRecorder, TraceStore } from '../../src/sim/trace.js'
import { createRng } from '../../src/util/rng.js'

describe('sim tokenizer', () => {
  it('counts whitespace-delimited words', () => {
    expect(countTextTokens('  a b\tc\n\nd ')).toBe(4)
    expect(countTextTokens('')).toBe(0)
  })
  it('generates words with a leading space that map back to their ids', () => {
    expect(tokensText(16, 3)).toBe(' tok16 tok17 tok18')
    expect(textTokenIds(tokensText(4094, 4))).toEqual([4094, 4095, 4096, 4097])
    expect(textTokenIds('hello')[0]).toBeGreaterThanOrEqual(1_000_000)
  })
})

describe('parseSimRequest', () => {
  it('reads completions with token ids, defaults and stream options', () => {
    const r = parseSimRequest(
      'completions',
      { prompt: [1, 2, 3], max_tokens: 7, stream: true, stream_options: { include_usage: true }, ignore_eos: true },
      'm',
      100,
    )
    expect(r).toMatchObject({ promptTokens: 3, maxTokens: 7, stream: true, includeUsage: true, ignoreEos: true, model: 'm' })
  })
  it('defaults max_tokens to 16 and accepts max_completion_tokens for chat', () => {
    expect(parseSimRequest('completions', { prompt: 'a' }, 'm', 100).maxTokens).toBe(16)
    expect(parseSimRequest('chat', { messages: [{ role: 'user', content: 'a b' }], max_completion_tokens: 9 }, 'm', 100)).toMatchObject({
      maxTokens: 9,
      promptTokens: 2 + 5,
    })
  })
  it("rejects a context overflow with vLLM's message", () => {
    expect(() => parseSimRequest('completions', { prompt: [1, 2], max_tokens: 99 }, 'm', 100)).toThrow(
      /maximum context length is 100 tokens. However, you requested 101 tokens/,
    )
  })
})

describe('SseFormat', () => {
  const f = new SseFormat('completions', 'cmpl-1', 'm', 5, { eol: '\n' })
  it('builds parseable content, usage and done events', () => {
    const c = f.content(' tok1')
    expect(c.startsWith('data: ')).toBe(true)
    expect(c.endsWith('\n\n')).toBe(true)
    expect(JSON.parse(c.slice(6))).toMatchObject({
      id: 'cmpl-1',
      object: 'text_completion',
      created: 5,
      model: 'm',
      choices: [{ index: 0, text: ' tok1', finish_reason: null }],
    })
    expect(JSON.parse(f.lastContent(' tok2', 'length', false).slice(6)).choices[0].finish_reason).toBe('length')
    expect(JSON.parse(f.usage(3, 4).slice(6))).toMatchObject({ choices: [], usage: { prompt_tokens: 3, completion_tokens: 4, total_tokens: 7 } })
    expect(f.done()).toBe('data: [DONE]\n\n')
  })
  it('writes a malformed line that does not parse', () => {
    expect(() => JSON.parse(f.malformed().slice(6))).toThrow()
  })
  it('uses CRLF when asked', () => {
    expect(new SseFormat('chat', 'x', 'm', 1, { eol: '\r\n' }).roleChunk().endsWith('}\r\n\r\n')).toBe(true)
  })
})

describe('PromHistogram', () => {
  it('puts values in the first bucket whose bound is ≥ the value and renders cumulative counts', () => {
    const h = new PromHistogram('x', 'help', [0.01, 0.1, 1])
    for (const v of [0.005, 0.01, 0.05, 2]) h.observe(v)
    const text = h.render('model_name="m"')
    expect(text).toContain('x_bucket{model_name="m",le="0.01"} 2\n')
    expect(text).toContain('x_bucket{model_name="m",le="0.1"} 3\n')
    expect(text).toContain('x_bucket{model_name="m",le="1"} 3\n')
    expect(text).toContain('x_bucket{model_name="m",le="+Inf"} 4\n')
    expect(text).toContain('x_count{model_name="m"} 4\n')
    expect(text).toContain('x_sum{model_name="m"} 2.065\n')
  })
  it('renders gauges and counters with the model label', () => {
    const m = new SimMetrics()
    m.promptTokens = 12
    const t = m.render('a/b', { running: 3, waiting: 1, kvUsage: 0.5 })
    expect(t).toMatch(/^vllm:num_requests_running\{model_name="a\/b"\} 3$/m)
    expect(t).toMatch(/^vllm:kv_cache_usage_perc\{model_name="a\/b"\} 0.5$/m)
    expect(t).toMatch(/^# TYPE vllm:prompt_tokens_total counter$/m)
    expect(t).toMatch(/^vllm:prompt_tokens_total\{model_name="a\/b"\} 12$/m)
  })
})

describe('planGeneration', () => {
  const opts = { seed: 1, faults: [], stopEarlyAt: null }
  it('generates exactly max_tokens with ignore_eos', () => {
    expect(planGeneration({ maxTokens: 50, ignoreEos: true }, opts, 'a')).toMatchObject({ target: 50, finishReason: 'length', fault: null, faultAt: 25 })
  })
  it('stops early at stopEarlyAt with finish reason stop', () => {
    expect(planGeneration({ maxTokens: 50, ignoreEos: true }, { ...opts, stopEarlyAt: 9 }, 'a')).toMatchObject({ target: 9, finishReason: 'stop' })
  })
  it('draws faults by rate, first listed kind first', () => {
    const p = planGeneration(
      { maxTokens: 4, ignoreEos: true },
      {
        ...opts,
        faults: [
          { kind: 'stall', rate: 1 },
          { kind: 'http500', rate: 1 },
        ],
      },
      'a',
    )
    expect(p.fault).toBe('stall')
    expect(planGeneration({ maxTokens: 4, ignoreEos: true }, { ...opts, faults: [{ kind: 'stall', rate: 0 }] }, 'a').fault).toBeNull()
  })
})

describe('lognormalFactor', () => {
  it('is exactly 1 at cv 0 and has mean ≈ 1 and the requested cv otherwise', () => {
    const rng = createRng(5)
    expect(lognormalFactor(rng, 0)).toBe(1)
    const xs = Array.from({ length: 20000 }, () => lognormalFactor(rng, 0.1))
    const mean = xs.reduce((a, b) => a + b, 0) / xs.length
    const sd = Math.sqrt(xs.reduce((a, b) => a + (b - mean) ** 2, 0) / xs.length)
    expect(mean).toBeCloseTo(1, 2)
    expect(sd / mean).toBeCloseTo(0.1, 2)
  })
})

describe('MinHeap', () => {
  it('pops in key order', () => {
    const h = new MinHeap<number>((x) => x)
    for (const x of [5, 1, 4, 1, 9, 2, 6]) h.push(x)
    const out: number[] = []
    while (h.size) out.push(h.pop() as number)
    expect(out).toEqual([1, 1, 2, 4, 5, 6, 9])
  })
})

describe('prefix cache', () => {
  it('hashes by prefix: a block matches only when every earlier token matches too', () => {
    const a = blockHashes([1, 2, 3, 4, 5, 6, 7, 8, 9], 4)
    const b = blockHashes([1, 2, 3, 4, 5, 6, 7, 8], 4)
    const c = blockHashes([0, 2, 3, 4, 5, 6, 7, 8], 4)
    expect(a).toHaveLength(2)
    expect(b).toEqual(a)
    expect(c[1]).not.toBe(a[1])
  })
  it('evicts the least recently used block beyond capacity and never hits the whole prompt', () => {
    const pc = new PrefixCache(4, 2)
    pc.insert([1, 2])
    pc.lookup([1])
    pc.insert([3])
    expect(pc.lookup([2])).toBe(0)
    expect(pc.lookup([1])).toBe(1)
    expect(pc.hitTokens(2, 8)).toBe(4)
    expect(pc.hitTokens(2, 9)).toBe(8)
  })
})

describe('trace store', () => {
  it('keeps only the most recent `limit` requests and grows per-request arrays', () => {
    const st = new TraceStore(2)
    for (const id of ['a', 'b', 'c']) {
      const r = new TraceRecorder(id, 1000, 3, 1)
      for (let i = 0; i < 10; i++) r.push(2000 + i, 1)
      st.add(r)
    }
    expect(st.get('a')).toBeUndefined()
    const c = st.get('c')
    expect(c?.chunkSendNs).toHaveLength(10)
    expect((c?.chunkSendNs[1] ?? 0n) - (c?.chunkSendNs[0] ?? 0n)).toBe(1n)
    expect(c?.completionTokens).toBe(10)
  })
})

describe('resolveProfile', () => {
  const dir = mkdtempSync(join(tmpdir(), 'sg-sim-'))
  it('loads a YAML file over its base profile', () => {
    const f = join(dir, 'p.yaml')
    writeFileSync(f, 'base: default\nname: mine\nper_seq_ms: 0.5\nmax_running: 8\n')
    expect(resolveProfile(f)).toMatchObject({ name: 'mine', perSeqMs: 0.5, maxRunning: 8, baseStepMs: 9.9 })
  })
  it('rejects unknown keys in a JSON profile, naming them', () => {
    const f = join(dir, 'p.json')
    writeFileSync(f, JSON.stringify({ per_seq: 1 }))
    expect(() => resolveProfile(f)).toThrow(UsageError)
    expect(() => resolveProfile(f)).toThrow(/per_seq/)
  })
  it('reports a missing file', () => {
    expect(() => resolveProfile(join(dir, 'none.yaml'))).toThrow(/cannot read simulator profile file/)
  })
})
