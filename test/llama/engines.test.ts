/**
 * servegate against llama.cpp behind fronts that speak each engine's own API (kit/dialects.mjs
 * names the engine source every behaviour copies): llama.cpp's llama-server, TensorRT-LLM's
 * trtllm-serve and SGLang. The model's tokenizer, exported as Hugging Face's files
 * (hf-tokenizer.ts), is the client-side tokenizer for the server with no /tokenize. Each sweep is
 * one small point; the fronts start together, once.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Template } from '@huggingface/jinja'
import { Tokenizer } from '@huggingface/tokenizers'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { loadLocalTokenizer, type LocalTokenizer } from '../../src/client/local-tokenizer.js'
import { CODE_BLAME } from '../../src/gate/invariants.js'
import { chatMessages, promptWords } from '../../src/plan/prompts.js'
import type { ResultFile, RunResult } from '../../src/types.js'
import { createRng } from '../../src/util/rng.js'
import { HOST_CODES, hostSpoiled } from '../fixtures/honest-verdict.js'
import { runCli } from '../sweep/cli-child.js'
import { kitReady, startFront, type Front } from './engine.js'
import { ensureTestTokenizer } from './hf-tokenizer.js'
import { CHAT_TEMPLATE } from './model.js'

const INPUT = 32
const OUTPUT = 12
// One point of ten requests at concurrency 2: the fewest a run needs to be valid (10 requests, 110 inter-token gaps).
const SHAPE = ['--input-len', String(INPUT), '--output-len', String(OUTPUT), '--concurrency', '2', '--prompts-per-concurrency', '5', '--repeats', '1']

let dir: string
let tokenizerDir: string
let fronts: { llamaServer: Front; trtllm: Front; sglang: Front; sglangCache: Front } | undefined
beforeAll(async () => {
  await kitReady()
  dir = mkdtempSync(join(tmpdir(), 'servegate-engines-'))
  tokenizerDir = ensureTestTokenizer()
  const started = await Promise.allSettled([
    startFront(undefined, { dialect: 'llama-server' }),
    startFront(undefined, { dialect: 'trtllm' }),
    startFront(undefined, { dialect: 'sglang' }),
    // SGLang with a prefix cache: sixteen sequences keep every prompt of a sweep (its probe, warmup and measured requests).
    startFront(undefined, { dialect: 'sglang', prefixCache: true, sequences: 16, contextSize: 64 }),
  ])
  const up = started.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []))
  const failed = started.find((r) => r.status === 'rejected')
  if (failed !== undefined) {
    // No front is left running when another could not start.
    await Promise.all(up.map((f) => f.close()))
    throw (failed as PromiseRejectedResult).reason
  }
  const [llamaServer, trtllm, sglang, sglangCache] = up as [Front, Front, Front, Front]
  fronts = { llamaServer, trtllm, sglang, sglangCache }
}, 330_000)
afterAll(async () => {
  await Promise.all(Object.values(fronts ?? {}).map((f) => f.close()))
  if (dir) rmSync(dir, { recursive: true, force: true })
})

/**
 * A sweep as a user runs it. The engine shares this host's CPUs with the load generator, so a
 * sweep with a run the host spoiled (client_saturated) is measured again, at most twice, unless
 * `once` (a sweep whose prompts must reach the engine once only).
 */
async function sweep(name: string, args: string[], once = false): Promise<{ code: number | null; out: string; result: ResultFile; run: RunResult }> {
  const file = join(dir, `${name}.json`)
  for (let attempt = 0; ; attempt++) {
    const r = await runCli(['run', ...args, '--out', file])
    const result = JSON.parse(readFileSync(file, 'utf8')) as ResultFile
    if (!once && attempt < 2 && hostSpoiled(result)) continue
    const runs = result.points.flatMap((p) => p.runs)
    expect(runs, r.stdout + r.stderr).toHaveLength(1)
    return { code: r.code, out: r.stdout + r.stderr, result, run: runs[0]! }
  }
}

