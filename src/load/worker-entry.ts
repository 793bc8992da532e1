/**
 * Finding the load worker's code, however servegate runs (bundled, compiled
 * per file, or from TypeScript sources), and starting a thread on it.
 */
import { existsSync, readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { Worker } from 'node:worker_threads'

/** File name of the worker emitted next to the bundle (dist/load-worker.js); its entry is src/load/worker.ts. */
export const LOAD_WORKER_BUNDLE_NAME = 'load-worker.js'

/**
 * Running from TypeScript sources only: the path of a load worker already bundled from those
 * sources, used instead of compiling worker.ts through tsx in every run. servegate's test lanes set
 * it to the worker they bundle when the test run starts; a bundled servegate ignores it.
 */
export const LOAD_WORKER_ENV = 'SERVEGATE_LOAD_WORKER'

/**
 * Where the worker code is, for the way servegate is running: from the bundle
 * (dist/load-worker.js beside it), from per-file JS output (worker.js beside
 * this file), or from TypeScript sources (vitest, tsx: worker.ts, loaded
 * through tsx's ESM API, because on Node 20 neither the parent's loader nor
 * `execArgv: ['--import', 'tsx']` reaches a worker thread), unless LOAD_WORKER_ENV names a build.
 */
export function workerEntry(moduleUrl: string = import.meta.url, env: NodeJS.ProcessEnv = process.env): { url: URL; tsxApi: string | null } {
  if (moduleUrl.endsWith('.ts')) {
    const built = env[LOAD_WORKER_ENV]
    if (built) return { url: pathToFileURL(built), tsxApi: null }
    return { url: new URL('./worker.ts', moduleUrl), tsxApi: tsxEsmApi(moduleUrl) }
  }
  const bundled = new URL(`./${LOAD_WORKER_BUNDLE_NAME}`, moduleUrl)
  if (existsSync(fileURLToPath(bundled))) return { url: bundled, tsxApi: null }
  return { url: new URL('./worker.js', moduleUrl), tsxApi: null }
}

/** File URL of tsx's ESM register API (its `import` export; the `require` one cannot register ESM hooks). */
function tsxEsmApi(moduleUrl: string): string {
  let pkgPath: string
  try {
    pkgPath = createRequire(moduleUrl).resolve('tsx/package.json')
  } catch {
    pkgPath = createRequire(import.meta.url).resolve('tsx/package.json')
  }
  const pkg = JSON.parse(readFileSync(pkgPath, 'utf8')) as { exports: Record<string, { import: { default: string } }> }
  return new URL(pkg.exports['./esm/api']?.import.default ?? './dist/esm/api/index.mjs', pathToFileURL(pkgPath)).href
}

/** Start a load worker thread on the code at `entry` (default: wherever workerEntry finds it); it waits for its runs (worker.ts). */
export function spawnLoadWorker(entry: { url: URL; tsxApi: string | null } = workerEntry()): Worker {
  if (entry.tsxApi === null) return new Worker(entry.url)
  const code = `import(${JSON.stringify(entry.tsxApi)}).then((api) => { api.register(); return import(${JSON.stringify(entry.url.href)}) })`
  return new Worker(code, { eval: true })
}
