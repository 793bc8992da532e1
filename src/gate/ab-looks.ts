/**
 * A/B in looks (pure): a job looks after its first `rounds` rounds and then
 * after every round up to `maxRounds`, and stops at the first look where no
 * gated row is still open. Each row is a sequential test over the rounds
 * (./sequential.ts): it stops `regression` or `pass` at the first round whose
 * evidence crosses a boundary, and both boundaries keep their guarantees
 * whatever the number of looks (Ville's inequality), so looking after every
 * round costs neither false alarms nor power. A row that can never decide
 * (its sides are never restarted, so their start offsets never average away)
 * is blind and does not hold the job open.
 */
import { fingerprintOf } from './fingerprint.js'
import { pointRepeats } from './escalate.js'
import type { GateOptions, Verdict } from './types.js'
import type { Baseline } from '../records/baseline.js'
import type { ResultFile } from '../types.js'
import { compareAB, type Restarts } from './ab-verdict.js'

/**
 * The most rounds the Action's A/B runs unless told otherwise (its input max-rounds): the
 * truncation of every row's sequential test, far above the rounds a row needs on average
 * (docs/gate.md, "False alarms and power").
 */
export const DEFAULT_MAX_ROUNDS = 32

/** The rounds after which a job of `rounds` (first look) up to `maxRounds` looks: rounds, rounds + 1, …, maxRounds. */
export function lookRounds(rounds: number, maxRounds: number): number[] {
  const out: number[] = []
  for (let r = rounds; r <= Math.max(rounds, maxRounds); r++) out.push(r)
  return out
}

/** Why a max-rounds value is refused, in one line; null when it is allowed. */
export function maxRoundsProblem(rounds: number, maxRounds: number): string | null {
  if (Number.isInteger(maxRounds) && maxRounds >= rounds) return null
  return `expected a whole number of rounds no smaller than the first look's ${rounds}`
}

/**
 * Whether a look's verdict ends the job: a regression, a broken candidate or unlike settings end it
 * at once; otherwise every gated row must be decided (pass, improvement) or blind (no round would
 * decide it). A row the host spoiled so far keeps the job open: later rounds may measure it.
 */
export function settled(v: Verdict): boolean {
  if (v.verdict === 'regression' || v.verdict === 'broken' || v.verdict === 'not_comparable') return true
  const gated = v.rows.filter((r) => r.gated)
  return gated.length > 0 && gated.every((r) => r.status === 'pass' || r.status === 'improvement' || (r.status === 'undecided' && r.blind === true))
}

/** A side's result cut to its first `rounds` rounds (repeats 1…rounds), planned as that many. */
export function firstRounds(result: ResultFile, rounds: number): ResultFile {
  const keep = <T extends { repeat: number }>(runs: readonly T[]): T[] => runs.filter((r) => r.repeat <= rounds)
  const per = pointRepeats(result)
  const cut: ResultFile = {
    ...result,
    // An escalating job's points keep the rounds they were planned for, up to this one.
    config: {
      ...result.config,
      repeats: rounds,
      ...(per === null ? {} : { point_repeats: Object.fromEntries(Object.entries(per).map(([k, n]) => [k, Math.min(n, rounds)])) }),
    },
    points: result.points.map((p) => ({ ...p, runs: keep(p.runs) })),
    at_target: result.at_target.map((s) => ({ ...s, runs: keep(s.runs) })),
  }
  if (result.fingerprint !== undefined) cut.fingerprint = fingerprintOf(cut)
  return cut
}

/**
 * The look after round `round` of a job that runs up to `maxRounds`: `a` and `b` hold the rounds
 * measured so far. Returns the verdict and whether it ends the job (settled, or the last round).
 */
export function lookAt(
  a: ResultFile,
  b: ResultFile,
  round: number,
  maxRounds: number,
  opts: Partial<GateOptions>,
  restarted: Restarts,
  history: Baseline | null = null,
): { verdict: Verdict; done: boolean } {
  const last = round >= maxRounds
  const verdict = compareAB(firstRounds(a, round), firstRounds(b, round), { ...opts, look: last ? 'last' : 'screen', maxLooks: maxRounds }, restarted, history)
  return { verdict, done: last || settled(verdict) }
}
