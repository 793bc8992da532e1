/**
 * How `servegate ab` holds the host (pure): the slot order, the mode (each side
 * started for its own slots, or both resident on GPUs of their own), the
 * engine starts with their readiness, and the job's GPU-minutes.
 */
export type Side = 'A' | 'B'

/** The first look needs a round of each order (A B, B A), so a drift over the job cancels in it. */
export const MIN_AB_ROUNDS = 2

/** Why a rounds value is refused, in one line; null when it is allowed. */
export function roundsProblem(rounds: number): string | null {
  if (Number.isInteger(rounds) && rounds >= MIN_AB_ROUNDS) return null
  return `expected a whole number of at least ${MIN_AB_ROUNDS} rounds (the first look needs a round of each order, A B and B A)`
}

/** Slot order of R counterbalanced rounds: A B, B A, A B, … */
export function slotOrder(rounds: number): Side[] {
  const order: Side[] = []
  for (let r = 0; r < rounds; r++) order.push(...(r % 2 === 0 ? (['A', 'B'] as const) : (['B', 'A'] as const)))
  return order
}

/** The slot (1-based) that measured a side's repeat `repeat` (1-based): slot r of a side is its repeat r. */
export function slotOf(side: Side, repeat: number): number {
  const round = repeat - 1
  const first: Side = round % 2 === 0 ? 'A' : 'B'
  return 2 * round + (side === first ? 1 : 2)
}

/**
 * The engine starts a job makes: an exclusive job starts a side afresh for every slot (the start
 * offset is where a host's drift lives, so each round is an independent draw of it: gate/seq-noise.ts),
 * a resident job once per side for all its slots. Each start with its slots (1-based).
 */
export function plannedStarts(order: readonly Side[], mode: 'exclusive' | 'resident'): Array<{ side: Side; slots: number[] }> {
  const out: Array<{ side: Side; slots: number[] }> = []
  if (mode === 'resident') {
    for (const side of ['A', 'B'] as const) out.push({ side, slots: order.flatMap((s, i) => (s === side ? [i + 1] : [])) })
    return out
  }
  for (const [i, side] of order.entries()) out.push({ side, slots: [i + 1] })
  return out
}

/**
 * A side's GPU list as given ("0,1", "GPU-5d2…"): the indices or UUIDs CUDA_VISIBLE_DEVICES takes.
 * Throws a one-line message naming `what` for an empty list, a bad entry or a repeat.
 */
export function parseGpuList(value: string, what: string): string[] {
  const list = value.split(',').map((g) => g.trim())
  const bad = list.find((g) => !/^(\d+|(GPU|MIG)-[A-Za-z0-9/-]+)$/.test(g))
  if (list.length === 0 || bad !== undefined) throw new Error(`${what} "${value}": expected GPU indices or UUIDs separated by commas, e.g. 0,1`)
  if (new Set(list).size !== list.length) throw new Error(`${what} "${value}": a GPU is named twice`)
  return list
}

/** Names of the settings in messages: the CLI's flags, or the Action's inputs. */
export interface AbSettingNames {
  resident: string
  aGpus: string
  bGpus: string
  maxRounds: string
}

export const CLI_NAMES: AbSettingNames = { resident: '--resident', aGpus: '--a-gpus', bGpus: '--b-gpus', maxRounds: '--max-rounds' }

/**
 * Why resident engines are refused here, in one line; null when they may stay up together.
 * A host with GPUs (`hostGpus` from nvidia-smi) needs both sides' GPU lists, disjoint; a host
 * without nvidia-smi has no GPU to share.
 */
export function residentProblem(
  hostGpus: number | 'unknown',
  gpus: Partial<Record<Side, readonly string[]>>,
  names: AbSettingNames = CLI_NAMES,
): string | null {
  if (hostGpus === 'unknown' || hostGpus === 0) return null
  const drop = `or drop ${names.resident} so that each side is started only for its own slots`
  const a = gpus.A
  const b = gpus.B
  if (a === undefined || b === undefined) {
    return `servegate ab: ${names.resident}: A and B would share this host's ${hostGpus === 1 ? 'GPU' : `${hostGpus} GPUs`}: give each side GPUs of its own with ${names.aGpus} and ${names.bGpus} (disjoint, e.g. 0 and 1), ${drop}`
  }
  const shared = a.filter((g) => b.includes(g))
  if (shared.length > 0)
    return `servegate ab: ${names.resident}: ${names.aGpus} and ${names.bGpus} both name GPU ${shared.join(', ')}: give each side GPUs of its own, ${drop}`
  return null
}

