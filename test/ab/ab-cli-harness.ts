/**
 * What the `servegate ab` CLI tests share: A (and a second, identical A) as simulators in the
 * test process, a config of the A/B test sweep, and one `ab` run, run again (at most twice, or as the test says) where
 * a busy host's saturated client left it undecided or unmeasured (spoiledUndecided). The
 * regression and the pass are one file (ab-cli.test.ts), one after the other: side by side, the
 * slowed job's engine starts fell in step on the same-engine job's B slots.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll } from 'vitest'
import { startSim, type SimHandle } from '../../src/sim/index.js'
import { AB_TEST_CONFIG } from '../action/dist-harness.js'
import { cliArgs } from '../fixtures/servegate-cli.js'
import { runCli } from '../sweep/cli-child.js'
import { spoiledUndecided } from '../fixtures/honest-verdict.js'

/** B's engine as a serve command: the simulator of the CLI bundled from the sources for this test run. */
export const SIM = `${process.execPath} ${cliArgs()[0]} sim --port {port}`

export interface AbCli {
  /** The scratch folder (holds servegate.yml). */
  dir(): string
  /** A: a deterministic simulator (TTFT 20 ms, ITL 10 ms). */
  a(): SimHandle
  /** A second simulator identical to A. */
  a2(): SimHandle
  /**
   * One ab run (A by URL, unless `more` gives --a-serve); one a saturated client left undecided or
   * unmeasured (host blame) is run again, at most `retries` times (default twice).
   */
  ab(b: SimHandle | string, name: string, more?: string[], retries?: number): Promise<Awaited<ReturnType<typeof runCli>> & { outDir: string }>
}

/** Start the simulators and the scratch folder before the file's tests, and stop them after. */
export function useAbCli(): AbCli {
  let dir = ''
  let a: SimHandle | undefined
  let a2: SimHandle | undefined

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'servegate-ab-'))
    writeFileSync(join(dir, 'servegate.yml'), AB_TEST_CONFIG)
    ;[a, a2] = await Promise.all([startSim({ ttftMs: 20, itlMs: 10 }), startSim({ ttftMs: 20, itlMs: 10 })])
  })

  afterAll(async () => {
    await Promise.all([a?.close(), a2?.close()])
    if (dir) rmSync(dir, { recursive: true, force: true })
  })

  return {
    dir: () => dir,
    a: () => a!,
    a2: () => a2!,
    async ab(b, name, more = [], retries = 2) {
      const outDir = join(dir, name)
      const side = typeof b === 'string' ? ['--b-serve', b] : ['--b-base-url', b.url]
      // A is the simulator by URL unless the test starts it as a serve command (--a-serve in `more`).
      const sideA = more.includes('--a-serve') ? [] : ['--a-base-url', a!.url]
      const args = ['ab', ...sideA, ...side, '--rounds', '4', ...more, '--config', join(dir, 'servegate.yml'), '--out-dir', outDir]
      let r = await runCli(args)
      for (let i = 0; i < retries && spoiledUndecided(r.stdout); i++) r = await runCli(args)
      return { ...r, outDir }
    },
  }
}
