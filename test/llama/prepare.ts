/**
 * Prepare the llama lane, in a process of its own that the lane's global setup (setup.ts) starts
 * when the test run starts, so the install overlaps the other lanes: install the engine kit
 * (test/llama/kit: node-llama-cpp with only its linux-x64 CPU build, from the kit's own lock)
 * when its node_modules is missing or older than the lock, and write the lane's two models and the
 * base model's tokenizer as a Hugging Face tokenizer directory (hf-tokenizer.ts). It
 * ends by writing READY (`{"ok": true}`, or `{"ok": false, "error": …}`), which the lane's tests
 * wait for (engine.ts, kitReady).
 */
import { execFileSync } from 'node:child_process'
import { createHash } from 'node:crypto'
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { BASE, DEEPER } from './engine.js'
import { ensureTestTokenizer } from './hf-tokenizer.js'
import { ensureTestModel, MODELS_DIR } from './model.js'
import { KIT, READY } from './kit-paths.js'

const STAMP = join(KIT, 'node_modules', '.servegate-kit-lock')

function prepare(): string[] {
  const done: string[] = []
  const lock = createHash('sha256')
    .update(readFileSync(join(KIT, 'package-lock.json')))
    .digest('hex')
  if (!(existsSync(STAMP) && readFileSync(STAMP, 'utf8') === lock)) {
    const started = Date.now()
    // --omit=optional: node-llama-cpp lists every platform's build (CUDA, Vulkan: ~730 MB) as
    // optional; the kit depends on the linux-x64 CPU build directly. --ignore-scripts: its
    // postinstall would only look for a build to download or compile, and the CPU build is there.
    execFileSync('npm', ['ci', '--omit=optional', '--ignore-scripts', '--no-audit', '--no-fund', '--loglevel=error'], {
      cwd: KIT,
      stdio: ['ignore', 'ignore', 'pipe'],
    })
    if (!existsSync(join(KIT, 'node_modules', '@node-llama-cpp', 'linux-x64')))
      throw new Error('npm ci did not install @node-llama-cpp/linux-x64 (the llama lane runs on Linux x64 only)')
    writeFileSync(STAMP, lock)
    done.push(`installed the kit in ${((Date.now() - started) / 1000).toFixed(1)} s`)
  }
  ensureTestModel(BASE)
  ensureTestModel(DEEPER)
  // The base model's tokenizer in Hugging Face's files, for `--tokenizer` (engines.test.ts).
  ensureTestTokenizer(BASE)
  return done
}

mkdirSync(MODELS_DIR, { recursive: true })
try {
  writeFileSync(READY, JSON.stringify({ ok: true, done: prepare() }))
} catch (err) {
  const e = err as Error & { stderr?: Buffer }
  writeFileSync(READY, JSON.stringify({ ok: false, error: `${e.message}${e.stderr ? `\n${e.stderr.toString()}` : ''}` }))
}
