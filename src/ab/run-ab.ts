/**
 * `servegate ab`: the reference A and the candidate B measured in alternating
 * slots on this host in one job, then decided from paired differences
 * (./verdict.ts). Round r runs A then B when r is even and B then A when it is
 * odd (A B, B A, A B, …), so a host that drifts over the job moves both sides
 * alike on average. Each slot runs the gated sweep once (every point one
 * repeat, after its warmup) with prompts of its own; slot r of each side
 * becomes repeat r of that side's result, an ordinary result file written after
 * every slot (so `compare`, `report` and `baseline update` work on it, and an
 * interrupted job keeps what it measured).
 *
 * Servers: a side is a base URL, or a command servegate starts (src/serve).
 * By default (exclusive) a side's command is started for its slots and stopped
 * before the other side's: adjacent slots of one side (A B | B A) share one
 * start, and every slot after a start warms the engine up before measuring
 * (the sweep's per-point warmup). On a real serving host each engine takes most
 * of the GPU memory, so two resident engines are not even possible there.
 * `resident` keeps both up for the whole job, for hosts that give each side
 * GPUs of its own (`gpus`, set as CUDA_VISIBLE_DEVICES); it is refused before
 * any engine starts when nvidia-smi sees GPUs the two sides would share.
 * Each slot's sweep watches its server, whose process group tells its own GPU
 * processes from foreign ones: B dying ends the job with the verdict broken
 * (the slot is recorded as cut by the server's exit); A dying leaves nothing to
 * judge against and is an error.
 */
import { mkdirSync } from 'node:fs'
import { join } from 'node:path'
import { UsageError } from '../errors.js'
import type { ResolvedConfig } from '../config/resolve.js'
import { recordedBracket } from '../gate/bracket.js'
import type { Baseline, GateOptions, Verdict } from '../gate/types.js'
import { normalizeBaseUrl } from '../util/base-url.js'
import { describeExit, ServerExitedDuringSweep, ServerStartCancelled, ServerStartFailed, startServer, type ServerHandle } from '../serve/index.js'
import { gpuEnv } from '../config/child-env.js'
import { createExec, type ExecFn } from '../env/exec.js'
import { queryGpuInventory } from '../env/nvidia-smi.js'
import { readResultFile, writeResultFile } from '../store/result-file.js'
import { writeFileAtomic } from '../store/atomic-write.js'
import { runSweep, type SweepDeps } from '../sweep/run-sweep.js'
import { SERVER_EXITED, type ResultFile } from '../types.js'
import {
  CLI_NAMES,
  gpuMinutes,
  gpusHeld,
  modeWhy,
  residentProblem,
  roundsProblem,
  slotOrder,
  type AbSchedule,
  type AbSettingNames,
  type AbStart,
  type Side,
} from '../plan/ab-schedule.js'
import { compareAB, invalidSlotLines, type AbOutcome } from '../gate/ab-verdict.js'
import { firstRounds, lookAt, lookRounds, maxRoundsProblem } from '../gate/ab-looks.js'
import { capLine, costOf } from '../gate/cost.js'
import { mergeStart, openPoints, pointScopesOf } from '../gate/escalate.js'

export { slotOrder, type AbOutcome, type AbSchedule, type AbStart, type Side }

/**
 * B's server exited before any of its slots finished: there is no B result to judge, and
 * the candidate broke. `servegate ab` reports the verdict broken (it fails like compare).
 */
export class CandidateBrokeBeforeMeasuring extends UsageError {}

