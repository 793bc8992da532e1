/**
 * Confirmation repeats: when the gate is undecided after the sweep's repeats
 * (a verdict's `confirm`), more repeats of the same sweep are run on the same
 * host and merged into the first result, so the verdict is over all of them.
 * Every effect is a parameter, so the Action and the CLI can both confirm.
 */
import type { ResolvedConfig } from '../config/resolve.js'
import type { ResultFile } from '../types.js'
import { deriveSeed } from '../util/rng.js'
import { dropPartialCurves, mergeStart, pointScopesOf } from '../gate/escalate.js'

/** What confirmation needs: the sweep, the merge, the result file writer, and the log. */
export interface ConfirmDeps {
  runSweep(
    cfg: ResolvedConfig,
    deps: { log(line: string): void; signal?: AbortSignal; onlyPoints?: ReadonlySet<string> | null },
  ): Promise<{ result: ResultFile }>
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

/**
 * Run `extraRepeats` more repeats of `cfg` and merge them into `first`, written over it at
 * `resultPath`. `onlyPoints`: the point scopes of the rows still open (gate/escalate.ts), the
 * only ones measured again; the merged result records each point's planned repeats.
 */
export async function confirmVerdict(
  deps: ConfirmDeps,
  cfg: ResolvedConfig,
  first: ResultFile,
  resultPath: string,
  extraRepeats: number,
  onlyPoints: ReadonlySet<string> | null = null,
): Promise<Confirmation> {
  const all = first.points.length
  const points = onlyPoints === null ? [] : pointScopesOf(onlyPoints)
  const which = onlyPoints === null || points.length >= all ? '' : ` of ${points.length} of ${all} points (${points.join(', ')})`
  deps.log(`servegate: undecided after ${cfg.repeats} repeat(s); running ${extraRepeats} more${which} to decide.`)
  // A fresh seed gives the extra repeats their own prompts, so none hits a prefix cached by the first sweep.
  const extraCfg: ResolvedConfig = {
    ...cfg,
    repeats: extraRepeats,
    seed: deriveSeed(cfg.seed, 'confirm'),
    resume: false,
    out: resultPath.replace(/\.json$/i, '') + '.confirm.json',
  }
  const ran = await deps.runSweep(extraCfg, { log: deps.log, ...(deps.signal ? { signal: deps.signal } : {}), ...(onlyPoints !== null ? { onlyPoints } : {}) })
  // Rows, not sweeps: a partial curve draws no throughput at target, and each point keeps the repeats it was planned for.
  const measured = mergeStart(first, ran.result, onlyPoints, deps.mergeResults.bind(deps))
  const extra = { result: dropPartialCurves(ran.result, onlyPoints, first) }
  await deps.writeResultFile(resultPath, measured)
  const note = `The first ${cfg.repeats} repeat(s) were undecided; ${extraRepeats} more were run and the verdict is over all of them.`
  return { measured, extra: extra.result, note }
}
