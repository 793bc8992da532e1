/**
 * A matrix of runners gives one verdict: the verdict records of its jobs
 * (gate/record.ts), one row per configuration, the worst on top by the gate's
 * precedence (gate/outcome.ts VERDICT_PRECEDENCE). Fails closed: an expected
 * configuration without a record, or whose record holds no verdict (an error,
 * a cancel, a refusal, nothing to compare with), counts as `incomplete`, never
 * as a pass. A record that cannot be the verdict it claims is refused (UsageError, naming
 * its file): one of another commit than the one judged (or, with no commit given, records of
 * several commits), and one whose rows contradict its verdict (a `pass` with a regressed row).
 * Pure.
 */
import { UsageError } from '../errors.js'
import { gateExit, verdictRank, worstVerdict, type FailOnVerdict } from './outcome.js'
import type { FoundRecord, RecordOutcome, VerdictRecord } from '../records/verdict-record.js'

export type { FoundRecord } from '../records/verdict-record.js'
import type { VerdictKind } from './types.js'

/** A record as read from disk. */
/** What the row of an expected configuration without a record says. */
export const NO_RECORD = 'no record (cancelled, crashed or runner lost)'

export interface AggregateRow {
  label: string
  /** The verdict this configuration counts as. */
  verdict: VerdictKind
  /** What its record says; null when there is no record. */
  recorded: RecordOutcome | null
  /** The record that counts (the newest for its label); null when there is none. */
  record: VerdictRecord | null
  path: string | null
  /** Whether the label was expected; an unexpected one is shown, flagged, and its verdict counts. */
  expected: boolean
  /** Why the row reads as it does: no record, re-runs, an unexpected label. */
  notes: string[]
}

export interface Aggregate {
  /** The worst verdict of all rows. */
  verdict: VerdictKind
  /** Worst first; among equals, expected labels in the expected order, then the others by label. */
  rows: AggregateRow[]
  /** `label: metric` for every regressed gated metric. */
  regressions: string[]
  expected: string[]
}

/** The verdict a record counts as: its own verdict, else `incomplete` (nothing was certified). */
export function countsAs(outcome: RecordOutcome): VerdictKind {
  switch (outcome) {
    case 'none':
    case 'error':
    case 'cancelled':
    case 'refused':
      return 'incomplete'
    default:
      return outcome
  }
}

const NO_VERDICT: Partial<Record<RecordOutcome, string>> = {
  none: 'measured, but there was no baseline to compare with',
  error: 'the run failed before a verdict',
  cancelled: 'the run was cancelled before a verdict',
  refused: 'servegate refused to run (untrusted code on a self-hosted runner)',
}

const time = (r: VerdictRecord): number => {
  const t = Date.parse(r.at)
  return Number.isFinite(t) ? t : Number.NEGATIVE_INFINITY
}

export interface AggregateOptions {
  /** The commit this aggregate is for: a record of another commit is refused; null or absent: the records must name one commit. */
  headSha?: string | null
}

/**
 * Why a record's rows contradict its verdict, or null when they agree. The gate gives `pass` or
 * `improvement` only when every gated row passed or improved, nothing regressed and no row was
 * blind (gate/compare.ts), so such a record with any other row was not written as the gate decided.
 */
export function recordContradiction(r: VerdictRecord): string | null {
  if (r.verdict !== 'pass' && r.verdict !== 'improvement') return null
  const row = r.rows.find((x) => x.status !== 'pass' && x.status !== 'improvement')
  if (row !== undefined) {
    const delta = row.delta_pct === null ? '' : ` (${row.delta_pct >= 0 ? '+' : '−'}${Math.abs(row.delta_pct).toFixed(1)} %)`
    return `its verdict is ${r.verdict} but its row "${row.label}" is ${row.status}${delta}`
  }
  if (r.regressions.length > 0) return `its verdict is ${r.verdict} but it names regressions: ${r.regressions.join(', ')}`
  if (r.blind.length > 0) return `its verdict is ${r.verdict} but it names blind rows: ${r.blind.join(', ')}`
  return null
}

/** The records that cannot be the verdicts they claim (see the file comment), one line each; empty when all can. */
export function refusedRecords(found: readonly FoundRecord[], headSha: string | null): string[] {
  const problems: string[] = []
  const short = (sha: string | null): string => (sha === null ? 'no commit' : sha.trim() === '' ? '(empty)' : `commit ${sha.slice(0, 12)}`)
  if (headSha !== null) {
    for (const f of found) {
      if (f.record.head_sha === null || !sameCommit(headSha, f.record.head_sha))
        problems.push(`${f.path} (label ${f.record.label}) names ${short(f.record.head_sha)}, not ${headSha.slice(0, 12)}: it is no verdict on this commit`)
    }
  } else {
    const commits = [...new Set(found.map((f) => f.record.head_sha?.trim().toLowerCase() ?? null))]
    if (commits.length > 1)
      problems.push(
        `the records name ${commits.length} commits (${found.map((f) => `${f.record.label}: ${short(f.record.head_sha)}`).join(', ')}): one verdict needs one commit; say which with the commit under test`,
      )
  }
  for (const f of found) {
    const why = recordContradiction(f.record)
    if (why !== null) problems.push(`${f.path} (label ${f.record.label}): ${why}, so its rows contradict it`)
  }
  return problems
}

