/**
 * The methodology's table as data, built once from a result and drawn by the
 * console and markdown renderers. A cell holds a measured median or the word
 * `pending` — never an estimate (METHODOLOGY: "Deliberately empty rather than
 * filled with a plausible guess"). Pure.
 */
import { SERVER_EXITED, type AtTargetShape, type EnvRecord, type PointResult, type ResultFile, type ResultTarget, type RunResult } from '../types.js'
import { repeatsCutByInvalidRuns } from '../analysis/at-target.js'
import { spread } from '../analysis/spread.js'
import { tokenNotes } from '../analysis/validity.js'
import { gpuCount, interactivity, perGpu } from '../analysis/per-gpu.js'
import { figuresView } from '../analysis/unchecked.js'
import { clientHeadroom, headroomLine } from '../analysis/headroom.js'
import { fmtInt, fmtMs, fmtPct, fmtRate, plainValidity, summarize, withSpread } from './format.js'
import { buildServerSideRows } from './server-side.js'
import { buildSpreadRows } from './spread-rows.js'
import { targetInteractivityText, targetText } from './target-text.js'
import { warmupRampLine } from './warmup-line.js'
import { arrivalsLine, goodputLine, OPEN_LOOP_COLUMNS, rateCell, rateSentence } from './open-loop-lines.js'

/**
 * The table's columns. The last two are the field's frontier figures: output tok/s divided over the
 * GPUs serving the model (`n/a` when the count is unknown — never a guessed 1), and interactivity at
 * p95 TPOT (1000 / p95 TPOT ms: the decode speed of the slowest 5 % of users, InferenceX's p95_intvty).
 */
export const COLUMNS = [
  'Concurrency',
  'TTFT p50 / p99',
  'ITL p50 / p99',
  'Output tok/s',
  'Tok/s/user',
  'Output tok/s per GPU',
  'Tok/s/user at p95 TPOT',
] as const

export interface ReportRow {
  /** The cells, in COLUMNS order. */
  cells: [string, string, string, string, string, string, string]
}

export interface ShapeReport {
  title: string
  inputLen: number
  outputLen: number
  rows: ReportRow[]
  /** Footnotes referenced as [n] in the concurrency cell. */
  notes: string[]
  /** The throughput-at-target sentence. */
  atTarget: string
  /** Warmup discarded and ramp share of the shape's runs (./warmup-line.ts); null before any run. */
  warmup: string | null
  /** The server's own figures, cells in SERVER_COLUMNS order (./server-side.ts); null when no run has any. */
  serverSide: string[][] | null
  /** Median, min, max and CV of each table figure, cells in SPREAD_COLUMNS order (./spread-rows.ts). */
  spread: string[][]
  /** Column headers of `rows` when they differ from COLUMNS (open loop: rows are request rates). */
  columns?: readonly string[]
  /** Lines after the throughput at target: open-loop arrivals and, with --goodput, goodput (./open-loop-lines.ts). */
  extra?: string[]
}

export interface ReportModel {
  sweep: string | null
  /** `p95 TPOT ≤ 50 ms ⇔ ≥ 20 tok/s/user` (a TPOT target stated in interactivity terms too). */
  target: string
  /** GPUs serving the model (env.gpu.count), null when unknown: per-GPU cells are then n/a. */
  gpus: number | null
  /** Says the figures were measured by another tool and imported; null for a servegate measurement. */
  source: string | null
  env: EnvRecord
  shapes: ShapeReport[]
  /** Says the sweep was stopped early and which run was dropped; null for a sweep not stopped. */
  interrupted: string | null
  /** The load client's headroom at the heaviest point (analysis/headroom.ts), as a sentence. */
  headroom: string
}

