/** The A/B verdict of `servegate ab` (pure): the baseline gate's rows and blame, each metric decided from paired slots. */
import type { ResultFile } from '../types.js'
import { compareToBaseline } from '../gate/compare.js'
import { extractFigures } from '../gate/extract.js'
import { resolveGateOptions } from '../gate/options.js'
import { decidePaired, pairUp } from '../gate/paired.js'
import type { GateOptions, Verdict } from '../gate/types.js'
import { baselineFromResult } from '../store/baseline.js'

/**
 * The A/B verdict for two results of the same sweep whose repeat r was measured in slot
 * pair r. Everything but the statistics is the baseline gate's (./compare.ts): the rows,
 * the blame of broken, incomplete and invalid runs, the comparability checks (A stands in
 * as a one-refresh baseline); each metric's decision is paired.
 */
export function compareAB(a: ResultFile, b: ResultFile, options: Partial<GateOptions> = {}): Verdict {
  const baseline = baselineFromResult(a, 'A')
  const opts = resolveGateOptions(baseline, options)
  const figuresA = extractFigures(a, opts)
  return compareToBaseline(baseline, b, options, (key, candidateRuns, info) =>
    decidePaired({ pairs: pairUp(figuresA.get(key) ?? [], candidateRuns), higherIsBetter: info.higherIsBetter, tolerance: info.tolerance }, opts),
  )
}

