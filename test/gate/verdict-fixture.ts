/** A hand-made verdict so renderer tests do not move when the decision rule is retuned. */
import type { GateRow, Verdict } from '../../src/gate/types.js'

function r(over: Partial<GateRow> & Pick<GateRow, 'key' | 'label' | 'status'>): GateRow {
  return {
    kind: 'itl_p95',
    unit: 'ms',
    higher_is_better: false,
    gated: true,
    baseline: 20,
    candidate: 20.1,
    delta_pct: 0.5,
    tolerance_pct: 5,
    bar_pct: 5,
    sigma_pct: 1.2,
    n_baseline: 30,
    n_candidate: 3,
    history: 10,
    mdc_pct: 7.1,
    notes: [],
    ...over,
  }
}

export const REGRESSION: Verdict = {
  verdict: 'regression',
  rows: [
    r({ key: 'itl_p95@4096x512@c1', label: 'p95 ITL 4096×512 c=1', status: 'pass', baseline: 10.02, candidate: 10.1, delta_pct: 0.8 }),
    r({ key: 'itl_p95@4096x512@c16', label: 'p95 ITL 4096×512 c=16', status: 'regression', baseline: 20.04, candidate: 23.1, delta_pct: 15.27 }),
    r({
      key: 'tput_at_target@4096x512',
      kind: 'tput_at_target',
      label: 'throughput at target 4096×512',
      unit: 'tok/s',
      higher_is_better: true,
      status: 'improvement',
      baseline: 1002.4,
      candidate: 1180.9,
      delta_pct: 17.81,
      bar_pct: 4.8,
      sigma_pct: 1.5,
      mdc_pct: 7.0,
    }),
    r({
      key: 'ttft_p95@4096x512@c1',
      kind: 'ttft_p95',
      label: 'p95 TTFT 4096×512 c=1',
      status: 'undecided',
      gated: false,
      baseline: 150,
      candidate: 157,
      delta_pct: 4.67,
    }),
  ],
  envChanges: [{ field: 'engine', baseline: 'vllm 0.9.0', candidate: 'vllm 0.9.1', blame: 'repository' }],
  reasons: ['p95 ITL 4096×512 c=16: +15.3 %, beyond the bar of +5.0 %'],
  regressions: ['p95 ITL 4096×512 c=16'],
  confirm: null,
  blind: [],
}

export const UNDECIDED: Verdict = {
  verdict: 'undecided',
  rows: [
    r({
      key: 'itl_p95@4096x512@c1',
      label: 'p95 ITL 4096×512 c=1',
      status: 'missing',
      baseline: 10,
      candidate: null,
      delta_pct: null,
      bar_pct: null,
      sigma_pct: null,
      mdc_pct: null,
      n_candidate: 0,
    }),
    r({ key: 'itl_p95@4096x512@c16', label: 'p95 ITL 4096×512 c=16', status: 'undecided', delta_pct: 4.1 }),
  ],
  envChanges: [],
  // compareToBaseline puts the undecided line first, so the comment opens with why the check fails.
  reasons: [
    'undecided: every row could see a regression of the promised size, but a change lies between the pass threshold and the bar; the check fails (more repeats or a reference command decide it)',
    'p95 ITL 4096×512 c=1: missing — candidate has no runs for this point',
    '6 more repeats of the gated sweep would likely settle it; decide over all runs',
  ],
  regressions: [],
  confirm: { extraRepeats: 6 },
  blind: [],
}

/** Undecided because one gated row is blind: its MDC (24.8 %) is above three times its 5 % tolerance; a loosened 10 % row is not. */
export const BLIND: Verdict = {
  verdict: 'undecided',
  rows: [
    r({
      key: 'itl_p95@4096x512@c1',
      label: 'p95 ITL 4096×512 c=1',
      status: 'undecided',
      delta_pct: -1.2,
      bar_pct: 16.8,
      sigma_pct: 5.9,
      mdc_pct: 24.8,
      blind: true,
    }),
    r({
      key: 'itl_p95@4096x512@c16',
      label: 'p95 ITL 4096×512 c=16',
      status: 'pass',
      delta_pct: 2.1,
      tolerance_pct: 10,
      bar_pct: 14.2,
      sigma_pct: 4.1,
      mdc_pct: 21.3,
      blind: false,
    }),
  ],
  envChanges: [],
  reasons: [
    'undecided and blind: p95 ITL 4096×512 c=1 (MDC 24.8 % > 15 %) could not have shown a regression of the size its limit promises (gate.max_mdc_pct), so the check fails; more refreshes, more repeats or a reference command give the gate power',
    'p95 ITL 4096×512 c=1: undecided — blind: the smallest change this row would catch 90 % of the time is 24.8 %, more than 15 %; more repeats, more refreshes (3 so far) or a reference command would give it power',
  ],
  regressions: [],
  confirm: null,
  blind: ['p95 ITL 4096×512 c=1'],
}
