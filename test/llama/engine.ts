/**
 * llama.cpp for the lane's tests: the kit's front (kit/front.mjs) started on a free loopback port
 * with a model made by model.ts, as a separate process, and the serve command that starts it for
 * `servegate run --serve` and `servegate ab`.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { existsSync, readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { READY } from './kit-paths.js'
import { BASE_MODEL, ensureTestModel, type TestModelSpec } from './model.js'

/**
 * Wait until the lane's setup has installed the kit and written the models (prepare.ts), at most
 * `withinMs`; throws with the install's error when it failed. A lane that cannot run fails: it never skips.
 */
export async function kitReady(withinMs = 300_000): Promise<void> {
  const deadline = Date.now() + withinMs
  while (!existsSync(READY)) {
    if (Date.now() > deadline) throw new Error(`the llama lane's kit was not ready within ${withinMs / 1000} s (test/llama/prepare.ts)`)
    await new Promise((r) => setTimeout(r, 200))
  }
  const state = JSON.parse(readFileSync(READY, 'utf8')) as { ok: boolean; error?: string }
  if (!state.ok) throw new Error(`the llama lane's kit could not be prepared (test/llama/prepare.ts): ${state.error}`)
}

export const FRONT = fileURLToPath(new URL('./kit/front.mjs', import.meta.url))

/** The base engine: 4 layers. */
export const BASE = BASE_MODEL
/** A real slowdown: the same model with twice the layers. */
export const DEEPER: TestModelSpec = { ...BASE_MODEL, layers: BASE_MODEL.layers * 2 }

/** The model id the front serves either model under, as an engine upgrade keeps the model's name. */
export const MODEL_ID = 'servegate-test-llama'

/** A serve command for `--serve` / `--a-serve`: llama.cpp on `{port}`, one thread. */
export function serveCommand(spec: TestModelSpec = BASE): string {
  return `${process.execPath} ${FRONT} --model ${ensureTestModel(spec)} --served-model-name ${MODEL_ID} --port {port} --threads 1`
}

export interface Front {
  url: string
  model: string
  child: ChildProcess
  /** Its own clock for one request (see front.mjs): arrival, each streamed token's write, end (ns), its prompt's tokens and those reused from the cache. */
  trace(id: string): Promise<{ arrival_ns: string; prompt_tokens: number; cached_tokens: number; token_ns: string[]; end_ns: string | null }>
  /** Its /metrics counters. */
  counters(): Promise<Record<string, number>>
  close(): Promise<void>
}

/** How a front speaks and keeps its sequences (kit/front.mjs's flags). */
export interface FrontOptions {
  /** The engine whose API it speaks (default vllm). */
  dialect?: 'vllm' | 'llama-server' | 'trtllm' | 'sglang'
  /** Keep each sequence's history and reuse a prompt's cached prefix (SGLang's radix cache, llama-server's cache_prompt). */
  prefixCache?: boolean
  sequences?: number
  /** Tokens per sequence. */
  contextSize?: number
}

/** Start the front on a free port and wait until it serves (the model loaded). */
export async function startFront(spec: TestModelSpec = BASE, opts: FrontOptions = {}): Promise<Front> {
  const args = [FRONT, '--model', ensureTestModel(spec), '--served-model-name', MODEL_ID, '--port', '0', '--threads', '1']
  if (opts.dialect) args.push('--dialect', opts.dialect)
  if (opts.prefixCache) args.push('--prefix-cache')
  if (opts.sequences !== undefined) args.push('--sequences', String(opts.sequences))
  if (opts.contextSize !== undefined) args.push('--context-size', String(opts.contextSize))
  const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'] })
  let output = ''
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`llama front did not start in 30 s: ${output}`)), 30_000)
    child.stdout!.on('data', (b: Buffer) => {
      output += b.toString()
      const m = /listening on (http:\/\/[\d.]+:\d+)/.exec(output)
      if (m) {
        clearTimeout(timer)
        resolve(m[1]!)
      }
    })
    child.stderr!.on('data', (b: Buffer) => (output += b.toString()))
    child.once('exit', (code) => {
      clearTimeout(timer)
      reject(new Error(`llama front exited with ${code}: ${output}`))
    })
  })
  const getJson = async (path: string): Promise<unknown> => {
    const res = await fetch(`${url}${path}`)
    if (!res.ok) throw new Error(`${path}: HTTP ${res.status}`)
    return res.json()
  }
  return {
    url,
    model: MODEL_ID,
    child,
    trace: async (id) => (await getJson(`/front/trace/${encodeURIComponent(id)}`)) as Awaited<ReturnType<Front['trace']>>,
    async counters() {
      const text = await (await fetch(`${url}/metrics`)).text()
      return Object.fromEntries([...text.matchAll(/^(llamacpp:\w+) (\d+)$/gm)].map((m) => [m[1]!, Number(m[2])]))
    },
    close: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null || child.signalCode !== null) return resolve()
        child.once('exit', () => resolve())
        child.kill('SIGTERM')
      }),
  }
}