/** One engine start: the side, the slots (1-based) it served, seconds from spawn to ready, and seconds it was up. */
export interface AbStart {
  side: Side
  slots: number[]
  ready_s: number
  wall_s: number
}

export interface AbSchedule {
  /** The slot order, e.g. ['A', 'B', 'B', 'A']. */
  order: Side[]
  mode: 'exclusive' | 'resident'
  /** Why this mode ran, e.g. "exclusive: the default; …". */
  why: string
  /** Each engine start in order (sides given by URL are not started and have none). */
  starts: AbStart[]
  /** GPUs the job held: the sides' lists when both are given, else nvidia-smi's count; 0 when none was seen. */
  gpus: number
  /** Wall minutes of the whole job, first start to last stop. */
  wall_minutes: number
  /** wall_minutes × gpus; the wall minutes when no GPU was seen. */
  gpu_minutes: number
  /**
   * Rounds measured, and the most the job could run (src/gate/ab-looks.ts): fewer than max_rounds when
   * an early look passed every gated row. Absent in older schedules (rounds = order / 2).
   */
  rounds?: number
  max_rounds?: number
}

/** GPU-minutes of a job that held `gpus` GPUs for `wallMinutes`; with no GPU seen, the wall minutes. */
export function gpuMinutes(wallMinutes: number, gpus: number): number {
  return gpus > 0 ? wallMinutes * gpus : wallMinutes
}

/** GPUs a job holds: both sides' lists (their union) when given, else the host's count, else what lists there are. */
export function gpusHeld(hostGpus: number | 'unknown', gpus: Partial<Record<Side, readonly string[]>>): number {
  const union = new Set([...(gpus.A ?? []), ...(gpus.B ?? [])])
  if (gpus.A !== undefined && gpus.B !== undefined) return union.size
  return typeof hostGpus === 'number' ? hostGpus : union.size
}

/** Why the mode ran, in one line. `commands`: the sides servegate starts (a side given by URL is always up). */
export function modeWhy(
  mode: AbSchedule['mode'],
  gpus: Partial<Record<Side, readonly string[]>>,
  commands: readonly Side[],
  names: AbSettingNames = CLI_NAMES,
): string {
  const on = (['A', 'B'] as const).filter((s) => gpus[s] !== undefined).map((s) => `${s} on GPUs ${gpus[s]!.join(',')}`)
  const byUrl = (['A', 'B'] as const).filter((s) => !commands.includes(s)).map((s) => `${s} is a server given by URL, up for the whole job`)
  const parts = [
    mode === 'resident'
      ? `resident: ${names.resident}`
      : "exclusive: the default; each side is started afresh for each of its slots and stopped before the other's",
  ]
  // Resident without GPU lists is allowed only where nvidia-smi saw no GPU.
  parts.push(...(on.length > 0 || mode === 'exclusive' ? on : ['both engines up for the whole job (no GPU seen on this host)']))
  return [parts.join(', '), ...byUrl].join('; ')
}

/** The schedule in a few lines for the text and markdown reports. */
export function scheduleLines(s: AbSchedule): string[] {
  const lines = [`Mode: ${s.why}.`, `Slots: ${s.order.map((side, i) => `${i + 1}:${side}`).join(' ')}.`]
  if (s.rounds !== undefined && s.max_rounds !== undefined && s.max_rounds > s.rounds) {
    lines.push(`Rounds: ${s.rounds} of at most ${s.max_rounds}: the look after round ${s.rounds} decided every gated row.`)
  } else if (s.rounds !== undefined) {
    lines.push(`Rounds: ${s.rounds}.`)
  }
  if (s.starts.length > 0) {
    const starts = s.starts.map(
      (st) =>
        `${st.side} for slot${st.slots.length === 1 ? '' : 's'} ${st.slots.join(',') || 'none'} (ready after ${seconds(st.ready_s)}, up ${seconds(st.wall_s)})`,
    )
    lines.push(`Engine starts (${s.starts.length}): ${starts.join('; ')}.`)
  } else {
    lines.push('Engine starts: none (both sides are servers given by URL).')
  }
  lines.push(
    s.gpus > 0
      ? `GPU-minutes: ${round1(s.gpu_minutes)} (${round1(s.wall_minutes)} wall minutes × ${s.gpus} GPU${s.gpus === 1 ? '' : 's'}).`
      : `GPU-minutes: no GPU was seen on this host; the job took ${round1(s.wall_minutes)} wall minutes.`,
  )
  return lines
}

function seconds(s: number): string {
  return s < 10 ? `${s.toFixed(1)} s` : `${Math.round(s)} s`
}

function round1(x: number): string {
  return x < 10 ? x.toFixed(2) : x.toFixed(1)
}
