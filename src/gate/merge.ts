/** Confirmation: fold extra repeats of the gated sweep into the first result so the gate decides over all runs. */
import type { ResultFile } from '../types.js'
import { fingerprintOf } from './fingerprint.js'

/**
 * `first` with the runs of `extra` appended per point and per shape. Repeat numbers of
 * `extra` are shifted past those of `first` so a throughput-at-target run still pairs
 * with the point runs of its own repeat.
 */
export function mergeResults(first: ResultFile, extra: ResultFile): ResultFile {
  const maxRepeat = Math.max(-1, ...first.points.flatMap((p) => p.runs.map((r) => r.repeat)), ...first.at_target.flatMap((s) => s.runs.map((r) => r.repeat)))
  const minExtra = Math.min(
    Infinity,
    ...extra.points.flatMap((p) => p.runs.map((r) => r.repeat)),
    ...extra.at_target.flatMap((s) => s.runs.map((r) => r.repeat)),
  )
  const shift = Number.isFinite(minExtra) && minExtra <= maxRepeat ? maxRepeat + 1 - minExtra : 0
  const points = first.points.map((p) => ({ ...p, runs: [...p.runs] }))
  for (const p of extra.points) {
    const runs = p.runs.map((r) => ({ ...r, repeat: r.repeat + shift }))
    const same = points.find((q) => q.input_len === p.input_len && q.output_len === p.output_len && q.concurrency === p.concurrency)
    if (same) same.runs.push(...runs)
    else points.push({ ...p, runs })
  }
  const atTarget = first.at_target.map((s) => ({ ...s, runs: [...s.runs] }))
  for (const s of extra.at_target) {
    const runs = s.runs.map((r) => ({ ...r, repeat: r.repeat + shift }))
    const same = atTarget.find((q) => q.input_len === s.input_len && q.output_len === s.output_len)
    if (same) same.runs.push(...runs)
    else atTarget.push({ ...s, runs })
  }
  // The merged result plans every repeat both runs planned: completeness is judged against all of
  // them, so invalid extra repeats are counted, never hidden behind the first plan's count.
  const planned = (r: ResultFile): number | null => (typeof r.config.repeats === 'number' ? r.config.repeats : null)
  const repeats = planned(first) !== null && planned(extra) !== null ? planned(first)! + planned(extra)! : first.config.repeats
  const merged: ResultFile = {
    ...first,
    config: { ...first.config, repeats },
    env: { ...first.env, finished_at: extra.env.finished_at },
    points,
    at_target: atTarget,
  }
  // Tokens per chunk now counts the extra runs too.
  if (first.fingerprint !== undefined) merged.fingerprint = fingerprintOf(merged)
  return merged
}