export interface AbOptions {
  /**
   * Each side's resolved config: the same sweep, target and gate settings, and the side's
   * server (`server.baseUrl`, or `serve` for a command servegate starts).
   */
  a: ResolvedConfig
  b: ResolvedConfig
  rounds: number
  /**
   * Look after `rounds`, then after every round up to this many, stopping at the first look that
   * decides every gated row (src/gate/ab-looks.ts). Default: `rounds` (one look, at the end).
   */
  maxRounds?: number
  /** The host's history of the base branch's engine (a stored baseline): the rows' design noise. Null: the priors. */
  history?: Baseline | null
  /**
   * `gate.max_gpu_minutes`: the job stops after the round that reaches it, and rows still open are
   * undecided. `spentGpuMinutes` is what the ladder spent before the A/B (its sweeps).
   */
  maxGpuMinutes?: number | null
  spentGpuMinutes?: number
  /** Engine starts and point-runs the ladder spent before the A/B (the candidate's first sweep). */
  spent?: { engineStarts: number; pointRuns: number }
  /**
   * B's first slot, measured before the job: the PR's first sweep, one start of B's engine with one
   * run per point of the whole sweep (counted in `spent`). The job keeps it as slot 2 (round 1's B)
   * instead of starting B for it; ignored where B is not started afresh for every slot.
   */
  bFirst?: ResultFile
  outDir: string
  gateOptions: Partial<GateOptions>
  /**
   * Keep both sides' engines up for the whole job (hosts that give each side GPUs of its own).
   * Default: exclusive, each side started for its own slots and stopped before the other's.
   */
  resident?: boolean
  /** Accepted for older callers: exclusive is the default, so this changes nothing. */
  exclusive?: boolean
  /** GPUs each side's command gets (CUDA_VISIBLE_DEVICES), e.g. { A: ['0'], B: ['1'] }. */
  gpus?: Partial<Record<Side, readonly string[]>>
  /** How messages name the settings (the CLI's flags by default; the Action's inputs). */
  names?: AbSettingNames
}

export interface AbDeps {
  log(line: string): void
  signal?: AbortSignal
  /** Called after each slot, e.g. for progress. */
  onSlotDone?(side: Side, round: number, slot: number, slots: number): void
  /** Passed to each slot's sweep (tests shorten the simulator's time). */
  sweepDeps?: Partial<SweepDeps>
  /** Runs nvidia-smi (the GPU inventory, the slots' GPU samplers); default: the one on PATH. */
  exec?: ExecFn
}