/** `Imported from vllm bench serve (a.json, b.json) …`, or null for a servegate measurement. */
function sourceLine(result: ResultFile): string | null {
  const shard = result.shard
  if (shard !== undefined)
    return `Shard ${shard.index} of ${shard.count} of a sharded sweep (from ${shard.start_at}, ${shard.slot_s} s a run): every figure is this shard's share of each point's load, not the point's; merge the ${shard.count} shards (servegate merge) for the sweep's figures.`
  const merged = result.shards
  if (merged !== undefined)
    return `Merged from ${merged.count} shards on ${new Set(merged.shards.map((x) => x.boot_id ?? x.host)).size} load host(s) (from ${merged.start_at}, ${merged.slot_s} s a run): every run is the union of its shards' requests; how they lined up is in each run's shards.alignment.`
  const s = result.source
  if (s === undefined) return null
  return `Imported from ${s.tool} (${s.files.join(', ')}) on ${s.imported_at}: not measured by servegate. The checks its files could not support were not made, so every figure is unverified (checks_not_run).`
}

/** Builds the table model of every shape: planned rows from result.config, measured ones from result.points. */
export function buildReportModel(result: ResultFile): ReportModel {
  const cfg = result.config ?? {}
  const planned = plannedGrid(cfg, result.points)
  const gpus = gpuCount(result.env)
  // Imported runs no check faulted count with their figures (marked by sourceLine), like valid ones.
  const measured = figuresView(result.points)
  const shapes = planned.shapes.map(([inputLen, outputLen]): ShapeReport => {
    const points = measured.filter((p) => p.input_len === inputLen && p.output_len === outputLen)
    const extra = [goodputLine(points), arrivalsLine(points)].filter((l): l is string => l !== null)
    if (cfg.load === 'open' || points.some((p) => p.request_rate !== undefined)) {
      return { ...openLoopShape(result, inputLen, outputLen, points, planned.repeats, gpus), extra }
    }
    const concurrencies = [...new Set([...planned.concurrency, ...points.map((p) => p.concurrency)])].sort((a, b) => a - b)
    const notes: string[] = []
    const rows = concurrencies.map((c) => buildRow(c, points.find((p) => p.concurrency === c) ?? null, planned.repeats, notes, gpus))
    const at = result.at_target.find((a) => a.input_len === inputLen && a.output_len === outputLen) ?? null
    // The figure comes from valid runs only; say when an invalid run at or below the crossing widened its bracket.
    const widened = [...repeatsCutByInvalidRuns(points, inputLen, outputLen, result.target)].sort((a, b) => a - b)
    const repeatsWithRuns = new Set(points.flatMap((p) => p.runs.map((r) => r.repeat)))
    const noValidRun = [...repeatsWithRuns].filter((r) => !(at?.runs ?? []).some((x) => x.repeat === r))
    return {
      title: `${fmtInt(inputLen)} in / ${fmtInt(outputLen)} out`,
      inputLen,
      outputLen,
      rows,
      notes,
      atTarget:
        atTargetSentence(result.target, at, concurrencies, {
          // Pending while any planned run is missing: a repeat cut short at a lower concurrency
          // would otherwise enter the median as a smaller lower bound, unannounced.
          pending: concurrencies.some((c) => (points.find((p) => p.concurrency === c)?.runs.length ?? 0) < (planned.repeats ?? 1)),
          invalidOnly: noValidRun.length > 0 && (at?.runs.length ?? 0) === 0,
          gpus,
        }) + invalidCurveNote(widened, noValidRun, at !== null && at.runs.length > 0),
      warmup: warmupRampLine(
        points.flatMap((p) => p.runs),
        cfg.warmup,
      ),
      serverSide: buildServerSideRows(concurrencies, points),
      spread: buildSpreadRows(concurrencies, points),
      ...(extra.length > 0 ? { extra } : {}),
    }
  })
  return {
    sweep: typeof cfg.sweep === 'string' ? cfg.sweep : null,
    target: targetInteractivityText(result.target),
    gpus,
    source: sourceLine(result),
    env: result.env,
    shapes,
    interrupted: interruptedLine(result),
    // A result written before the headroom was recorded gets it from its runs, as the sweep would have.
    headroom: headroomLine(result.client_headroom !== undefined ? result.client_headroom : clientHeadroom(result.points)),
  }
}

