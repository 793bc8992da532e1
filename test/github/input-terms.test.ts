import { describe, expect, it } from 'vitest'
import { DEFAULT_FAIL_ON } from '../../src/gate/outcome.js'
import { baseTermView, conflictMessage, inputConflicts } from '../../src/github/input-terms.js'
import type { ActionInputs } from '../../src/github/inputs.js'

const SOURCE = 'servegate.yml on main (1a2b3c4d5e6f)'
const REF = 'vllm serve base-model --port {port}'
const pinned = baseTermView({ gate: { fail_on: ['regression', 'broken'], confirm: true, reference_command: REF } }, SOURCE)
const loose = baseTermView({ gate: {} }, SOURCE)
type Given = Parameters<typeof inputConflicts>[0]
const inputs = (o: Partial<ActionInputs> = {}): Given => ({ mode: 'gate', failOn: [...DEFAULT_FAIL_ON], confirm: true, ...o })

describe("inputs against the base branch's config", () => {
  it('accepts inputs left at their defaults, and inputs that repeat the base', () => {
    expect(inputConflicts(inputs(), pinned)).toEqual([])
    expect(inputConflicts(inputs({ failOn: ['broken', 'regression'], referenceServe: REF }), pinned)).toEqual([])
    expect(inputConflicts(inputs({ mode: 'ab', aServe: REF }), pinned)).toEqual([])
  })

  it('refuses fail-on where the base pins gate.fail_on otherwise, naming the input and both values', () => {
    expect(inputConflicts(inputs({ failOn: [] }), pinned)).toEqual([`the input fail-on "never" differs from gate.fail_on "regression,broken" in ${SOURCE}`])
    // Stricter is refused too: the base decides, and the workflow may only repeat it.
    expect(inputConflicts(inputs({ failOn: ['regression', 'broken', 'unmeasured'] }), pinned)).toEqual([
      `the input fail-on "regression,broken,unmeasured" differs from gate.fail_on "regression,broken" in ${SOURCE}`,
    ])
  })

  it("leaves fail-on to the input where the base pins none (a matrix job's fail-on: never)", () => {
    expect(inputConflicts(inputs({ failOn: [] }), loose)).toEqual([])
  })

  it('refuses confirm: false where the base says gate.confirm: true', () => {
    expect(inputConflicts(inputs({ confirm: false }), pinned)).toEqual([`the input confirm "false" differs from gate.confirm "true" in ${SOURCE}`])
    expect(inputConflicts(inputs({ confirm: false }), loose)).toEqual([])
  })

  it("refuses a reference-serve that is not the base's gate.reference_command, or where the base names none", () => {
    const mine = 'vllm serve pr-model --port {port}'
    expect(inputConflicts(inputs({ referenceServe: mine }), pinned)).toEqual([
      `the input reference-serve "${mine}" differs from gate.reference_command "${REF}" in ${SOURCE}`,
    ])
    expect(inputConflicts(inputs({ mode: 'check', referenceServe: mine }), loose)).toEqual([
      `the input reference-serve "${mine}" differs from gate.reference_command (not set) in ${SOURCE}`,
    ])
  })

  it("refuses, in mode ab, a side A other than the base's gate.reference_command when the base names one", () => {
    expect(inputConflicts(inputs({ mode: 'ab', aServe: 'vllm serve pr-model --port {port}' }), pinned)).toEqual([
      `the input a-serve "vllm serve pr-model --port {port}" differs from gate.reference_command "${REF}" in ${SOURCE}`,
    ])
    expect(inputConflicts(inputs({ mode: 'ab', aBaseUrl: 'http://127.0.0.1:9000' }), pinned)).toEqual([
      `the input a-base-url "http://127.0.0.1:9000" differs from gate.reference_command "${REF}" in ${SOURCE}`,
    ])
    expect(inputConflicts(inputs({ mode: 'ab', aServe: 'vllm serve other --port {port}' }), loose)).toEqual([])
  })

  it('words one refusal, or several at once', () => {
    expect(conflictMessage([])).toBeNull()
    expect(conflictMessage(['the input confirm "false" differs from gate.confirm "true" in f'])).toBe(
      `the input confirm "false" differs from gate.confirm "true" in f: the base branch's config decides this term, and an input may only repeat it`,
    )
    expect(conflictMessage(inputConflicts(inputs({ failOn: [], confirm: false }), pinned))).toBe(
      `the input fail-on "never" differs from gate.fail_on "regression,broken" in ${SOURCE}; the input confirm "false" differs from gate.confirm "true" in ${SOURCE}: the base branch's config decides these terms, and an input may only repeat them`,
    )
  })
})
