/**
 * The workflow's inputs against the config's terms. The inputs live in a
 * workflow file a pull request can edit, so where the config (the base
 * branch's, when the terms come from there) sets a term, an input may only
 * repeat it: `fail-on` against `gate.fail_on`, `confirm: false` against
 * `gate.confirm: true`, `reference-serve` against `gate.reference_command`
 * (which the base branch must name for a gate to re-measure a reference), and
 * in mode ab `a-serve` / `a-base-url` against `gate.reference_command`.
 * Pure: the caller reads the files.
 */
import { DEFAULT_FAIL_ON, parseFailOn, type FailOnVerdict } from '../gate/outcome.js'
import type { ConfigFile } from '../config/schema.js'
import type { ActionInputs } from './inputs.js'

/** What the config decides about judging a verdict, where it sets it (null: the input decides). */
export interface Judgement {
  /** `gate.fail_on`: the verdicts that fail the step. */
  failOn: FailOnVerdict[] | null
  /** `gate.confirm`: whether an undecided verdict runs the extra repeats the gate asks for. */
  confirm: boolean | null
  /** The config file and where it was read, e.g. `servegate.yml on main (1a2b3c4d5e6f)`. */
  source: string
}

/** The judgement a config file sets (`gate.fail_on`, `gate.confirm`); `source` names the file in messages. */
export function configJudgement(file: ConfigFile | null, source: string): Judgement {
  const raw = file?.gate?.fail_on
  return {
    failOn: raw === undefined ? null : parseFailOn(Array.isArray(raw) ? raw.join(',') : raw, `gate.fail_on in ${source}`),
    confirm: file?.gate?.confirm ?? null,
    source,
  }
}

/**
 * The `fail-on` and `confirm` a run judges by. The inputs come from a workflow file the pull
 * request can edit, so where the config (the base branch's, on a gate) sets a judgement, it
 * wins; an input given to loosen it (fail on fewer verdicts, skip the confirmation repeats) is
 * refused with a warning. `given` says which inputs the workflow set (an unset one is its default, no request).
 */
export function judgeByConfig(
  inputs: Pick<ActionInputs, 'failOn' | 'confirm'>,
  given: { failOn: boolean; confirm: boolean },
  j: Judgement,
): { failOn: FailOnVerdict[]; confirm: boolean; warnings: string[] } {
  const warnings: string[] = []
  let failOn = [...inputs.failOn]
  if (j.failOn !== null) {
    const dropped = j.failOn.filter((v) => !inputs.failOn.includes(v))
    if (given.failOn && dropped.length > 0) {
      warnings.push(
        `the input fail-on "${inputs.failOn.join(',') || 'never'}" would let ${dropped.join(', ')} pass, which gate.fail_on in ${j.source} fails: refused; the step fails on ${j.failOn.join(',') || 'nothing'}.`,
      )
    }
    failOn = [...j.failOn]
  }
  let confirm = inputs.confirm
  if (j.confirm !== null) {
    if (given.confirm && j.confirm && !inputs.confirm) {
      warnings.push(
        `the input confirm: false would skip the confirmation repeats gate.confirm: true in ${j.source} asks for: refused; an undecided verdict runs them.`,
      )
    }
    confirm = j.confirm
  }
  return { failOn, confirm, warnings }
}

/** The same verdicts, in any order. */
function sameVerdicts(a: readonly FailOnVerdict[], b: readonly FailOnVerdict[]): boolean {
  return a.length === b.length && a.every((v) => b.includes(v))
}

/** A fail-on list as the input spells it (`never` for none). */
const spell = (vs: readonly FailOnVerdict[]): string => vs.join(',') || 'never'

/** What a base config sets that the inputs may only repeat: its judgement and its reference engine. */
export interface BaseTermView {
  judgement: Judgement
  /** `gate.reference_command`, or null when the config sets none. */
  referenceCommand: string | null
}

/** The base view of a config file read from `source` (e.g. `servegate.yml on main (1a2b3c4d5e6f)`). */
export function baseTermView(file: ConfigFile | null, source: string): BaseTermView {
  return { judgement: configJudgement(file, source), referenceCommand: file?.gate?.reference_command ?? null }
}

/**
 * One line per input that sets a term the base config sets otherwise, naming the input, its value,
 * the config key and the base's value; empty when the inputs agree. The `fail-on` input counts as
 * set when it is not the Action's default (every verdict but a pass), which is what GitHub passes
 * for an unset input; `confirm` defaults to true, so only `confirm: false` can contradict.
 */
export function inputConflicts(
  inputs: Pick<ActionInputs, 'mode' | 'failOn' | 'confirm' | 'referenceServe' | 'aServe' | 'aBaseUrl'>,
  base: BaseTermView,
): string[] {
  const { source } = base.judgement
  const differs = (input: string, value: string, key: string, baseValue: string | null): string =>
    `the input ${input} "${value}" differs from ${key} ${baseValue === null ? '(not set)' : `"${baseValue}"`} in ${source}`
  const out: string[] = []
  const failOn = base.judgement.failOn
  if (failOn !== null && !sameVerdicts(inputs.failOn, DEFAULT_FAIL_ON) && !sameVerdicts(inputs.failOn, failOn)) {
    out.push(differs('fail-on', spell(inputs.failOn), 'gate.fail_on', spell(failOn)))
  }
  if (base.judgement.confirm === true && !inputs.confirm) out.push(differs('confirm', 'false', 'gate.confirm', 'true'))
  const ref = base.referenceCommand
  // The engine a gate compares with when the baseline cannot decide: the base's, or none.
  if ((inputs.mode === 'gate' || inputs.mode === 'check') && inputs.referenceServe !== undefined && inputs.referenceServe !== ref) {
    out.push(differs('reference-serve', inputs.referenceServe, 'gate.reference_command', ref))
  }
  if (inputs.mode === 'ab' && ref !== null) {
    if (inputs.aServe !== undefined && inputs.aServe !== ref) out.push(differs('a-serve', inputs.aServe, 'gate.reference_command', ref))
    if (inputs.aBaseUrl !== undefined) out.push(differs('a-base-url', inputs.aBaseUrl, 'gate.reference_command', ref))
  }
  return out
}

/** The refusal of `conflicts` (inputConflicts) as one message, or null when there are none. */
export function conflictMessage(conflicts: readonly string[]): string | null {
  if (conflicts.length === 0) return null
  const one = conflicts.length === 1
  return `${conflicts.join('; ')}: the base branch's config decides ${one ? 'this term' : 'these terms'}, and an input may only repeat ${one ? 'it' : 'them'}`
}