/** Run every slot, write both results, and decide. */
export async function runAB(opts: AbOptions, deps: AbDeps): Promise<AbOutcome> {
  const rounds = roundsProblem(opts.rounds)
  if (rounds !== null) throw new UsageError(`servegate ab: --rounds ${opts.rounds}: ${rounds}`)
  const names = opts.names ?? CLI_NAMES
  const maxRounds = opts.maxRounds ?? opts.rounds
  const maxProblem = maxRoundsProblem(opts.rounds, maxRounds)
  if (maxProblem !== null) throw new UsageError(`servegate ab: ${names.maxRounds} ${maxRounds}: ${maxProblem}`)
  const looks = new Set(lookRounds(opts.rounds, maxRounds))
  const cfgs: Record<Side, ResolvedConfig> = { A: opts.a, B: opts.b }
  const gpus = opts.gpus ?? {}
  for (const side of ['A', 'B'] as const) {
    const c = cfgs[side]
    if (c.serve == null && c.server.baseUrl === null)
      throw new UsageError(`servegate ab: side ${side}: no server: give --${side.toLowerCase()}-base-url or --${side.toLowerCase()}-serve`)
    if (gpus[side] !== undefined && c.serve == null) {
      throw new UsageError(
        `servegate ab: ${side === 'A' ? names.aGpus : names.bGpus} needs ${side}'s serve command: servegate sets CUDA_VISIBLE_DEVICES only for a command it starts`,
      )
    }
  }
  const t0 = Date.now()
  const exec = deps.exec ?? createExec()
  // Before any engine starts: two resident engines must not share a GPU (nvidia-smi's count; none on a host without it).
  const inventory = await queryGpuInventory(exec)
  const mode: AbSchedule['mode'] = opts.resident === true ? 'resident' : 'exclusive'
  if (mode === 'resident') {
    const problem = residentProblem(inventory.count, gpus, names)
    if (problem !== null) throw new UsageError(problem)
  }
  mkdirSync(opts.outDir, { recursive: true })
  const paths = { a: join(opts.outDir, 'a.json'), b: join(opts.outDir, 'b.json') }
  const commands = (['A', 'B'] as const).filter((s) => cfgs[s].serve != null)
  const order = slotOrder(maxRounds)
  const reused = mode === 'exclusive' && commands.includes('B') && opts.bFirst !== undefined ? opts.bFirst : null
  const starts: AbStart[] = []
  for (const side of commands) {
    if (cfgs[side].warmup === 0) deps.log(`servegate ab: warning: warmup is 0, so the first requests after each start of ${side} meet a cold engine`)
  }

  // The engines servegate started that are up now, with their start records.
  const running = new Map<Side, { handle: ServerHandle; start: AbStart; at: number }>()
  /** Start a side's command for slot `slot` (1-based); its failure is A's error or B's broken verdict. */
  const startSide = async (side: Side, slot: number): Promise<void> => {
    const c = cfgs[side]
    if (!c.serve) return
    const at = Date.now()
    let handle: ServerHandle
    try {
      handle = await startServer({
        command: c.serve.command,
        baseUrl: c.server.baseUrl === null ? null : normalizeBaseUrl(c.server.baseUrl).root,
        readyTimeoutMs: c.serve.readyTimeoutS * 1000,
        stopTimeoutMs: c.serve.stopTimeoutS * 1000,
        stopCommand: c.serve.stopCommand,
        logPath: join(opts.outDir, `${side.toLowerCase()}.server.log`),
        // One log per side: each later start appends to it.
        appendLog: starts.some((s) => s.side === side),
        apiKey: c.apiKey,
        secrets: c.serve.secrets,
        ...(c.serve.env !== undefined ? { passEnv: c.serve.env } : {}),
        extraEnv: gpuEnv(gpus[side]),
        isolation: c.isolation ?? 'auto',
        log: (line) => deps.log(`${side}: ${line}`),
        ...(deps.signal ? { signal: deps.signal } : {}),
      })
    } catch (err) {
      if (err instanceof ServerStartCancelled)
        throw new UsageError(`servegate ab: interrupted while ${side}'s server was starting for slot ${slot}; finished slots are in ${opts.outDir}`)
      if (!(err instanceof ServerStartFailed)) throw err
      const what = `servegate ab: ${side}'s server did not start for slot ${slot}: ${err.message}`
      if (side === 'A') throw new UsageError(what, err.hint)
      throw new BStartFailed(what, err)
    }
    const start: AbStart = { side, slots: [], ready_s: round2(handle.readyS ?? (Date.now() - at) / 1000), wall_s: 0 }
    starts.push(start)
    running.set(side, { handle, start, at })
  }
  const stopSide = async (side: Side): Promise<void> => {
    const up = running.get(side)
    if (up === undefined) return
    running.delete(side)
    await up.handle.stop()
    up.start.wall_s = round2((Date.now() - up.at) / 1000)
  }

  const acc: Partial<Record<Side, ResultFile>> = {}
  // A side servegate starts afresh for every slot gives independent rounds; one never restarted shares its start offset.
  const restarted = { A: mode === 'exclusive' && commands.includes('A'), B: mode === 'exclusive' && commands.includes('B') }
  let stopped: { rounds: number; verdict: Verdict } | null = null
  let capped = false
  const gpuSoFar = (): number => (opts.spentGpuMinutes ?? 0) + gpuMinutes((Date.now() - t0) / 60_000, gpusHeld(inventory.count, gpus))
  // The point scopes this round measures: every point until a look has decided some rows, then only open rows' points.
  let measured: Set<string> | null = null
  const keep = async (side: Side, slot: ResultFile): Promise<void> => {
    // Slot r of a side is its repeat r: once rounds measure part of the sweep, each point records the rounds it was planned for.
    const merged = mergeStart(acc[side], slot, measured)
    // The side's file plans all rounds: a job cut short reads as incomplete, never as fewer repeats.
    merged.config = { ...merged.config, repeats: maxRounds }
    if (slot.interrupted !== undefined) merged.interrupted = slot.interrupted
    acc[side] = merged
    await writeResultFile(side === 'A' ? paths.a : paths.b, merged)
  }
  /** B broke (died or did not start) before slot `slot`: its file records the cut, or there is no B to judge. */
  const bBroke = async (what: string, server: { exit_code: number | null; signal: NodeJS.Signals | null; log_tail: string[] }): Promise<void> => {
    deps.log(what.split('\n')[0]!)
    const b = acc.B
    if (b === undefined) throw new CandidateBrokeBeforeMeasuring(`${what.split('\n')[0]}, so no slot of B was measured\n${server.log_tail.join('\n')}`)
    b.interrupted = {
      at: new Date().toISOString(),
      reason: SERVER_EXITED,
      cut_run: null,
      finished_runs: b.points.reduce((n, p) => n + p.runs.length, 0),
      planned_runs: b.points.length * maxRounds,
      server,
    }
    await writeResultFile(paths.b, b)
  }
  try {
    if (mode === 'resident') for (const side of ['A', 'B'] as const) await startSide(side, order.indexOf(side) + 1)
    for (const [i, side] of order.entries()) {
      const round = Math.floor(i / 2)
      const slotNo = i + 1
      if (reused !== null && i === 1) {
        // Round 1's B slot is the PR's first sweep: B's engine is not started for it again.
        await stopSide('A')
        deps.log(`servegate ab: slot 2 of ${order.length} — B (round 1): the PR's first sweep, measured on an engine start of its own before the job`)
        await keep('B', reused)
        deps.onSlotDone?.('B', round, i, order.length)
        continue
      }
      // Exclusive: the other side leaves the GPU before this one starts, and every slot is a start of its own.
      if (mode === 'exclusive') {
        for (const s of ['A', 'B'] as const) await stopSide(s)
        await startSide(side, slotNo)
      }
      const up = running.get(side)
      up?.start.slots.push(slotNo)
      const kept = up?.handle
      const out = join(opts.outDir, `slot-${String(slotNo).padStart(2, '0')}-${side.toLowerCase()}.json`)
      deps.log(`servegate ab: slot ${slotNo} of ${order.length} — ${side} (round ${round + 1})`)
      const cfg: ResolvedConfig = {
        ...cfgs[side],
        repeats: 1,
        resume: false,
        // Every slot draws prompts of its own: a server's prefix cache never serves a later slot.
        seedPinned: false,
        out,
      }
      /** A kept server that exited between slots (or as this slot started): the side is dead. */
      const diedBefore = async (): Promise<boolean> => {
        if (kept === undefined) return false
        if (kept.exit() === null) await Promise.race([kept.exited, new Promise((r) => setTimeout(r, 1000))])
        return kept.exit() !== null
      }
      const deadSide = async (): Promise<void> => {
        const exit = kept!.exit()!
        await kept!.settleLog(1000)
        const what = `${side}'s server ${describeExit(exit)} before slot ${slotNo}`
        // The reference dying leaves nothing to judge against; the candidate dying is its verdict: broken.
        if (side === 'A')
          throw new UsageError(`servegate ab: A (the reference) failed: ${what}\n${kept!.tail().join('\n')}`, `The whole server log is in ${kept!.logPath}.`)
        await bBroke(what, { exit_code: exit.code, signal: exit.signal, log_tail: kept!.tail() })
      }
      if (kept !== undefined && kept.exit() !== null) {
        await deadSide()
        break
      }
      try {
        const sweepDeps = {
          ...deps.sweepDeps,
          log: deps.log,
          ...(deps.exec ? { exec: deps.exec } : {}),
          ...(deps.signal ? { signal: deps.signal } : {}),
          ...(kept ? { server: kept } : {}),
        }
        const { result } = await runSweep(cfg, { ...sweepDeps, onlyPoints: measured })
        await keep(side, result)
        for (const line of invalidSlotLines(side, slotNo, result)) deps.log(`servegate ab: ${line}`)
      } catch (err) {
        if (!(err instanceof ServerExitedDuringSweep)) {
          // A server that dies as the slot starts fails its probe before the sweep watches it.
          if (!(await diedBefore())) throw err
          await deadSide()
          break
        }
        if (side === 'A') throw new UsageError(`servegate ab: A (the reference) failed in slot ${slotNo}: ${err.message}`, err.hint)
        deps.log(`servegate ab: B's server exited during slot ${slotNo}: ${err.message.split('\n')[0]}`)
        await keep(side, await readResultFile(out))
        break
      }
      deps.onSlotDone?.(side, round, i, order.length)
      // After each round's second slot: a look, which ends the job once every gated row is decided.
      if (i % 2 === 1 && looks.has(round + 1) && acc.A !== undefined && acc.B !== undefined) {
        const cap = opts.maxGpuMinutes ?? null
        capped = cap !== null && gpuSoFar() >= cap && round + 1 < maxRounds
        const look = lookAt(acc.A, acc.B, round + 1, capped ? round + 1 : maxRounds, opts.gateOptions, restarted, opts.history ?? null)
        if (look.done) {
          stopped = { rounds: round + 1, verdict: look.verdict }
          const open = look.verdict.rows.filter((r) => r.gated && r.status === 'undecided').length
          deps.log(
            capped && open > 0
              ? `servegate ab: ${capLine(cap!, gpuSoFar())}; the job stops after round ${round + 1}`
              : `servegate ab: the look after round ${round + 1} decided every gated row it can; the job stops (at most ${maxRounds} rounds)`,
          )
          break
        }
        // Rows, not sweeps: the next round measures only the points of rows still open.
        measured = openPoints(look.verdict, acc.A)
        const all = acc.A.points.length
        const points = pointScopesOf(measured)
        deps.log(
          `servegate ab: the look after round ${round + 1} left gated rows open; one more round, measuring ${points.length === all ? 'every point' : `${points.length} of ${all} points (${points.join(', ')})`}`,
        )
      }
    }
  } catch (err) {
    if (!(err instanceof BStartFailed)) throw err
    await bBroke(err.message, { exit_code: null, signal: null, log_tail: [...err.cause.logTail] })
  } finally {
    for (const side of [...running.keys()]) await stopSide(side)
  }
  if (acc.A === undefined || acc.B === undefined) throw new UsageError('servegate ab: a side has no finished slot, so there is nothing to compare')
  const wallMinutes = (Date.now() - t0) / 60_000
  const held = gpusHeld(inventory.count, gpus)
  if (stopped !== null) {
    // A job an early look ended planned only the rounds it ran: its files are complete as written.
    for (const side of ['A', 'B'] as const) {
      acc[side] = firstRounds(acc[side]!, stopped.rounds)
      await writeResultFile(side === 'A' ? paths.a : paths.b, acc[side]!)
    }
  }
  const ran = stopped?.rounds ?? maxRounds
  const schedule: AbSchedule = {
    order: order.slice(0, 2 * ran),
    mode,
    why: modeWhy(mode, gpus, commands, names),
    starts,
    gpus: held,
    wall_minutes: round2(wallMinutes),
    gpu_minutes: round2(gpuMinutes(wallMinutes, held)),
    rounds: ran,
    max_rounds: maxRounds,
  }
  // Beside a.json and b.json: how the host was held (the starts, their readiness, the GPU-minutes).
  await writeFileAtomic(join(opts.outDir, 'schedule.json'), `${JSON.stringify(schedule, null, 2)}\n`)
  const verdict = stopped?.verdict ?? compareAB(acc.A, acc.B, { ...opts.gateOptions, maxLooks: maxRounds }, restarted, opts.history ?? null)
  verdict.cost = costOf(
    {
      engineStarts: starts.length + (opts.spent?.engineStarts ?? 0),
      // The reused first sweep's runs are in B's file and in what the ladder spent: counted once.
      pointRuns: pointRuns(acc.A) + pointRuns(acc.B) - (reused === null || acc.B === undefined ? 0 : pointRuns(reused)) + (opts.spent?.pointRuns ?? 0),
    },
    (opts.spentGpuMinutes ?? 0) + schedule.gpu_minutes,
    opts.maxGpuMinutes ?? null,
    // The cap "ended" the job only where it stopped it with gated rows still open.
    capped && verdict.rows.some((r) => r.gated && r.status === 'undecided'),
  )
  if (verdict.cost.capped && verdict.verdict === 'undecided') verdict.reasons.unshift(`undecided: ${capLine(opts.maxGpuMinutes!, verdict.cost.gpu_minutes)}`)
  return { verdict, a: acc.A, b: acc.B, paths, order: schedule.order, schedule }
}

