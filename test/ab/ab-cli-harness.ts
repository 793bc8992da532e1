/**
 * What the `servegate ab` CLI tests share: A (and a second, identical A) as simulators in the
 * test process, a config of the A/B test sweep, and one `ab` run that a busy host's saturated
 * client is allowed to spoil at most twice before its verdict stands. The regression and the
 * pass are two files so the timed lane runs them side by side (each waits on its simulators).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll } from 'vitest'
import { startSim, type SimHandle } from '../../src/sim/index.js'
import { AB_TEST_CONFIG } from '../action/dist-harness.js'
import { cliArgs } from '../fixtures/servegate-cli.js'
import { runCli } from '../sweep/cli-child.js'

/** B's engine as a serve command: the simulator of the CLI bundled from the sources for this test run. */
export const SIM = `${process.execPath} ${cliArgs()[0]} sim --port {port}`

export interface AbCli {
  /** The scratch folder (holds servegate.yml). */
  dir(): string
  /** A: a deterministic simulator (TTFT 20 ms, ITL 10 ms). */
  a(): SimHandle
  /** A second simulator identical to A. */
  a2(): SimHandle
  /** One ab run; one whose gated rows a saturated client spoiled on a busy host (host blame) is run again, at most twice. */
  ab(b: SimHandle | string, name: string, more?: string[]): Promise<Awaited<ReturnType<typeof runCli>> & { outDir: string }>
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
    async ab(b, name, more = []) {
      const outDir = join(dir, name)
      const side = typeof b === 'string' ? ['--b-serve', b] : ['--b-base-url', b.url]
      const args = ['ab', '--a-base-url', a!.url, ...side, '--rounds', '4', ...more, '--config', join(dir, 'servegate.yml'), '--out-dir', outDir]
      let r = await runCli(args)
      // (A gated row spoiled by a saturated client hides what it would have shown, and a pair it
      // spoiled costs the power the verdict needs: run again. Running again only jobs judged
      // unmeasured left the llama lane's deeper A/B undecided on 3 pairs beside a busy loop.)
      for (let i = 0; i < 2 && /client_saturated/.test(r.stdout); i++) r = await runCli(args)
      return { ...r, outDir }
    },
  }
}
