/**
 * servegate against a real engine: llama.cpp (node-llama-cpp's CPU build, one thread) behind the
 * kit's OpenAI front, with the lane's own model (test/llama/README.md). What the simulator cannot
 * show: a real SentencePiece tokenizer (BOS, byte fallback), a real chat template, real prefill and
 * batching costs, and an engine's own clock.
 */
import { readdirSync, readFileSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { runPoint } from '../../src/load/run-point.js'
import { promptTokenIds } from '../../src/plan/prompts.js'
import type { PlannedRequest, RequestRecord, ResultFile } from '../../src/types.js'
import { HOST_CODES, hostSpoiled } from '../fixtures/honest-verdict.js'
import { absPercentile, signedPercentile } from '../load/ground-truth.js'
import { runCli } from '../sweep/cli-child.js'
import { kitReady, MODEL_ID, serveCommand, startFront, type Front } from './engine.js'

let front: Front
let dir: string
beforeAll(async () => {
  await kitReady()
  dir = mkdtempSync(join(tmpdir(), 'servegate-llama-'))
  front = await startFront()
}, 330_000)
afterAll(async () => {
  await front?.close()
  if (dir) rmSync(dir, { recursive: true, force: true })
})

/** Completions requests of `inputLen` prompt token ids (as a sweep plans them) for `maxTokens` tokens each. */
function requests(n: number, tag: string, inputLen: number, maxTokens: number): PlannedRequest[] {
  return Array.from({ length: n }, (_, i) => ({
    id: `${tag}-${i}`,
    url: `${front.url}/v1/completions`,
    body: JSON.stringify({
      model: front.model,
      prompt: promptTokenIds(11, i, inputLen),
      max_tokens: maxTokens,
      stream: true,
      stream_options: { include_usage: true },
      ignore_eos: true,
      temperature: 0,
    }),
    headers: {},
    api: 'completions' as const,
    promptTokens: inputLen,
    maxTokens,
  }))
}

const ns = (s: string): bigint => BigInt(s)

/**
 * A sweep as a user runs it. The engine shares this host's CPUs with the load generator, so a
 * sweep with a run the host spoiled (client_saturated) is measured again, at most twice.
 */
async function sweep(name: string, args: string[]): Promise<{ code: number | null; out: string; result: ResultFile }> {
  const file = join(dir, `${name}.json`)
  for (let attempt = 0; ; attempt++) {
    const r = await runCli(['run', ...args, '--out', file])
    const result = JSON.parse(readFileSync(file, 'utf8')) as ResultFile
    if (attempt < 2 && hostSpoiled(result)) continue
    return { code: r.code, out: r.stdout + r.stderr, result }
  }
}

/** Every run valid, or invalid only by a host code (never by what the engine did), and a valid run at every point. */
function expectMeasured(result: ResultFile, out: string): void {
  for (const point of result.points) {
    for (const run of point.runs) for (const issue of run.validity.issues) expect(HOST_CODES as readonly string[], out).toContain(issue.code)
    expect(
      point.runs.some((run) => run.validity.valid),
      out,
    ).toBe(true)
  }
}

describe('servegate against llama.cpp', () => {
  it('measures a valid completions sweep, its token counts agreeing four ways', async () => {
    const before = await front.counters()
    const { code, out, result } = await sweep('completions', [
      ...['--base-url', front.url, '--input-len', '48', '--output-len', '12', '--concurrency', '1,4'],
      ...['--repeats', '2', '--prompts-per-concurrency', '10'],
    ])
    expect(code, out).toBe(0)
    const runs = result.points.flatMap((p) => p.runs)
    expect(runs).toHaveLength(4)
    expectMeasured(result, out)
    for (const run of runs) {
      // usage, the client's chunks and the text re-tokenised by llama.cpp's own tokenizer all say
      // max_tokens per request; the prompt is the 48 token ids as sent (no BOS added to ids).
      const n = run.num_prompts
      expect(run.tokens).toMatchObject({ expected: 12 * n, server_usage: 12 * n, client_chunks: 12 * n, retokenized: 12 * n, prompt_server_usage: 48 * n })
    }
    expect(result.env.engine).toMatchObject({ name: 'llama.cpp (node-llama-cpp)' })
    // llama.cpp generated at least what the measured requests' usage reports (warmup and probes too).
    const after = await front.counters()
    const usage = runs.reduce((s, r) => s + (r.tokens.server_usage ?? 0), 0)
    expect(after['llamacpp:tokens_predicted_total']! - before['llamacpp:tokens_predicted_total']!).toBeGreaterThanOrEqual(usage)
  }, 120_000)

  it('calibrates chat prompts through /tokenize to exactly input-len tokens under the model template', async () => {
    const { code, out, result } = await sweep('chat', [
      ...['--base-url', front.url, '--api', 'chat', '--input-len', '40', '--output-len', '8', '--concurrency', '2'],
      ...['--repeats', '2', '--prompts-per-concurrency', '10'],
    ])
    expect(code, out).toBe(0)
    expect(result.config).toMatchObject({ prompt_calibration: 'tokenize', prompt_calibration_inexact: 0 })
    expectMeasured(result, out)
    for (const run of result.points.flatMap((p) => p.runs)) {
      // The server's usage counts the templated prompt: BOS, <|im_start|>user\n, the words, <|im_end|>\n, <|im_start|>assistant\n.
      expect(run.tokens).toMatchObject({ prompt_expected: 40 * run.num_prompts, prompt_server_usage: 40 * run.num_prompts })
    }
    // The words alone are fewer tokens than the templated prompt: the template's own tokens count.
    const words = await fetch(`${front.url}/tokenize`, { method: 'POST', body: JSON.stringify({ prompt: 'time year people', add_special_tokens: false }) })
    const chat = await fetch(`${front.url}/tokenize`, {
      method: 'POST',
      body: JSON.stringify({ messages: [{ role: 'user', content: 'time year people' }], add_generation_prompt: true }),
    })
    expect(((await words.json()) as { count: number }).count).toBe(3)
    expect(((await chat.json()) as { count: number }).count).toBeGreaterThan(3 + 6)
  }, 120_000)

  // The client's clock against the engine's: the front stamps each token as it writes it
  // (CLOCK_MONOTONIC, shared with the client's hrtime). The bounds are the client's own overhead
  // as the load fidelity test holds it: |ITL error| p50 ≤ 0.5 ms and p99 ≤ 6 ms, and its read path
  // (first token written → the client's TTFT stamp) p50 ≤ 1 ms. The rest of TTFT is the engine's:
  // its HTTP intake, queueing and prefill, which the client rightly counts. Best of three runs: a
  // neighbour's CPU burst stalls the client for milliseconds.
  it("agrees with llama.cpp's per-token timestamps within the client's overhead, and usage with llama.cpp's counts", async () => {
    let best: { p50: number; p99: number; read: number; median: number } | null = null
    for (let attempt = 0; attempt < 3 && (best === null || best.p50 > 0.5 || best.p99 > 6 || best.read > 1); attempt++) {
      const epochNs = process.hrtime.bigint()
      const run = await runPoint({
        warmup: requests(4, `w${attempt}`, 32, 4),
        measured: requests(24, `m${attempt}`, 32, 16),
        concurrency: 4,
        workers: 1,
        epochNs,
      })
      const itlErr: number[] = []
      const readPath: number[] = []
      for (const r of run.records as RequestRecord[]) {
        expect(r.error).toBeNull()
        const t = await front.trace(r.id)
        // Usage is what llama.cpp generated and the front streamed, token for token.
        expect([r.usageCompletionTokens, r.usagePromptTokens, r.contentChunks]).toEqual([t.token_ns.length, t.prompt_tokens, t.token_ns.length])
        expect([t.token_ns.length, t.prompt_tokens]).toEqual([16, 32])
        const writes = t.token_ns.map(ns)
        for (let i = 1; i < writes.length; i++) itlErr.push(r.chunkArrivalsMs[i]! - r.chunkArrivalsMs[i - 1]! - Number(writes[i]! - writes[i - 1]!) / 1e6)
        const sentNs = epochNs + BigInt(Math.round(r.startMs * 1e6))
        // Causality on one clock: the request reached the engine after it was sent, and the first
        // token reached the client after llama.cpp's front wrote it.
        expect(ns(t.arrival_ns)).toBeGreaterThan(sentNs - 50_000n)
        readPath.push(Number(sentNs + BigInt(Math.round(r.ttftMs! * 1e6)) - writes[0]!) / 1e6)
      }
      expect(Math.min(...readPath)).toBeGreaterThan(-0.05)
      const seen = {
        p50: absPercentile(itlErr, 50),
        p99: absPercentile(itlErr, 99),
        read: signedPercentile(readPath, 50),
        median: signedPercentile(itlErr, 50),
      }
      console.info(
        `llama.cpp C=4: |ITL error| p50 ${seen.p50.toFixed(3)} ms, p99 ${seen.p99.toFixed(3)} ms over ${itlErr.length} gaps; first-token read path p50 ${seen.read.toFixed(3)} ms`,
      )
      if (best === null || seen.p99 < best.p99) best = seen
    }
    expect(best!.p50).toBeLessThanOrEqual(0.5)
    expect(best!.p99).toBeLessThanOrEqual(6)
    expect(Math.abs(best!.median)).toBeLessThan(0.3)
    expect(best!.read).toBeLessThanOrEqual(1)
  }, 120_000)

  it('starts llama.cpp with run --serve and stops it when the sweep ends', async () => {
    const cmd = serveCommand().replace(`--served-model-name ${MODEL_ID}`, '--served-model-name serve-check')
    const { code, out, result } = await sweep('serve', [
      '--serve',
      cmd,
      '--input-len',
      '16',
      '--output-len',
      '12',
      '--concurrency',
      '1',
      '--repeats',
      '2',
      '--prompts-per-concurrency',
      '10',
    ])
    expect(code, out).toBe(0)
    expect(result.config.serve_command).toBe(cmd)
    expect(result.points[0]!.runs).toHaveLength(2)
    expectMeasured(result, out)
    expect(result.env.model).toMatchObject({ id: 'serve-check' })
    // No process of that command is left.
    const left = readdirSync('/proc')
      .filter((p) => /^\d+$/.test(p))
      .filter((p) => {
        try {
          return readFileSync(`/proc/${p}/cmdline`, 'utf8').includes('serve-check')
        } catch {
          return false
        }
      })
    expect(left).toEqual([])
  }, 120_000)
})
