/** The escalation ladder as one pure rule (gate/ladder.ts): baseline → more candidate starts, or A/B. */
import { describe, expect, it } from 'vitest'
import { baselineSideUnmeasured, firstStep, nextStep, stepOptions, type LadderState, type LadderStep } from '../../src/gate/ladder.js'
import type { GateRow, RowStatus, Verdict, VerdictKind } from '../../src/gate/types.js'

function row(status: RowStatus, over: Partial<GateRow> = {}): GateRow {
  return {
    key: 'itl_p95@4096x512@c1',
    kind: 'itl_p95',
    label: 'p95 ITL 4096×512 c=1',
    unit: 'ms',
    higher_is_better: false,
    gated: true,
    baseline: 10,
    candidate: 10,
    delta_pct: 0,
    bar_pct: 5,
    sigma_pct: 1,
    n_baseline: 30,
    n_candidate: 3,
    history: 10,
    mdc_pct: 7,
    status,
    notes: [],
    ...over,
  }
}

function verdict(kind: VerdictKind, rows: GateRow[] = [row(kind === 'not_comparable' ? 'pass' : (kind as RowStatus))]): Verdict {
  return { verdict: kind, rows, envChanges: [], reasons: [], regressions: [], confirm: null, blind: rows.filter((r) => r.blind === true).map((r) => r.label) }
}

/** Undecided on a row the stored centre leaves blind: no number of candidate starts would decide it. */
const BLIND = verdict('undecided', [row('undecided', { blind: true })])

/** Unmeasured on the baseline's side: no baseline figure, the candidate's runs valid. */
const BASELINE_SIDE = verdict('unmeasured', [row('unmeasured', { baseline: null, n_baseline: 0, n_candidate: 3 })])
/** Unmeasured on the candidate's side: its own runs were spoiled (a busy host now). */
const CANDIDATE_SIDE = verdict('unmeasured', [row('invalid', { n_candidate: 1 })])

const STEPS: LadderStep[] = ['baseline', 'starts', 'ab']
const FLAGS = [false, true]

/**
 * The ladder written out as a table: what follows each verdict, for every step and every
 * combination of a reference command, more candidate starts allowed and a changed host.
 */
function expected(v: string, s: LadderState): LadderStep | null {
  if (s.step === 'ab') return null
  const ref = s.hasReference ? 'ab' : null
  // No re-measurement changes a broken, incomplete or incomparable candidate.
  if (['broken', 'incomplete', 'not_comparable'].includes(v)) return null
  // The stored baseline on another host certifies nothing: measure the reference beside it, or stop.
  if (s.hostChanged) return ref
  switch (v) {
    case 'pass':
    case 'improvement':
      return null
    case 'undecided':
      // The reference decides what the stored baseline leaves open; without one, more starts of the candidate.
      return s.hasReference ? 'ab' : s.canRestart ? 'starts' : null
    case 'undecided (blind)':
      // More starts cannot decide a row the stored centre leaves blind; the reference can.
      return ref
    case 'regression':
      // Confirmed against the reference before the PR is blamed; without one the sequential test has called it.
      return ref
    case 'unmeasured (baseline side)':
      return ref
    case 'unmeasured (candidate side)':
      // The candidate's own runs were spoiled: a reference cannot repair them, unless the host changed.
      return s.hostChanged ? ref : null
    default:
      // broken, incomplete, not comparable: no re-measurement changes them.
      return null
  }
}

const CASES: Array<[string, Verdict]> = [
  ['pass', verdict('pass')],
  ['improvement', verdict('improvement')],
  ['undecided', verdict('undecided')],
  ['undecided (blind)', BLIND],
  ['regression', verdict('regression')],
  ['unmeasured (baseline side)', BASELINE_SIDE],
  ['unmeasured (candidate side)', CANDIDATE_SIDE],
  ['broken', verdict('broken')],
  ['incomplete', verdict('incomplete')],
  ['not_comparable', verdict('not_comparable')],
]

describe('firstStep', () => {
  it('starts at the stored baseline, or at A/B when the base branch always asks for a reference', () => {
    expect(firstStep(false, 'ladder')).toBe('baseline')
    expect(firstStep(true, 'ladder')).toBe('baseline')
    expect(firstStep(false, 'always')).toBe('baseline')
    expect(firstStep(true, 'always')).toBe('ab')
  })
})