/** `Interrupted (SIGTERM): 1 of 2 runs finished; the run in progress (16 in / 250 out, C=256, repeat 1) was dropped…` */
function interruptedLine(result: ResultFile): string | null {
  const i = result.interrupted
  if (i === undefined) return null
  const cut =
    i.cut_run === null
      ? ''
      : `; the run in progress (${fmtInt(i.cut_run.input_len)} in / ${fmtInt(i.cut_run.output_len)} out, C=${i.cut_run.concurrency}, repeat ${i.cut_run.repeat}) was dropped`
  const srv = i.server
  const why =
    i.reason === SERVER_EXITED && srv !== undefined
      ? `the server ${srv.signal !== null ? `was killed by ${srv.signal}` : `exited with status ${srv.exit_code ?? 'unknown'}`}`
      : i.reason
  return `Interrupted (${why}, ${i.at}): ${i.finished_runs} of ${i.planned_runs} runs finished${cut}. \`servegate run --resume\` with the same settings continues it.`
}

function plannedGrid(cfg: Record<string, unknown>, points: PointResult[]): { shapes: [number, number][]; concurrency: number[]; repeats: number | null } {
  const shapes: [number, number][] = []
  const add = (i: number, o: number): void => {
    if (!shapes.some(([a, b]) => a === i && b === o)) shapes.push([i, o])
  }
  if (Array.isArray(cfg.shapes)) {
    for (const s of cfg.shapes as unknown[]) {
      const r = s as { input_len?: unknown; output_len?: unknown } | null
      if (typeof r?.input_len === 'number' && typeof r.output_len === 'number') add(r.input_len, r.output_len)
    }
  }
  for (const p of points) add(p.input_len, p.output_len)
  const concurrency = Array.isArray(cfg.concurrency) ? (cfg.concurrency as unknown[]).filter((c): c is number => typeof c === 'number') : []
  const repeats = typeof cfg.repeats === 'number' ? cfg.repeats : null
  return { shapes, concurrency, repeats }
}

/**
 * An open-loop shape: one row per request rate (the rate curve), the throughput at target
 * over rates. The server-side and spread tables are drawn per concurrency and are left out here.
 */
function openLoopShape(
  result: ResultFile,
  inputLen: number,
  outputLen: number,
  points: PointResult[],
  plannedRepeats: number | null,
  gpus: number | null,
): ShapeReport {
  const cfgRates = Array.isArray(result.config.request_rates) ? (result.config.request_rates as unknown[]) : []
  const xOf = (r: unknown): number | null => (r === 'inf' ? Infinity : typeof r === 'number' ? r : null)
  const rates = [...new Set([...cfgRates.map(xOf), ...points.map((p) => xOf(p.request_rate))].filter((x): x is number => x !== null))].sort((a, b) => a - b)
  const notes: string[] = []
  const label = (x: number): string => rateCell(x === Infinity ? 'inf' : x)
  const find = (x: number): PointResult | null => points.find((p) => xOf(p.request_rate) === x) ?? null
  const rows = rates.map((x) => buildRow(0, find(x), plannedRepeats, notes, gpus, { cell: label(x), note: `rate ${label(x)}` }))
  const at = result.at_target.find((a) => a.input_len === inputLen && a.output_len === outputLen) ?? null
  const pending = rates.some((x) => (find(x)?.runs.length ?? 0) < (plannedRepeats ?? 1))
  return {
    title: `${fmtInt(inputLen)} in / ${fmtInt(outputLen)} out`,
    inputLen,
    outputLen,
    rows,
    notes,
    atTarget: rateSentence(result.target, at, rates, pending, atTargetSentence),
    warmup: null,
    serverSide: null,
    spread: [],
    columns: OPEN_LOOP_COLUMNS,
  }
}

