/**
 * Setup file of the integration lanes: sweeps run in this test process start their load worker
 * threads from the load worker bundled at the start of the test run (test/setup/test-build.ts)
 * instead of compiling src/load/worker.ts through tsx in every run.
 */
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { inject } from 'vitest'
import { LOAD_WORKER_ENV } from '../../src/load/worker-entry.js'

const worker = join(inject('servegateBuild'), 'load-worker.js')
if (!existsSync(worker)) throw new Error(`the load worker bundled for this test run is missing: ${worker}`)
process.env[LOAD_WORKER_ENV] = worker
