/**
 * Report lines for open-loop runs and goodput: the arrivals as measured (rate,
 * mean gap, CV, lateness, slot waits), goodput per point, the rate column and
 * the throughput-at-target sentence over rates. Pure.
 */
import type { AtTargetShape, PointResult, ResultTarget, RunResult } from '../types.js'
import { finiteMedian } from '../util/median.js'
import { fmtMs, fmtPct, fmtRate } from './format.js'

/** The table's columns when its rows are request rates. */
export const OPEN_LOOP_COLUMNS = [
  'Request rate',
  'TTFT p50 / p99',
  'ITL p50 / p99',
  'Output tok/s',
  'Tok/s/user',
  'Output tok/s per GPU',
  'Tok/s/user at p95 TPOT',
] as const

/** `20/s`, or `inf` (every request at once). */
export function rateCell(rate: number | 'inf'): string {
  return rate === 'inf' ? 'inf' : `${rate}/s`
}

function pointName(p: PointResult): string {
  return p.request_rate === undefined ? `C=${p.concurrency}` : `rate ${rateCell(p.request_rate)}`
}

/** `Goodput (TTFT ≤ 2000 ms, TPOT ≤ 50 ms): rate 5/s 98.0% (4.9 req/s, 310 tok/s); …` — medians over valid runs; null without goodput. */
export function goodputLine(points: readonly PointResult[]): string | null {
  const withGoodput = points.filter((p) => p.runs.some((r) => r.goodput !== undefined))
  if (withGoodput.length === 0) return null
  const slo = withGoodput[0]!.runs.find((r) => r.goodput !== undefined)!.goodput!.slo
  const bounds = [
    slo.ttft_ms !== undefined ? `TTFT ≤ ${slo.ttft_ms} ms` : null,
    slo.tpot_ms !== undefined ? `TPOT ≤ ${slo.tpot_ms} ms` : null,
    slo.e2el_ms !== undefined ? `E2EL ≤ ${slo.e2el_ms} ms` : null,
  ].filter((b) => b !== null)
  const parts = withGoodput.map((p) => {
    const runs = p.runs.filter((r): r is RunResult & { goodput: NonNullable<RunResult['goodput']> } => r.validity.valid && r.goodput !== undefined)
    if (runs.length === 0) return `${pointName(p)} invalid`
    const share = finiteMedian(runs.map((r) => r.goodput.share))
    return `${pointName(p)} ${share === null ? '–' : fmtPct(share)} (${fmtRate(finiteMedian(runs.map((r) => r.goodput.request_throughput)) ?? 0)} req/s, ${fmtRate(finiteMedian(runs.map((r) => r.goodput.output_throughput)) ?? 0)} tok/s)`
  })
  return `Goodput, completed requests meeting ${bounds.join(' and ')} (median of valid runs): ${parts.join('; ')}`
}

/** `Arrivals as sent (median of runs): rate 20/s: 19.8/s, mean gap 50.5 ms, CV 1.01, lateness p95 0.9 ms; …`; null for closed loop. */
export function arrivalsLine(points: readonly PointResult[]): string | null {
  const open = points.filter((p) => p.runs.some((r) => r.arrivals !== undefined))
  if (open.length === 0) return null
  const parts = open.map((p) => {
    const a = p.runs.flatMap((r) => (r.arrivals ? [r.arrivals] : []))
    const rate = finiteMedian(a.map((x) => x.rate))
    const gap = finiteMedian(a.map((x) => x.mean_interarrival_ms))
    const cv = finiteMedian(a.map((x) => x.cv))
    const late = finiteMedian(a.map((x) => x.send_lateness_ms.p95))
    const queue = finiteMedian(a.map((x) => x.queue_ms.p95))
    const capped = a.some((x) => x.max_concurrency !== null)
    return `${pointName(p)}: ${rate === null ? 'all at once' : `${fmtRate(rate)}/s`}, mean gap ${gap === null ? '–' : `${fmtMs(gap)} ms`}, CV ${cv === null ? '–' : cv.toFixed(2)}, lateness p95 ${late === null ? '–' : `${fmtMs(late)} ms`}${capped ? `, slot wait p95 ${queue === null ? '–' : `${fmtMs(queue)} ms`}` : ''}`
  })
  return `Arrivals as sent (client clock, median of repeats; burstiness ${open[0]!.runs[0]?.arrivals?.burstiness ?? '?'}): ${parts.join('; ')}`
}

/**
 * The throughput-at-target sentence over request rates: the concurrency sentence
 * (passed in, so the wording stays one) drawn through the rates and reworded.
 */
export function rateSentence(
  target: ResultTarget,
  at: AtTargetShape | null,
  rates: number[],
  pending: boolean,
  sentence: (t: ResultTarget, at: AtTargetShape | null, xs: number[], o: { pending?: boolean }) => string,
): string {
  const asRates = at === null ? null : { ...at, runs: at.runs.map((r) => ({ ...r, concurrency: r.request_rate ?? null })) }
  return sentence(target, asRates, rates.filter(Number.isFinite), { pending })
    .replace(/at C ≈ ([\d.]+)/g, 'at ≈ $1 req/s')
    .replace(/C=([\d.?]+)/g, 'rate $1/s')
    .replaceAll('concurrency', 'request rate')
    .replace(/^Throughput at/, 'Throughput (over request rates) at')
}
