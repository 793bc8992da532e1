/**
 * Global setup of the integration lanes: bundle the current sources' CLI and load worker once per
 * test run (esbuild, about a second). A test that starts `servegate` as a user would, and every
 * sweep's load worker thread, then runs the sources without compiling them again through tsx in each
 * process and each run, which on 2 cores costs about 1.5 s of CPU per CLI start and 0.4 s per run.
 * It is built from src/ when the run starts, so it can never be stale the way the committed dist/
 * can be while you work (the Action's own tests run dist/ on purpose).
 *
 * The build lives under node_modules/.cache, inside the repository, so the CLI still finds
 * servegate's package.json (its version and commit in the environment record).
 */
import { build } from 'esbuild'
import { existsSync, mkdirSync, readdirSync, renameSync, rmSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import type { TestProject } from 'vitest/node'

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..')
const CACHE = join(ROOT, 'node_modules', '.cache', 'servegate-test-build')

declare module 'vitest' {
  export interface ProvidedContext {
    /** Directory holding cli.js and load-worker.js bundled from the sources at the start of this test run. */
    servegateBuild: string
  }
}

/** Whether process `pid` is alive (a build left by a run that died is removed). */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM'
  }
}

export default async function setup(project: TestProject): Promise<() => void> {
  const dir = join(CACHE, String(process.pid))
  // Each project of this run calls setup: the first to finish renames its build into place.
  if (!existsSync(dir)) {
    mkdirSync(CACHE, { recursive: true })
    for (const old of readdirSync(CACHE)) if (/^\d+$/.test(old) && !alive(Number(old))) rmSync(join(CACHE, old), { recursive: true, force: true })
    const tmp = `${dir}.${Math.random().toString(36).slice(2)}.tmp`
    await build({
      absWorkingDir: ROOT,
      entryPoints: { cli: 'src/cli.ts', 'load-worker': 'src/load/worker.ts' },
      outdir: tmp,
      bundle: true,
      format: 'esm',
      platform: 'node',
      target: 'node20',
      logLevel: 'warning',
      // Some inlined dependencies are CommonJS and call require(): give the ESM bundle one.
      banner: { js: "import { createRequire as __servegateCreateRequire } from 'node:module';\nconst require = __servegateCreateRequire(import.meta.url);" },
    })
    writeFileSync(join(tmp, 'package.json'), '{\n  "type": "module"\n}\n')
    try {
      renameSync(tmp, dir)
    } catch {
      rmSync(tmp, { recursive: true, force: true }) // another project's build got there first
    }
  }
  project.provide('servegateBuild', dir)
  return () => rmSync(dir, { recursive: true, force: true })
}