function buildRow(
  concurrency: number,
  point: PointResult | null,
  plannedRepeats: number | null,
  notes: string[],
  gpus: number | null,
  names?: { cell: string; note: string },
): ReportRow {
  const cellName = names?.cell ?? String(concurrency)
  const noteName = names?.note ?? `C=${concurrency}`
  const runs = point?.runs ?? []
  if (runs.length === 0) return { cells: [cellName, 'pending', 'pending', 'pending', 'pending', 'pending', 'pending'] }
  const valid = runs.filter((r) => r.validity.valid)
  const rowNotes: string[] = []
  for (const r of runs) if (!r.validity.valid) rowNotes.push(invalidNote(noteName, r))
  // Observations that are not faults (multi-token chunks, no usage from the server) are shown, never hidden.
  for (const r of runs) {
    const t = tokenNotes(r)
    if (t.length > 0) rowNotes.push(`${noteName}, repeat ${r.repeat}: ${t.join(' ')}`)
  }
  if (plannedRepeats !== null && runs.length < plannedRepeats) {
    rowNotes.push(`${noteName}: ${runs.length} of ${plannedRepeats} repeats measured so far.`)
  }
  const refs = rowNotes.map((n) => {
    notes.push(n)
    return `[${notes.length}]`
  })
  const label = refs.length > 0 ? `${cellName} ${refs.join('')}` : cellName
  if (valid.length === 0) return { cells: [label, 'invalid', 'invalid', 'invalid', 'invalid', 'invalid', 'invalid'] }
  const pair = (a: (r: RunResult) => number | null, b: (r: RunResult) => number | null): string =>
    `${withSpread(valid.map(a), fmtMs)} / ${withSpread(valid.map(b), fmtMs)}`
  return {
    cells: [
      label,
      pair(
        (r) => r.ttft_ms.p50,
        (r) => r.ttft_ms.p99,
      ),
      pair(
        (r) => r.itl_ms.p50,
        (r) => r.itl_ms.p99,
      ),
      withSpread(
        valid.map((r) => r.output_throughput),
        fmtRate,
      ),
      withSpread(
        valid.map((r) => r.tok_s_per_user),
        fmtRate,
      ),
      gpus === null
        ? 'n/a (GPUs unknown)'
        : withSpread(
            valid.map((r) => perGpu(r.output_throughput, gpus)),
            fmtRate,
          ),
      withSpread(
        valid.map((r) => interactivity(r.tpot_ms.p95)),
        fmtRate,
      ),
    ],
  }
}

function invalidNote(where: string, run: RunResult): string {
  const issues = run.validity.issues.map((i) => {
    const detail = i.detail.trim().replace(/\.$/, '')
    return detail ? `${plainValidity(i.code)} — ${detail}` : plainValidity(i.code)
  })
  return `${where}, repeat ${run.repeat} is invalid and left out of the medians: ${issues.length > 0 ? issues.join('; ') : 'no reason recorded'}.`
}

const BOUND_WORDS = {
  interpolated: 'interpolated between the last passing and first failing concurrency',
  exact: 'measured exactly at a swept concurrency',
  lower_bound: 'lower bound: target held at every concurrency',
  unreachable: 'unreachable',
} as const

/** What invalid runs did to the throughput-at-target figure, or '' when nothing. */
function invalidCurveNote(widened: number[], noValidRun: number[], hasFigure: boolean): string {
  if (!hasFigure) return ''
  const parts: string[] = []
  const list = (rs: number[]): string => `repeat${rs.length > 1 ? 's' : ''} ${rs.join(', ')}`
  if (noValidRun.length > 0) parts.push(`${list(noValidRun)} left out: no valid run`)
  const shown = widened.filter((r) => !noValidRun.includes(r))
  if (shown.length > 0) parts.push(`${list(shown)} drawn through valid runs only, an invalid run being at or below the crossing`)
  return parts.length > 0 ? ` (${parts.join('; ')})` : ''
}

