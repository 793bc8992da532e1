/**
 * Confirmation repeats: when the gate is undecided after the sweep's repeats
 * (a verdict's `confirm`), more repeats of the same sweep are run on the same
 * host and merged into the first result, so the verdict is over all of them.
 * Every effect is a parameter, so the Action and the CLI can both confirm.
 */
import type { ResolvedConfig } from '../config/resolve.js'
import type { ResultFile } from '../types.js'
import { deriveSeed } from '../util/rng.js'

/** What confirmation needs: the sweep, the merge, the result file writer, and the log. */
export interface ConfirmDeps {
  runSweep(cfg: ResolvedConfig, deps: { log(line: string): void; signal?: AbortSignal }): Promise<{ result: ResultFile }>
  /** The first result with the runs of `extra` appended. */
  mergeResults(first: ResultFile, extra: ResultFile): ResultFile
  writeResultFile(path: string, result: ResultFile): Promise<void>
  log(line: string): void
  signal?: AbortSignal
}

export interface Confirmation {
  /** The merged result (also written over the first at `resultPath`). */
  measured: ResultFile
  /** The extra repeats alone. */
  extra: ResultFile
  /** What the report says about the extra repeats. */
  note: string
}

/** Run `extraRepeats` more repeats of `cfg` and merge them into `first`, written over it at `resultPath`. */
export async function confirmVerdict(
  deps: ConfirmDeps,
  cfg: ResolvedConfig,
  first: ResultFile,
  resultPath: string,
  extraRepeats: number,
): Promise<Confirmation> {
  deps.log(`servegate: undecided after ${cfg.repeats} repeat(s); running ${extraRepeats} more to decide.`)
  // A fresh seed gives the extra repeats their own prompts, so none hits a prefix cached by the first sweep.
  const extraCfg: ResolvedConfig = {
    ...cfg,
    repeats: extraRepeats,
    seed: deriveSeed(cfg.seed, 'confirm'),
    resume: false,
    out: resultPath.replace(/\.json$/i, '') + '.confirm.json',
  }
  const extra = await deps.runSweep(extraCfg, { log: deps.log, ...(deps.signal ? { signal: deps.signal } : {}) })
  const measured = deps.mergeResults(first, extra.result)
  await deps.writeResultFile(resultPath, measured)
  const note = `The first ${cfg.repeats} repeat(s) were undecided; ${extraRepeats} more were run and the verdict is over all of them.`
  return { measured, extra: extra.result, note }
}
