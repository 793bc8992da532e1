/** The A/B verdict of `servegate ab` (pure): the baseline gate's rows and blame, each metric decided from paired slots. */
import type { ResultFile, RunResult } from '../types.js'
import { compareToBaseline } from '../gate/compare.js'
import { extractFigures } from '../gate/extract.js'
import { resolveGateOptions } from '../gate/options.js'
import { decidePaired, pairUp } from '../gate/paired.js'
import { BASELINE_SCHEMA, type Baseline, type GateOptions, type Verdict } from '../gate/types.js'
import { baselineFromResult, profileOf, refreshFromResult } from '../store/baseline.js'

/**
 * The A/B verdict for two results of the same sweep whose repeat r was measured in slot
 * pair r. Everything but the statistics is the baseline gate's (./compare.ts): the rows,
 * the blame of broken, incomplete and invalid runs, the comparability checks (A stands in
 * as a one-refresh baseline); each metric's decision is paired.
 */
export function compareAB(a: ResultFile, b: ResultFile, options: Partial<GateOptions> = {}): Verdict {
  const baseline = referenceBaseline(a)
  const opts = resolveGateOptions(baseline, options)
  const figuresA = extractFigures(a, opts)
  const verdict = compareToBaseline(baseline, b, options, (key, candidateRuns, info, rowOpts) =>
    decidePaired({ ...pairUp(figuresA.get(key) ?? [], candidateRuns), higherIsBetter: info.higherIsBetter, tolerance: info.tolerance }, rowOpts),
  )
  // The reference's own failures leave B's figures without a partner: say that A is why.
  const spoiled = verdict.rows.some((r) => r.gated && (r.status === 'unmeasured' || r.status === 'invalid'))
  const troubles = referenceTroubles(a)
  if (verdict.verdict === 'unmeasured' && spoiled && troubles.length > 0) {
    verdict.reasons.unshift(`unmeasured: the reference A broke or was spoiled, so B could not be measured against it: ${troubles.join('; ')}`)
  }
  return verdict
}

/**
 * A as a one-refresh baseline. A reference none of whose runs is valid still stands in (with no
 * figures), so every row is unmeasured and the verdict names A, instead of the refusal a baseline
 * refresh would give.
 */
function referenceBaseline(a: ResultFile): Baseline {
  const refresh = refreshFromResult(a)
  if (Object.values(refresh.runs).some((v) => v.length > 0)) return baselineFromResult(a, 'A')
  return { schema: BASELINE_SCHEMA, name: 'A', target: a.target, profile: profileOf(a), refreshes: [refresh] }
}

/** What went wrong in the reference's runs: failed requests with their error kinds, and validity codes. */
export function referenceTroubles(a: ResultFile): string[] {
  const out: string[] = []
  for (const p of a.points) {
    for (const r of p.runs) {
      if (r.validity.valid && r.failed === 0) continue
      const where = `A's run ${r.repeat} at ${p.input_len}x${p.output_len}@c${p.concurrency}`
      const codes = [...new Set(r.validity.issues.map((i) => i.code))]
      out.push(`${where}: ${[failedText(r), codes.length > 0 ? codes.join(', ') : null].filter((x) => x !== null).join(', ')}`)
    }
  }
  return out
}

function failedText(r: RunResult): string | null {
  if (r.failed === 0) return null
  const kinds = Object.entries(r.errors ?? {})
    .filter(([, n]) => n > 0)
    .map(([k, n]) => `${k} ×${n}`)
  return `${r.failed} request${r.failed === 1 ? '' : 's'} failed${kinds.length > 0 ? ` (${kinds.join(', ')})` : ''}`
}