/** B's server did not start for a slot: the candidate broke (its verdict), not a usage error. */
class BStartFailed extends Error {
  constructor(
    message: string,
    override readonly cause: ServerStartFailed,
  ) {
    super(message)
  }
}

/** Runs of points a side measured (one run of one point each). */
function pointRuns(r: ResultFile): number {
  return r.points.reduce((n, p) => n + p.runs.length, 0)
}

function round2(x: number): number {
  return Math.round(x * 100) / 100
}

/**
 * The gate's first sweep when it can be an A/B's first B slot (`bFirst`): the candidate's engine
 * started by servegate for it alone (B is restarted for every slot), one run per point of the
 * whole sweep the A/B measures (no bracket), nothing cut short. Null otherwise.
 */
export function reusableFirstSlot(first: ResultFile | undefined, cfgB: ResolvedConfig, resident: boolean): ResultFile | null {
  if (first === undefined || resident || cfgB.serve == null || first.interrupted !== undefined) return null
  if (first.config['repeats'] !== 1 || recordedBracket(first) !== null) return null
  const want = cfgB.shapes.flatMap((s) => cfgB.concurrency.map((c) => `${s.inputLen}x${s.outputLen}@c${c}`)).sort()
  const have = first.points.map((p) => `${p.input_len}x${p.output_len}@c${p.concurrency}`).sort()
  const oneRun = first.points.every((p) => p.runs.length === 1)
  return oneRun && want.length === have.length && want.every((k, i) => k === have[i]) ? first : null
}
