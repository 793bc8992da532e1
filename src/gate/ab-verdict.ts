/** The A/B verdict of `servegate ab` (pure): the baseline gate's rows and blame, each metric decided from paired slots. */
import type { ResultFile, RunResult } from '../types.js'
import { compareToBaseline } from './compare.js'
import { extractFigures } from './extract.js'
import { resolveGateOptions } from './options.js'
import { decidePaired, pairUp } from './paired.js'
import { BASELINE_SCHEMA, type Baseline, type GateOptions, type Verdict } from './types.js'
import { baselineFromResult, profileOf, refreshFromResult } from './refresh.js'
import { CODE_BLAME } from './invariants.js'
import { spreadOnHost } from './host-history.js'

const BOTH: Restarts = { A: true, B: true }
import { slotOf, type AbSchedule, type Side } from '../plan/ab-schedule.js'

/** Whether each side of an A/B job was started afresh for every slot (a command servegate starts, not resident). */
export type Restarts = { A: boolean; B: boolean }

/**
 * The A/B verdict for two results of the same sweep whose repeat r was measured in round r.
 * Everything but the statistics is the baseline gate's (./compare.ts): the rows, the blame of
 * broken, incomplete and invalid runs, the comparability checks (A stands in as a one-refresh
 * baseline); each metric is decided by the sequential test over the rounds (./paired.ts).
 * `restarted` says which sides were started afresh for every slot; `history` is the host's
 * history of the base branch's engine (a stored baseline's refreshes on this host), whose
 * noise the rows are designed with (the priors when null).
 */
export function compareAB(
  a: ResultFile,
  b: ResultFile,
  options: Partial<GateOptions> = {},
  restarted: Restarts = BOTH,
  history: Baseline | null = null,
): Verdict {
  const baseline = referenceBaseline(a)
  // A job decided at fixed rounds (no looks) truncates every row at the rounds it planned.
  const rounds = typeof a.config.repeats === 'number' ? a.config.repeats : 1
  options = { maxLooks: Math.max(1, rounds), ...options }
  const opts = resolveGateOptions(baseline, options)
  const figuresA = extractFigures(a, opts)
  // Only the base engine's starts on this host (its noise history and refreshes) describe its noise.
  const onHost = history === null ? [] : spreadOnHost(history, b.env)
  const logsOf = (key: string): number[][] => onHost.map((r) => (r.runs[key] ?? []).filter((x) => x > 0).map((x) => Math.log(x)))
  const verdict = compareToBaseline(baseline, b, options, (key, candidateRuns, info, rowOpts) => {
    const { pairs } = pairUp(figuresA.get(key) ?? [], candidateRuns)
    return decidePaired({ pairs, restarted, history: logsOf(key), ...info }, rowOpts)
  })
  // The reference's own failures leave B's figures without a partner: say that A is why.
  const spoiled = verdict.rows.some((r) => r.gated && (r.status === 'unmeasured' || r.status === 'invalid'))
  const troubles = referenceTroubles(a)
  if (verdict.verdict === 'unmeasured' && spoiled && troubles.length > 0) {
    verdict.reasons.unshift(`unmeasured: the reference A broke or was spoiled, so B could not be measured against it: ${troubles.join('; ')}`)
  }
  // The candidate's own troubles, named as B's: its spoiled slots, its failed requests, its regression.
  const spoiledB = invalidSlotLines('B', null, b)
  if (verdict.verdict === 'unmeasured' && spoiledB.length > 0)
    verdict.reasons.unshift(`unmeasured: B (the candidate) was not measured cleanly: ${spoiledB.join('; ')}`)
  if (verdict.verdict === 'broken') {
    const failed = failedSlotLines('B', b)
    verdict.reasons.unshift(`broken: B (the candidate) broke${failed.length > 0 ? `: ${failed.join('; ')}` : ''}`)
  }
  if (verdict.verdict === 'regression') verdict.reasons.unshift(`B regressed: ${verdict.regressions.join(', ')} (B is worse than A beyond the bar)`)
  // A side never restarted keeps one start offset for the whole job: say what would let the gate decide.
  const fixed = (['A', 'B'] as const).filter((s) => !restarted[s])
  if (verdict.verdict === 'undecided' && fixed.length > 0) {
    verdict.reasons.splice(
      1,
      0,
      `${fixed.join(' and ')} ${fixed.length === 1 ? 'was' : 'were'} never restarted (a server given by URL, or resident): ${fixed.length === 1 ? 'its start offset is' : 'their start offsets are'} shared by every round and never average away; serve commands for both sides, started afresh for every slot, would let the gate decide`,
    )
  }
  return verdict
}

/**
 * `B's runs in slot 3 are invalid: gpu_shared (GPU 0 (NVIDIA H200) had up to 1 other process)`:
 * one line per slot whose runs the host or the harness spoiled (validity codes blamed as
 * unmeasured), from a side's result. `slot` names the slot of a one-slot result; null: each
 * run's slot follows from its repeat (slot r of a side is its repeat r).
 */
export function invalidSlotLines(side: Side, slot: number | null, result: ResultFile): string[] {
  const bySlot = new Map<number, Map<string, string>>()
  for (const p of result.points) {
    for (const r of p.runs) {
      if (r.validity.valid) continue
      const n = slot ?? slotOf(side, r.repeat)
      for (const issue of r.validity.issues) {
        if (issue.code === 'checks_not_run' || CODE_BLAME[issue.code] !== 'unmeasured') continue
        const codes = bySlot.get(n) ?? new Map<string, string>()
        if (!codes.has(issue.code)) codes.set(issue.code, issueWhy(issue.detail))
        bySlot.set(n, codes)
      }
    }
  }
  return [...bySlot.entries()]
    .sort((x, y) => x[0] - y[0])
    .map(([n, codes]) => `${side}'s runs in slot ${n} are invalid: ${[...codes].map(([code, why]) => (why === '' ? code : `${code} (${why})`)).join(', ')}`)
}

/** `B's run in slot 4 at 32x8@c1: 3 requests failed (http_status ×3)`: each run of a side with failed requests. */
export function failedSlotLines(side: Side, result: ResultFile): string[] {
  const out: string[] = []
  for (const p of result.points) {
    for (const r of p.runs) {
      const failed = failedText(r)
      if (failed !== null) out.push(`${side}'s run in slot ${slotOf(side, r.repeat)} at ${p.input_len}x${p.output_len}@c${p.concurrency}: ${failed}`)
    }
  }
  return out
}

/** The cause of a validity issue without its preamble: "Something else was using the GPU during the run: X." → "X". */
function issueWhy(detail: string): string {
  const colon = detail.indexOf(': ')
  return (colon >= 0 ? detail.slice(colon + 2) : detail).replace(/\.$/, '').trim()
}

/**
 * A as a one-refresh baseline. A reference none of whose runs is valid still stands in (with no
 * figures), so every row is unmeasured and the verdict names A, instead of the refusal a baseline
 * refresh would give.
 */
export function referenceBaseline(a: ResultFile): Baseline {
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

/** What one A/B job decided, with both sides' results and how it held the host. */
export interface AbOutcome {
  verdict: Verdict
  a: ResultFile
  b: ResultFile
  paths: { a: string; b: string }
  /** The slot order, e.g. ['A', 'B', 'B', 'A']. */
  order: Side[]
  /** How the job held the host: the mode and why, the engine starts, the GPU-minutes. */
  schedule: AbSchedule
}