describe('nextStep', () => {
  for (const [name, v] of CASES) {
    it(`follows ${name} at every step, with and without a reference, more starts allowed and a host change`, () => {
      for (const step of STEPS) {
        for (const hasReference of FLAGS) {
          for (const canRestart of FLAGS) {
            for (const hostChanged of FLAGS) {
              const state: LadderState = { step, hasReference, canRestart, hostChanged }
              expect({ state, next: nextStep(v, state) }).toEqual({ state, next: expected(name, state) })
            }
          }
        }
      }
    })
  }

  it('spells out the common paths', () => {
    const at = (step: LadderStep, o: Partial<LadderState> = {}): LadderState => ({ step, hasReference: true, canRestart: true, hostChanged: false, ...o })
    expect(nextStep(verdict('undecided'), at('baseline'))).toBe('ab')
    expect(nextStep(verdict('undecided'), at('baseline', { hasReference: false }))).toBe('starts')
    expect(nextStep(verdict('undecided'), at('starts', { hasReference: false }))).toBe('starts')
    expect(nextStep(verdict('undecided'), at('starts', { hasReference: false, canRestart: false }))).toBeNull()
    expect(nextStep(BLIND, at('baseline', { hasReference: false }))).toBeNull()
    expect(nextStep(verdict('regression'), at('baseline', { hasReference: false }))).toBeNull()
    expect(nextStep(verdict('undecided'), at('baseline', { hostChanged: true }))).toBe('ab')
    expect(nextStep(verdict('regression'), at('baseline'))).toBe('ab')
    expect(nextStep(verdict('regression'), at('ab'))).toBeNull()
    expect(nextStep(verdict('pass'), at('baseline'))).toBeNull()
    expect(nextStep(verdict('pass'), at('baseline', { hostChanged: true }))).toBe('ab')
  })
})

describe('baselineSideUnmeasured', () => {
  it('is true for an unmeasured verdict the baseline caused, or any unmeasured verdict after a host change', () => {
    expect(baselineSideUnmeasured(BASELINE_SIDE, false)).toBe(true)
    expect(baselineSideUnmeasured(CANDIDATE_SIDE, false)).toBe(false)
    expect(baselineSideUnmeasured(CANDIDATE_SIDE, true)).toBe(true)
    // An unmeasured row whose candidate has no valid run, or a missing one, is the candidate's.
    expect(baselineSideUnmeasured(verdict('unmeasured', [row('unmeasured', { n_candidate: 0 })]), false)).toBe(false)
    expect(baselineSideUnmeasured(verdict('unmeasured', [row('missing', { n_candidate: 0 })]), false)).toBe(false)
    // Reported rows do not count; no gated row at all is nothing the reference could repair.
    expect(baselineSideUnmeasured(verdict('unmeasured', [row('invalid', { gated: false })]), false)).toBe(false)
    expect(baselineSideUnmeasured(verdict('unmeasured', [row('invalid', { gated: false }), row('unmeasured', { n_candidate: 3 })]), false)).toBe(true)
  })

  it('is false for every other verdict, host change or not', () => {
    for (const kind of ['pass', 'improvement', 'regression', 'undecided', 'broken', 'incomplete', 'not_comparable'] as VerdictKind[]) {
      expect(baselineSideUnmeasured(verdict(kind), true)).toBe(false)
      expect(baselineSideUnmeasured(verdict(kind), false)).toBe(false)
    }
  })
})

describe('the options of each look', () => {
  it('keeps the stored baseline interim while a later step can decide, and truncates candidate starts at their budget', () => {
    expect(stepOptions('baseline', { hasReference: true, canRestart: true, maxStarts: 8 })).toEqual({ look: 'screen', alphaShare: 1, maxLooks: 1 })
    expect(stepOptions('baseline', { hasReference: false, canRestart: true, maxStarts: 8 })).toEqual({ look: 'screen', alphaShare: 1, maxLooks: 8 })
    // Nothing follows: the stored baseline's one look is the last, and decides or stays undecided.
    expect(stepOptions('baseline', { hasReference: false, canRestart: false, maxStarts: 8 })).toEqual({ look: 'last', alphaShare: 1, maxLooks: 1 })
    expect(stepOptions('ab', { hasReference: true, canRestart: false, maxStarts: 8 })).toEqual({ alphaShare: 1 })
  })
})