/** One row per configuration, expected or found; see the file comment for the rules. */
export function aggregateRecords(found: readonly FoundRecord[], expected: readonly string[], opts: AggregateOptions = {}): Aggregate {
  const refused = refusedRecords(found, opts.headSha ?? null)
  if (refused.length > 0) {
    throw new UsageError(
      `refused ${refused.length === 1 ? 'a record' : `${refused.length} problems with the records`}:\n${refused.map((p) => `  ${p}`).join('\n')}`,
      'A record counts only as its job wrote it, for the commit under test: re-run the matrix on this commit (the Action passes its head commit; servegate aggregate takes --head-sha).',
    )
  }
  const byLabel = new Map<string, FoundRecord[]>()
  for (const f of found) byLabel.set(f.record.label, [...(byLabel.get(f.record.label) ?? []), f])
  const labels = [...new Set(expected)]
  const others = [...byLabel.keys()].filter((l) => !labels.includes(l)).sort()
  const rows: AggregateRow[] = []
  for (const label of [...labels, ...others]) {
    const isExpected = labels.includes(label)
    // Newest first; the stable sort keeps the read order among equal times.
    const all = [...(byLabel.get(label) ?? [])].sort((a, b) => time(b.record) - time(a.record))
    const notes: string[] = []
    if (!isExpected) notes.push('not an expected configuration (add it to expect, or remove it from the matrix); its verdict counts')
    const newest = all[0]
    if (newest === undefined) {
      rows.push({ label, verdict: 'incomplete', recorded: null, record: null, path: null, expected: true, notes: [NO_RECORD] })
      continue
    }
    if (all.length > 1) {
      notes.push(`${all.length} records for this configuration (a re-run?): the newest, written ${newest.record.at}, counts`)
    }
    const r = newest.record
    let verdict = countsAs(r.verdict)
    const why = NO_VERDICT[r.verdict]
    if (why !== undefined) notes.push(`${why}: counted as incomplete`)
    // A pass that gated nothing certified nothing.
    if ((verdict === 'pass' || verdict === 'improvement') && r.rows.length === 0) {
      notes.push('the record gated no metric: nothing was measured that could pass, counted as unmeasured')
      verdict = 'unmeasured'
    }
    rows.push({ label, verdict, recorded: r.verdict, record: r, path: newest.path, expected: isExpected, notes })
  }
  const order = (l: string): number => (labels.includes(l) ? labels.indexOf(l) : labels.length)
  rows.sort((a, b) => verdictRank(a.verdict) - verdictRank(b.verdict) || order(a.label) - order(b.label) || a.label.localeCompare(b.label))
  const regressions = rows.flatMap((row) => (row.record?.regressions ?? []).map((m) => `${row.label}: ${m}`))
  return { verdict: worstVerdict(rows.map((r) => r.verdict)), rows, regressions, expected: labels }
}

/** Two commits are the same only when their SHAs match exactly (case aside): an empty or shortened one matches nothing. */
function sameCommit(a: string, b: string): boolean {
  const x = a.trim().toLowerCase()
  return x !== '' && x === b.trim().toLowerCase()
}

/**
 * Exit code of `servegate aggregate` and whether the Action's aggregate step fails: the gate's
 * table (gateExit) for every configuration, the highest wins — so a configuration whose verdict
 * is in fail-on fails the matrix even when a worse one elsewhere is left out of fail-on.
 */
export function aggregateExit(agg: Pick<Aggregate, 'rows'>, failOn: readonly FailOnVerdict[]): 0 | 1 | 2 {
  let code: 0 | 1 | 2 = 0
  for (const row of agg.rows) {
    const c = gateExit(row.verdict, failOn)
    if (c > code) code = c
  }
  return code
}

/**
 * Parse the expected configuration labels: separated by commas, spaces or newlines (a YAML block
 * works). `where` names the flag or input. None at all is an error: without the list, a job that
 * died before writing its record would go unnoticed.
 */
export function parseExpect(text: string, where: string): string[] {
  const labels = [...new Set(text.split(/[\s,]+/).filter((w) => w !== ''))]
  if (labels.length === 0) {
    throw new UsageError(
      `${where} is empty: expected the configuration labels of the matrix, separated by commas (e.g. llama-h100,qwen-b200)`,
      'Without them, a configuration whose job was cancelled or crashed before writing its record would go unnoticed.',
    )
  }
  return labels
}
