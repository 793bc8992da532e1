/**
 * One table from verdict to consequence, shared by `servegate compare` (exit
 * code) and the Action (step outcome), so the same two files can never pass in
 * one and fail in the other. Pure.
 *
 * | verdict          | in fail-on (default)      | exit / step  |
 * |------------------|---------------------------|--------------|
 * | pass             | never                     | 0 / passes   |
 * | improvement      | never                     | 0 / passes   |
 * | inconclusive     | no                        | 0 / passes, never called a pass; 1 / fails when listed |
 * | regression       | yes                       | 1 / fails    |
 * | broken           | yes                       | 1 / fails    |
 * | incomplete       | yes                       | 1 / fails    |
 * | not_comparable   | yes                       | 2 / fails    |
 * A verdict left out of fail-on exits 0 and passes the step.
 */
import { UsageError } from '../errors.js'
import type { VerdictKind } from './types.js'

/** Verdicts `fail-on` may list. */
export const FAIL_ON_VERDICTS = ['regression', 'broken', 'incomplete', 'not_comparable', 'inconclusive'] as const
export type FailOnVerdict = (typeof FAIL_ON_VERDICTS)[number]

/** The default: everything that is not certified good fails, except statistical or host indecision. */
export const DEFAULT_FAIL_ON: readonly FailOnVerdict[] = ['regression', 'broken', 'incomplete', 'not_comparable']

/** The verdicts that mean "nothing was measured that could pass": leaving one out of fail-on earns a warning. */
export const FAIL_CLOSED_VERDICTS: readonly FailOnVerdict[] = ['broken', 'incomplete', 'not_comparable']

/**
 * Parse a fail-on list: verdict names separated by commas or spaces; `never`
 * alone fails on nothing; `inconclusive` alone keeps its old meaning (fail on
 * everything but pass and improvement). `where` names the flag or input.
 */
export function parseFailOn(text: string, where: string): FailOnVerdict[] {
  const words = text
    .split(/[\s,]+/)
    .map((w) => w.trim())
    .filter((w) => w !== '')
  if (words.length === 0) return [...DEFAULT_FAIL_ON]
  if (words.length === 1 && words[0] === 'never') return []
  if (words.length === 1 && words[0] === 'inconclusive') return [...FAIL_ON_VERDICTS]
  const out: FailOnVerdict[] = []
  for (const w of words) {
    const v = w.replace(/-/g, '_')
    if (!(FAIL_ON_VERDICTS as readonly string[]).includes(v)) {
      throw new UsageError(
        `${where} ${JSON.stringify(text)}: "${w}" is not a verdict; expected a comma-separated list of ${FAIL_ON_VERDICTS.join(', ')}, or never`,
        `The default is ${DEFAULT_FAIL_ON.join(',')}.`,
      )
    }
    if (!out.includes(v as FailOnVerdict)) out.push(v as FailOnVerdict)
  }
  return out
}

/** A warning when fail-on lets a broken, incomplete or incomparable candidate pass; null otherwise. */
export function failOnWarning(failOn: readonly FailOnVerdict[]): string | null {
  const open = FAIL_CLOSED_VERDICTS.filter((v) => !failOn.includes(v))
  if (open.length === 0) return null
  return `fail-on leaves out ${open.join(', ')}: such a verdict will not fail, although nothing about the candidate was certified`
}

/** Exit code of `servegate compare`, and whether the Action's step fails (it fails exactly when this is not 0). */
export function gateExit(verdict: VerdictKind, failOn: readonly FailOnVerdict[]): 0 | 1 | 2 {
  if (verdict === 'pass' || verdict === 'improvement') return 0
  if (!failOn.includes(verdict)) return 0
  return verdict === 'not_comparable' ? 2 : 1
}

/**
 * The verdicts from worst to best, in the order the gate decides them (docs/gate.md, "Verdict": the first
 * that applies): another machine or measurement says nothing, a broken candidate outranks a regression,
 * a regression outranks missing runs, missing runs outrank indecision. A matrix's verdict is its worst.
 */
export const VERDICT_PRECEDENCE: readonly VerdictKind[] = ['not_comparable', 'broken', 'regression', 'incomplete', 'inconclusive', 'improvement', 'pass']

/** Rank of a verdict in VERDICT_PRECEDENCE: 0 is the worst. */
export function verdictRank(v: VerdictKind): number {
  return VERDICT_PRECEDENCE.indexOf(v)
}

/** The worst of several verdicts by the gate's precedence; `pass` for none. */
export function worstVerdict(verdicts: Iterable<VerdictKind>): VerdictKind {
  let worst: VerdictKind = 'pass'
  for (const v of verdicts) if (verdictRank(v) < verdictRank(worst)) worst = v
  return worst
}
