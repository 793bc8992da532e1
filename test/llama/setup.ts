/**
 * Global setup of the llama lane: install the engine kit (test/llama/kit: node-llama-cpp with only
 * its linux-x64 CPU build, from the kit's own lock) when its node_modules is missing or older than
 * the lock, and write the lane's two models. `npm ci && npm test` on a fresh clone thus runs the
 * lane; nothing is downloaded at run time but the kit's npm packages, once.
 */
import { execFileSync } from 'node:child_process'
import { createHash } from 'node:crypto'
import { existsSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { ensureTestModel } from './model.js'
import { BASE, DEEPER } from './engine.js'

const KIT = fileURLToPath(new URL('./kit/', import.meta.url))
const STAMP = join(KIT, 'node_modules', '.servegate-kit-lock')

export default function setup(): void {
  const lock = createHash('sha256')
    .update(readFileSync(join(KIT, 'package-lock.json')))
    .digest('hex')
  const installed = existsSync(STAMP) && readFileSync(STAMP, 'utf8') === lock
  if (!installed) {
    const started = Date.now()
    // --omit=optional: node-llama-cpp lists every platform's build (CUDA, Vulkan: ~730 MB) as
    // optional; the kit depends on the linux-x64 CPU build directly. --ignore-scripts: its
    // postinstall would only look for a build to download or compile, and the CPU build is there.
    execFileSync('npm', ['ci', '--omit=optional', '--ignore-scripts', '--no-audit', '--no-fund', '--loglevel=error'], {
      cwd: KIT,
      stdio: ['ignore', 'ignore', 'inherit'],
    })
    if (!existsSync(join(KIT, 'node_modules', '@node-llama-cpp', 'linux-x64')))
      throw new Error('test/llama/kit: npm ci did not install @node-llama-cpp/linux-x64 (the llama lane runs on Linux x64 only)')
    writeFileSync(STAMP, lock)
    console.log(`servegate tests: installed the llama.cpp kit (test/llama/kit) in ${((Date.now() - started) / 1000).toFixed(1)} s`)
  }
  ensureTestModel(BASE)
  ensureTestModel(DEEPER)
}