/** The run's validity codes other than the host's (a busy host may still saturate the client after two more tries). */
const codes = (run: RunResult): string[] => run.validity.issues.map((i) => i.code).filter((c) => !(HOST_CODES as readonly string[]).includes(c))

/** Whether the client's own timing held (no host code): then its per-token figures may be held to the engine's. */
const clientHeld = (run: RunResult): boolean => run.validity.issues.every((i) => !(HOST_CODES as readonly string[]).includes(i.code))

/** POST JSON to the front, the answer's JSON. */
async function post<T>(front: Front, path: string, body: unknown): Promise<T> {
  const res = await fetch(`${front.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) })
  expect(res.status, path).toBe(200)
  return (await res.json()) as T
}

describe("the model's tokenizer in Hugging Face's files", () => {
  let hf: Tokenizer
  let local: LocalTokenizer
  beforeAll(() => {
    hf = new Tokenizer(
      JSON.parse(readFileSync(join(tokenizerDir, 'tokenizer.json'), 'utf8')),
      JSON.parse(readFileSync(join(tokenizerDir, 'tokenizer_config.json'), 'utf8')),
    )
    local = loadLocalTokenizer(tokenizerDir)
  })

  it("gives llama.cpp's token ids for servegate's prompts, chat-rendered prompts and odd strings", async () => {
    const front = fronts!.llamaServer
    const rng = createRng(39)
    const chars = Array.from('abcdefghijklmnopqrstuvwxyz   ABCZ.,;!?-_\n\t0123456789éüß∑€😀中文<>|/▁')
    const odd = Array.from({ length: 120 }, () => Array.from({ length: rng.int(0, 40) }, () => chars[rng.int(0, chars.length - 1)]).join(''))
    const words = Array.from({ length: 40 }, (_, i) => promptWords(1000 + i, i, 1 + ((i * 7) % 64)).join(' '))
    const template = new Template(CHAT_TEMPLATE)
    const rendered = words.map((w) => template.render({ messages: [{ role: 'user', content: w }], add_generation_prompt: true }))
    const texts = [
      ...words,
      ...rendered,
      ...odd,
      '',
      ' ',
      '  leading and trailing  ',
      'aaaaaaaaaaaaaaaaaaaaaaaa',
      'abababababababab',
      '<s>inside</s> text <unk>',
      '<0x41> literal byte piece',
      'time\u2581year',
    ]
    for (const text of texts) {
      // llama-server's /tokenize: llama.cpp's tokenizer with its special tokens parsed, BOS added.
      const { tokens } = await post<{ tokens: number[] }>(front, '/tokenize', { content: text, add_special: true })
      expect(hf.encode(text).ids, JSON.stringify(text)).toEqual(tokens)
      expect(local.countText(text), JSON.stringify(text)).toBe(tokens.length - 1)
    }
    // A chat prompt as servegate sizes it with --tokenizer: the template's tokens, as llama.cpp renders and counts them.
    for (let serial = 0; serial < 20; serial++) {
      const messages = chatMessages(7, serial, 1 + serial * 3)
      const { prompt } = await post<{ prompt: string }>(front, '/apply-template', { messages })
      const { tokens } = await post<{ tokens: number[] }>(front, '/tokenize', { content: prompt, add_special: false })
      expect(local.countChat(messages)).toBe(tokens.length)
    }
  }, 60_000)
})

describe("llama.cpp's llama-server", () => {
  it('measures valid completions and chat sweeps with exact input lengths, the output counted alike by usage, the stream and /tokenize', async () => {
    const completions = await sweep('llama-server-completions', ['--base-url', fronts!.llamaServer.url, ...SHAPE])
    // Chat prompts sized through llama-server's own endpoints: /tokenize reads only `content`, so
    // servegate renders them with /apply-template and counts them there.
    const chat = await sweep('llama-server-chat', ['--base-url', fronts!.llamaServer.url, '--api', 'chat', ...SHAPE])
    expect(completions.code, completions.out).toBe(0)
    expect(chat.code, chat.out).toBe(0)
    expect(chat.result.config).toMatchObject({ prompt_calibration: 'tokenize', prompt_calibration_inexact: 0 })
    for (const { run, result, out } of [completions, chat]) {
      expect(codes(run), out).toEqual([])
      const n = run.completed
      expect(n).toBe(10)
      expect(run.tokens).toMatchObject({
        prompt_expected: INPUT * n,
        prompt_server_usage: INPUT * n,
        expected: OUTPUT * n,
        server_usage: OUTPUT * n,
        client_chunks: OUTPUT * n,
        retokenized: OUTPUT * n,
      })
      // llamacpp:* has counters only, no latency histograms: no server-side figures.
      expect(run.server_side).toBeNull()
      expect(result.env.engine).toMatchObject({ name: 'llamacpp' })
    }
  }, 120_000)
})

describe("TensorRT-LLM's trtllm-serve", () => {
  it('sizes a 32-token chat sweep exactly with --tokenizer, and reads trtllm_* at /prometheus/metrics as server-side figures', async () => {
    const { code, out, result, run } = await sweep('trtllm-chat', ['--base-url', fronts!.trtllm.url, '--api', 'chat', '--tokenizer', tokenizerDir, ...SHAPE])
    expect(code, out).toBe(0)
    expect(result.config).toMatchObject({ prompt_calibration: 'tokenize', prompt_calibration_inexact: 0 })
    expect(result.config['tokenizer']).toMatchObject({ server_check: expect.stringMatching(/^not run: /) })
    expect(codes(run), out).toEqual([])
    const n = run.completed
    expect(n).toBe(10)
    // Every prompt exactly 32 tokens by llama.cpp's count (usage); the output re-counted by the client's tokenizer.
    expect(run.tokens).toMatchObject({ prompt_expected: INPUT * n, prompt_server_usage: INPUT * n, server_usage: OUTPUT * n, retokenized: OUTPUT * n })
    expect(result.env.engine).toMatchObject({ name: 'tensorrt_llm' })
    const s = run.server_side!
    // Its token counters agree with usage; a version without trtllm_prompt_cached_tokens_total leaves the cache check unrun.
    expect(s).toMatchObject({ prompt_tokens: INPUT * n, generation_tokens: OUTPUT * n, prefix_cache_queries: INPUT * n, prefix_cache_hits: null })
    // The front's clock starts when the request arrives and stops as it writes: inside the client's.
    expect(s.ttft_ms.mean).toBeGreaterThan(0)
    expect(s.ttft_ms.mean).toBeLessThan(run.ttft_ms.mean!)
    expect(s.e2el_ms.mean).toBeLessThan(run.e2el_ms.mean!)
    // Its time per output token is per request, the client's within a ms where the client kept time;
    // it has no per-gap histogram, so no server-side ITL.
    if (clientHeld(run)) expect(Math.abs(s.tpot_ms!.mean! - run.tpot_ms.mean!)).toBeLessThan(1)
    expect(s.itl_ms).toBeNull()
  }, 120_000)

  it('without --tokenizer, names it: the chat runs are prompt_uncalibrated, blamed on servegate, none on the engine', async () => {
    const { code, out, result, run } = await sweep('trtllm-chat-uncalibrated', ['--base-url', fronts!.trtllm.url, '--api', 'chat', ...SHAPE])
    expect(code, out).toBe(1)
    expect(result.config).toMatchObject({ prompt_calibration: 'none' })
    expect(codes(run)).toEqual(['prompt_uncalibrated'])
    expect(CODE_BLAME.prompt_uncalibrated).toBe('unmeasured')
    expect(run.validity.issues.find((i) => i.code === 'prompt_uncalibrated')!.detail).toContain(
      "give servegate the model's tokenizer (--tokenizer DIR or a Hugging Face model id)",
    )
    // The template's tokens came on top of the 32 words: what the engine prefilled, by its own count.
    expect(run.tokens.prompt_server_usage! / run.completed).toBeGreaterThan(INPUT)
  }, 120_000)
})

describe('SGLang', () => {
  it('measures a valid completions sweep, with sglang:* server-side figures that agree with the client', async () => {
    const { code, out, result, run } = await sweep('sglang-completions', ['--base-url', fronts!.sglang.url, ...SHAPE])
    expect(code, out).toBe(0)
    expect(codes(run), out).toEqual([])
    const n = run.completed
    expect(n).toBe(10)
    // SGLang's /tokenize takes `prompt`: the output is re-counted there.
    expect(run.tokens).toMatchObject({ prompt_server_usage: INPUT * n, server_usage: OUTPUT * n, retokenized: OUTPUT * n })
    expect(result.env.engine).toMatchObject({ name: 'sglang' })
    const s = run.server_side!
    expect(s).toMatchObject({ prompt_tokens: INPUT * n, generation_tokens: OUTPUT * n, prefix_cache_queries: INPUT * n })
    // No cache (the front clears each sequence, as --disable-radix-cache): SGLang's cached-token counter,
    // declared with no sample yet, has counted nothing, and the cache check ran.
    expect(s.prefix_cache_hits).toBe(0)
    expect(s.ttft_ms.mean).toBeGreaterThan(0)
    expect(s.ttft_ms.mean).toBeLessThan(run.ttft_ms.mean!)
    expect(s.e2el_ms.mean).toBeLessThan(run.e2el_ms.mean!)
    // One observation per streamed token: its mean gap is the client's, within a ms where the client kept time.
    if (clientHeld(run)) expect(Math.abs(s.itl_ms!.mean! - run.itl_ms.mean!)).toBeLessThan(1)
  }, 120_000)

  it('sizes chat prompts with --tokenizer, its /tokenize taking no messages; without it names --tokenizer, blaming no run on the engine', async () => {
    const sized = await sweep('sglang-chat', ['--base-url', fronts!.sglang.url, '--api', 'chat', '--tokenizer', tokenizerDir, ...SHAPE])
    expect(sized.code, sized.out).toBe(0)
    expect(sized.result.config).toMatchObject({ prompt_calibration: 'tokenize', prompt_calibration_inexact: 0 })
    expect(codes(sized.run), sized.out).toEqual([])
    // Every prompt exactly 32 tokens by llama.cpp's own count (usage).
    expect(sized.run.tokens).toMatchObject({ prompt_server_usage: INPUT * sized.run.completed, server_usage: OUTPUT * sized.run.completed })
    const bare = await sweep('sglang-chat-uncalibrated', ['--base-url', fronts!.sglang.url, '--api', 'chat', ...SHAPE])
    expect(bare.code, bare.out).toBe(1)
    expect(bare.result.config).toMatchObject({ prompt_calibration: 'none' })
    expect(codes(bare.run)).toEqual(['prompt_uncalibrated'])
    expect(bare.run.validity.issues.find((i) => i.code === 'prompt_uncalibrated')!.detail).toContain('--tokenizer')
  }, 120_000)

  it('catches a contaminated prefix cache on its names: the same prompts again, served from the KV cache llama.cpp kept', async () => {
    const args = ['--base-url', fronts!.sglangCache.url, '--seed', '4242', ...SHAPE]
    const first = await sweep('sglang-cache-first', args, true)
    const again = await sweep('sglang-cache-again', args, true)
    // The first time, each prompt took a sequence of its own (none held half of it): nothing reused,
    // and SGLang's cached-token counter, declared with no sample yet, reads 0.
    expect(codes(first.run), first.out).toEqual([])
    expect(first.run.server_side!.prefix_cache_hits).toBe(0)
    const n = again.run.completed
    // llama.cpp reused each prompt's KV cache but for its last token, which it evaluates to sample from.
    const hits = n * (INPUT - 1)
    expect(again.run.server_side).toMatchObject({ prefix_cache_queries: INPUT * n, prefix_cache_hits: hits })
    expect(codes(again.run)).toEqual(['prefix_cache_contaminated'])
    expect(again.run.validity.issues.find((i) => i.code === 'prefix_cache_contaminated')!.detail).toContain(
      `The server's prefix cache served ${hits} prompt tokens of ${INPUT * n} queried`,
    )
  }, 120_000)
})