/** The throughput-at-target sentence for one shape: median and range across repeats, implied concurrency, bound. */
export function atTargetSentence(
  target: ResultTarget,
  at: AtTargetShape | null,
  concurrencies: number[],
  opts: { pending?: boolean; invalidOnly?: boolean; gpus?: number | null } = {},
): string {
  const head = `Throughput at ${targetText(target)}:`
  const soFar = opts.pending ? ' (so far: some planned runs are still pending)' : ''
  if (opts.invalidOnly) return `${head} invalid: no repeat has a valid run (see the notes)${soFar}`
  if (at === null || at.runs.length === 0) return `${head} pending`
  const lowest = concurrencies[0]
  const reached = at.runs.filter((r) => r.bound !== 'unreachable' && r.throughput !== null)
  const unreachable = at.runs.length - reached.length
  if (reached.length === 0) {
    return `${head} unreachable: even C=${lowest ?? '?'} misses the target${at.runs.length > 1 ? ` (all ${at.runs.length} repeats)` : ''}`
  }
  // spread(), not summarize(): the sentence also gives the CV across repeats.
  const tput = spread(reached.flatMap((r) => (r.throughput !== null && Number.isFinite(r.throughput) ? [r.throughput] : [])))!
  const conc = summarize(reached.map((r) => r.concurrency))
  const bounds = [...new Set(reached.map((r) => r.bound))]
  const allLower = bounds.length === 1 && bounds[0] === 'lower_bound'
  let text = `${head} ${allLower ? '≥ ' : ''}${fmtRate(tput.median)} tok/s`
  const gpus = opts.gpus ?? null
  if (gpus !== null) text += ` (${allLower ? '≥ ' : ''}${fmtRate(tput.median / gpus)} tok/s per GPU over ${gpus} GPU${gpus === 1 ? '' : 's'})`
  if (tput.n > 1) text += ` (median of ${tput.n} repeats, range ${fmtRate(tput.min)}–${fmtRate(tput.max)}, CV ${fmtPct(tput.cv)})`
  if (conc !== null) text += ` at C ≈ ${Number.isInteger(conc.median) ? conc.median : conc.median.toFixed(1)}`
  if (bounds.length === 1) text += ` — ${BOUND_WORDS[bounds[0]!]}`
  else {
    const counts = bounds.map((b) => `${reached.filter((r) => r.bound === b).length} ${b.replace('_', ' ')}`)
    text += ` — bounds differ across repeats: ${counts.join(', ')}`
  }
  if (allLower && concurrencies.length > 0) {
    const highest = concurrencies[concurrencies.length - 1]!
    // A lower bound also arises when the first failing point has no figure to interpolate with.
    text += reached.every((r) => r.concurrency === highest) ? ` (up to C=${highest})` : ', as far as measured figures reach'
  }
  if (unreachable > 0) text += `; ${unreachable} repeat${unreachable > 1 ? 's' : ''} missed the target even at C=${lowest ?? '?'}`
  return text + soFar
}

/** One line naming engine, model and GPU ('unknown' where the environment did not say). */
export function environmentLine(env: EnvRecord): string {
  const engine = env.engine.name === 'unknown' && env.engine.version === 'unknown' ? 'unknown' : `${env.engine.name} ${env.engine.version}`
  const revision = env.model.revision !== 'unknown' ? ` (revision ${env.model.revision})` : ''
  const counts = new Map<string, number>()
  for (const n of env.gpu.names) counts.set(n, (counts.get(n) ?? 0) + 1)
  // A declared count (--gpus) on a server nvidia-smi cannot see has no names.
  const gpus =
    counts.size === 0
      ? typeof env.gpu.count === 'number'
        ? `${env.gpu.count}× (model unknown)`
        : 'unknown'
      : [...counts].map(([n, k]) => `${k}× ${n}`).join(', ')
  const driver = env.gpu.driver_version !== 'unknown' ? ` (driver ${env.gpu.driver_version}, CUDA ${env.gpu.cuda_version})` : ''
  return `Engine: ${engine} · Model: ${env.model.id}${revision} · GPU: ${gpus}${driver}`
}

/** The clock and aggregation statement every table carries. */
export const CLOCK_LINE =
  'Latencies in ms, client-side clock (monotonic, at the load generator; TTFT = request sent → first content token). ' +
  'Each cell: median across repeats (±half the min–max range); invalid runs are left out and noted.'

/** What the per-GPU and interactivity columns mean, and over how many GPUs. */
export function perGpuLine(gpus: number | null): string {
  const over = gpus === null ? 'GPUs unknown, so no per-GPU figure (give --gpus N or server.gpus)' : `over ${gpus} GPU${gpus === 1 ? '' : 's'}`
  return `Per GPU: output tok/s ÷ GPUs serving the model (${over}). Tok/s/user at p95 TPOT: 1000 / p95 TPOT, the decode speed the slowest 5 % of requests saw.`
}
