/**
 * Global setup of the llama lane: start test/llama/prepare.ts (install the engine kit when needed,
 * write the two models) in a process of its own and return at once. vitest calls it when the test
 * run starts; the lane runs last, so the install (~15 s on a fresh clone, mostly download) overlaps
 * the other lanes, and the lane's tests wait for it (engine.ts, kitReady). `npm ci && npm test` on a
 * fresh clone thus runs the lane; nothing is fetched at run time but the kit's npm packages, once.
 */
import { spawn } from 'node:child_process'
import { mkdirSync, rmSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { MODELS_DIR } from './model.js'
import { READY } from './kit-paths.js'

export default function setup(): () => void {
  mkdirSync(MODELS_DIR, { recursive: true })
  rmSync(READY, { force: true })
  const child = spawn(process.execPath, ['--import', 'tsx', fileURLToPath(new URL('./prepare.ts', import.meta.url))], { stdio: 'ignore' })
  return () => {
    if (child.exitCode === null) child.kill('SIGTERM')
  }
}
