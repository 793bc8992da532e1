/**
 * A/B in looks (pure): an A/B job may run its first `rounds` and look, then
 * two more rounds at a time up to `maxRounds`, stopping as soon as a look
 * passes every gated row with power to spare. A host whose engine starts
 * scatter little is decided in a few rounds; one whose starts drift gets the
 * rounds it needs to see the regression the gate promises, and the verdict
 * says how many it took.
 *
 * Why it keeps the false-alarm rate: an early look can only stop the job on a
 * pass (an early stop never turns a check red); a regression is only called
 * by the last look, over every round, at the row's full level. Why it keeps
 * the power: an early look passes a row only below its screening threshold
 * (passMargin · σ under the bar) and only while the row can see twice its
 * tolerance (screenMdc), so a regression of that size almost never stops
 * the job early.
 */
import { fingerprintOf } from './fingerprint.js'
import { resolveGateOptions } from './options.js'
import type { GateOptions, Verdict } from './types.js'
import type { ResultFile } from '../types.js'
import { compareAB } from './ab-verdict.js'

/**
 * The most rounds the Action's A/B runs unless told otherwise (its input max-rounds): what the
 * gate's bench needs to keep false alarms under 1 % per pull request, 14 rows gated, on a host whose engine starts scatter by 3 % (docs/gate.md).
 */
export const DEFAULT_MAX_ROUNDS = 32

/** Rounds added between two looks: one more of each order (A B, B A), so every look is balanced. */
const LOOK_STEP = 2

/** The rounds after which a job of `rounds` (first look) up to `maxRounds` looks: rounds, rounds + 2, …, maxRounds. */
export function lookRounds(rounds: number, maxRounds: number): number[] {
  const out: number[] = []
  for (let r = rounds; r < maxRounds; r += LOOK_STEP) out.push(r)
  out.push(Math.max(rounds, maxRounds))
  return out
}

/** Why a max-rounds value is refused, in one line; null when it is allowed. */
export function maxRoundsProblem(rounds: number, maxRounds: number): string | null {
  if (Number.isInteger(maxRounds) && maxRounds >= rounds) return null
  return `expected a whole number of rounds no smaller than the first look's ${rounds}`
}

/**
 * The options of an early look over the job's gate options: a screening look (a row passes only
 * clearly below its bar) that only passes rows able to see twice their tolerance.
 */
function earlyLookOptions(opts: Partial<GateOptions>): Partial<GateOptions> {
  return { ...opts, look: 'screen', screenMdc: 2 * resolveGateOptions(null, opts).defaultTolerance }
}

/** Whether an early look's verdict ends the job: it passes (or improves) every gated row, none blind or undecided. */
export function stopsEarly(v: Verdict): boolean {
  if (v.verdict !== 'pass' && v.verdict !== 'improvement') return false
  const gated = v.rows.filter((r) => r.gated)
  return gated.length > 0 && gated.every((r) => r.status === 'pass' || r.status === 'improvement')
}

/** A side's result cut to its first `rounds` rounds (repeats 1…rounds), planned as that many. */
export function firstRounds(result: ResultFile, rounds: number): ResultFile {
  const keep = <T extends { repeat: number }>(runs: readonly T[]): T[] => runs.filter((r) => r.repeat <= rounds)
  const cut: ResultFile = {
    ...result,
    config: { ...result.config, repeats: rounds },
    points: result.points.map((p) => ({ ...p, runs: keep(p.runs) })),
    at_target: result.at_target.map((s) => ({ ...s, runs: keep(s.runs) })),
  }
  if (result.fingerprint !== undefined) cut.fingerprint = fingerprintOf(cut)
  return cut
}

/**
 * The look after round `round` of a job that runs up to `maxRounds`: `a` and `b` hold the rounds
 * measured so far. An early look returns its verdict only when it ends the job (stopsEarly), else
 * null (measure two more rounds); the last look always decides, with the job's own options.
 */
export function lookAt(
  a: ResultFile,
  b: ResultFile,
  round: number,
  maxRounds: number,
  opts: Partial<GateOptions>,
  mode: 'exclusive' | 'resident',
): Verdict | null {
  if (round >= maxRounds) return compareAB(firstRounds(a, maxRounds), firstRounds(b, maxRounds), opts, mode)
  const v = compareAB(firstRounds(a, round), firstRounds(b, round), earlyLookOptions(opts), mode)
  return stopsEarly(v) ? v : null
}
