/**
 * One table from verdict to consequence, shared by `servegate compare` (exit
 * code), the Action (step outcome), `servegate ab` and `servegate aggregate`,
 * so the same two files can never pass in one and fail in another. Pure.
 * docs/gate.md, "Verdicts and exit codes", shows this table to users.
 *
 * | verdict          | meaning                                                      | default exit / step |
 * |------------------|--------------------------------------------------------------|---------------------|
 * | pass, improvement| every gated metric measured on both sides, decided within its bar | 0 / passes     |
 * | regression       | a gated metric decided beyond its bar                        | 1 / fails           |
 * | broken           | the candidate broke (failures over budget, early stop, dead server, token mismatch) | 1 / fails |
 * | incomplete       | a gated point, shape or planned repeat is missing            | 1 / fails           |
 * | unmeasured       | a gated metric lacks a valid measurement on either side      | 1 / fails           |
 * | undecided        | measured on both sides, the statistics cannot decide (a blind row, or a change between pass threshold and bar) | 1 / fails |
 * | not_comparable   | GPU, target, model, API or measurement settings differ       | 2 / fails           |
 * A verdict left out of fail-on exits 0 and passes the step (with a warning that it was left out).
 */
import { UsageError } from '../errors.js'
import type { VerdictKind } from './types.js'

/** Verdicts `fail-on` may list. */
export const FAIL_ON_VERDICTS = ['regression', 'broken', 'incomplete', 'unmeasured', 'undecided', 'not_comparable'] as const
export type FailOnVerdict = (typeof FAIL_ON_VERDICTS)[number]

/** The default: every verdict that is not a pass fails. */
export const DEFAULT_FAIL_ON: readonly FailOnVerdict[] = FAIL_ON_VERDICTS

/** The verdicts that mean "nothing was measured that could pass": leaving one out of fail-on earns a warning. */
const FAIL_CLOSED_VERDICTS: readonly FailOnVerdict[] = ['broken', 'incomplete', 'unmeasured', 'not_comparable']

/** The old name for "could not measure or could not decide", still read in fail-on lists and old records. */
const INCONCLUSIVE = 'inconclusive'

/** What a deprecated `inconclusive` in fail-on now means, for the warning. */
export const INCONCLUSIVE_WARNING = 'fail-on: "inconclusive" is deprecated and read as "unmeasured,undecided"; name those two instead'

/**
 * Parse a fail-on list: verdict names separated by commas or spaces; `never`
 * alone fails on nothing; `inconclusive` reads as unmeasured and undecided (the
 * caller warns: see usesInconclusive). `where` names the flag or input.
 */
export function parseFailOn(text: string, where: string): FailOnVerdict[] {
  const words = text
    .split(/[\s,]+/)
    .map((w) => w.trim())
    .filter((w) => w !== '')
  if (words.length === 0) return [...DEFAULT_FAIL_ON]
  if (words.length === 1 && words[0] === 'never') return []
  const out: FailOnVerdict[] = []
  const add = (v: FailOnVerdict): void => {
    if (!out.includes(v)) out.push(v)
  }
  for (const w of words) {
    const v = w.replace(/-/g, '_')
    if (v === INCONCLUSIVE) {
      add('unmeasured')
      add('undecided')
      continue
    }
    if (!(FAIL_ON_VERDICTS as readonly string[]).includes(v)) {
      throw new UsageError(
        `${where} ${JSON.stringify(text)}: "${w}" is not a verdict; expected a comma-separated list of ${FAIL_ON_VERDICTS.join(', ')}, or never`,
        `The default is ${DEFAULT_FAIL_ON.join(',')}.`,
      )
    }
    add(v as FailOnVerdict)
  }
  return out
}

/** Whether a fail-on text names the deprecated `inconclusive` (the caller prints INCONCLUSIVE_WARNING). */
export function usesInconclusive(text: string): boolean {
  return text.split(/[\s,]+/).some((w) => w.trim() === INCONCLUSIVE)
}

/** A warning when fail-on lets a broken, incomplete, unmeasured or incomparable candidate pass; null otherwise. */
export function failOnWarning(failOn: readonly FailOnVerdict[]): string | null {
  const open = FAIL_CLOSED_VERDICTS.filter((v) => !failOn.includes(v))
  if (open.length === 0) return null
  return `fail-on leaves out ${open.join(', ')}: such a verdict will not fail, although nothing about the candidate was certified`
}

/**
 * Exit code of `servegate compare` (and `ab`, `aggregate`), and whether the Action's step fails
 * (it fails exactly when this is not 0).
 */
export function gateExit(verdict: VerdictKind, failOn: readonly FailOnVerdict[]): 0 | 1 | 2 {
  if (verdict === 'pass' || verdict === 'improvement') return 0
  if (!failOn.includes(verdict)) return 0
  return verdict === 'not_comparable' ? 2 : 1
}

/**
 * The verdicts from worst to best, in the order the gate decides them (docs/gate.md, "Verdict": the first
 * that applies): another machine or measurement says nothing, a broken candidate outranks a regression,
 * a regression outranks missing runs, missing runs outrank missing measurements, which outrank
 * indecision. A matrix's verdict is its worst.
 */
export const VERDICT_PRECEDENCE: readonly VerdictKind[] = [
  'not_comparable',
  'broken',
  'regression',
  'incomplete',
  'unmeasured',
  'undecided',
  'improvement',
  'pass',
]

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
