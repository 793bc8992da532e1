/**
 * The stored baseline's sequential rows (pure): the candidate's engine starts
 * against the baseline's centre. Each start is one increment of the row's
 * sequential test (./sequential.ts): the median of that start's valid runs
 * (log) minus the centre (the median of the newest refreshes' medians),
 * oriented so positive is worse, with variance σ²_day + V(n)·σ²_w; the
 * centre's own error is shared by every increment (./seq-noise.ts). The PR's
 * first sweep is its first start; every later start (a fresh start of the
 * candidate's engine, one run per point) adds an increment, so nothing
 * measured is measured twice for nothing.
 */
import type { ResultFile } from '../types.js'
import { compareToBaseline } from './compare.js'
import { refreshesOnHost, spreadOnHost } from './host-history.js'
import { rowNoise } from './seq-noise.js'
import { decideAtZeros, decideSequentialRow } from './seq-row.js'
import type { Baseline, GateOptions, Verdict } from './types.js'
import { median } from '../util/median.js'

/**
 * The verdict of the candidate's starts against the stored baseline. `startOf(repeat)` names the
 * engine start that measured each repeat (the first sweep's repeats share start 0).
 */
export function compareStarts(baseline: Baseline, candidate: ResultFile, options: Partial<GateOptions>, startOf: (repeat: number) => number): Verdict {
  const onHost = refreshesOnHost(baseline.refreshes, candidate.env, baseline.name).refreshes
  const spread = spreadOnHost(baseline, candidate.env)
  const logs = (from: readonly Baseline['refreshes'][number][], key: string): number[][] =>
    from.map((r) => (r.runs[key] ?? []).filter((x) => x > 0).map((x) => Math.log(x))).filter((xs) => xs.length > 0)
  const window = (key: string): number[][] => logs(onHost, key)
  return compareToBaseline(
    baseline,
    candidate,
    options,
    (key, runs, info, opts) => {
      const history = window(key)
      const used = history.slice(-Math.max(1, opts.centerWindow))
      const values = runs.map((r) => r.value as number)
      const centre = used.length > 0 ? median(used.map((r) => median(r))) : null
      if (centre !== null) {
        const zeros = decideAtZeros(
          values.map((v) => [Math.exp(centre), v] as const),
          info.higherIsBetter,
          history.length,
        )
        if (zeros !== null) return zeros
      }
      const byStart = new Map<number, number[]>()
      for (const r of [...runs].sort((x, y) => x.repeat - y.repeat)) {
        const k = startOf(r.repeat)
        byStart.set(k, [...(byStart.get(k) ?? []), Math.log(r.value as number)])
      }
      const sign = info.higherIsBetter ? -1 : 1
      const increments = centre === null ? [] : [...byStart.values()].map((xs) => ({ x: sign * (median(xs) - centre), runs: xs.length }))
      const d = decideSequentialRow(
        {
          increments,
          // σ from every start of the base engine on this host (noise history and refreshes); the centre's
          // own variance from the refreshes that form it.
          noise: rowNoise(logs(spread, key), { kind: 'baseline' }, opts, history.slice(-Math.max(1, opts.centerWindow)).length),
          design: info.design,
          tolerance: info.tolerance,
          baseline: centre === null ? null : Math.exp(centre),
          candidate: values.length > 0 ? median(values) : null,
          unit: 'start',
        },
        opts,
      )
      // The baseline's side of "measured": its refreshes' valid runs in the centre window, held to the
      // runs those refreshes planned (the valid ones and those the host spoiled), not to the
      // candidate's plan: more starts of the candidate never make the stored baseline short of runs,
      // and a refresh the host spoiled still counts its spoiled runs against it.
      const nBaseline = used.reduce((a, r) => a + r.length, 0)
      const scope = key.slice(key.indexOf('@') + 1)
      const planned = onHost
        .slice(-Math.max(1, opts.centerWindow))
        .reduce((a, r) => a + (r.runs[key]?.length ?? 0) + r.invalid.filter((i) => i.scope === scope).length, 0)
      return { ...d, nBaseline, baselinePlanned: Math.max(1, planned), nCandidate: values.length }
    },
    true,
  )
}
