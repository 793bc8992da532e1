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
 * With `exclusive`, a side's command is started for each of its slots and
 * stopped after it (two engines that need the same GPUs); otherwise both stay
 * up for the whole job and only the measured one gets load. Each slot's sweep
 * watches its server: B dying ends the job with the verdict broken (the slot
 * is recorded as cut by the server's exit); A dying leaves nothing to judge
 * against and is an error.
 */
import { mkdirSync } from 'node:fs'
import { join } from 'node:path'
import { UsageError } from '../errors.js'
import type { ResolvedConfig } from '../config/resolve.js'
import { mergeResults } from '../gate/merge.js'
import type { GateOptions, Verdict } from '../gate/types.js'
import { normalizeBaseUrl } from '../client/endpoints.js'
import { describeExit, ServerExitedDuringSweep, startServer, type ServerHandle } from '../serve/index.js'
import { readResultFile, writeResultFile } from '../store/result-file.js'
import { runSweep, type SweepDeps } from '../sweep/run-sweep.js'
import { SERVER_EXITED, type ResultFile } from '../types.js'
import { compareAB } from './verdict.js'

export type Side = 'A' | 'B'

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
  outDir: string
  gateOptions: Partial<GateOptions>
  /** Start and stop a side's command around each of its slots instead of keeping both up. */
  exclusive: boolean
}

export interface AbDeps {
  log(line: string): void
  signal?: AbortSignal
  /** Called after each slot, e.g. for progress. */
  onSlotDone?(side: Side, round: number, slot: number, slots: number): void
  /** Passed to each slot's sweep (tests shorten the simulator's time). */
  sweepDeps?: Partial<SweepDeps>
}

export interface AbOutcome {
  verdict: Verdict
  a: ResultFile
  b: ResultFile
  paths: { a: string; b: string }
  /** The slot order, e.g. ['A', 'B', 'B', 'A']. */
  order: Side[]
}

/** Slot order of R counterbalanced rounds: A B, B A, A B, … */
export function slotOrder(rounds: number): Side[] {
  const order: Side[] = []
  for (let r = 0; r < rounds; r++) order.push(...(r % 2 === 0 ? (['A', 'B'] as const) : (['B', 'A'] as const)))
  return order
}

/** Run every slot, write both results, and decide. */
export async function runAB(opts: AbOptions, deps: AbDeps): Promise<AbOutcome> {
  if (!Number.isInteger(opts.rounds) || opts.rounds < 2) throw new UsageError(`--rounds ${opts.rounds}: expected an integer ≥ 2 (pairs are needed to judge the spread)`)
  mkdirSync(opts.outDir, { recursive: true })
  const paths = { a: join(opts.outDir, 'a.json'), b: join(opts.outDir, 'b.json') }
  const cfgs: Record<Side, ResolvedConfig> = { A: opts.a, B: opts.b }
  for (const side of ['A', 'B'] as const) {
    const c = cfgs[side]
    if (c.serve == null && c.server.baseUrl === null) throw new UsageError(`side ${side}: no server: give --${side.toLowerCase()}-base-url or --${side.toLowerCase()}-serve`)
  }
  // Both up for the whole job unless exclusive: started here, watched by each slot's sweep.
  const running = new Map<Side, ServerHandle>()
  const startKept = async (side: Side): Promise<void> => {
    const c = cfgs[side]
    if (!c.serve) return
    running.set(
      side,
      await startServer({
        command: c.serve.command,
        baseUrl: c.server.baseUrl === null ? null : normalizeBaseUrl(c.server.baseUrl).root,
        readyTimeoutMs: c.serve.readyTimeoutS * 1000,
        stopTimeoutMs: c.serve.stopTimeoutS * 1000,
        stopCommand: c.serve.stopCommand,
        logPath: join(opts.outDir, `${side.toLowerCase()}.server.log`),
        apiKey: c.apiKey,
        secrets: c.serve.secrets,
        ...(c.serve.env !== undefined ? { passEnv: c.serve.env } : {}),
        log: (line) => deps.log(`${side}: ${line}`),
        ...(deps.signal ? { signal: deps.signal } : {}),
      }),
    )
  }

  const order = slotOrder(opts.rounds)
  const acc: Partial<Record<Side, ResultFile>> = {}
  const keep = async (side: Side, slot: ResultFile): Promise<void> => {
    const merged = acc[side] === undefined ? slot : mergeResults(acc[side]!, slot)
    // The side's file plans all rounds: a job cut short reads as incomplete, never as fewer repeats.
    merged.config = { ...merged.config, repeats: opts.rounds }
    if (slot.interrupted !== undefined) merged.interrupted = slot.interrupted
    acc[side] = merged
    await writeResultFile(side === 'A' ? paths.a : paths.b, merged)
  }
  try {
    if (!opts.exclusive) for (const side of ['A', 'B'] as const) await startKept(side)
    for (const [i, side] of order.entries()) {
      const round = Math.floor(i / 2)
      const kept = running.get(side)
      const out = join(opts.outDir, `slot-${String(i + 1).padStart(2, '0')}-${side.toLowerCase()}.json`)
      deps.log(`servegate ab: slot ${i + 1} of ${order.length} — ${side} (round ${round + 1})`)
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
        const what = `${side}'s server ${describeExit(exit)} before slot ${i + 1}`
        // The reference dying leaves nothing to judge against; the candidate dying is its verdict: broken.
        if (side === 'A') throw new UsageError(`A (the reference) failed: ${what}\n${kept!.tail(20).join('\n')}`, `The whole server log is in ${kept!.logPath}.`)
        deps.log(what)
        const b = acc.B
        if (b === undefined) throw new CandidateBrokeBeforeMeasuring(`${what}, so no slot of B was measured\n${kept!.tail(20).join('\n')}`)
        b.interrupted = {
          at: new Date().toISOString(),
          reason: SERVER_EXITED,
          cut_run: null,
          finished_runs: b.points.reduce((n, p) => n + p.runs.length, 0),
          planned_runs: b.points.length * opts.rounds,
          server: { exit_code: exit.code, signal: exit.signal, log_tail: kept!.tail(20) },
        }
        await writeResultFile(paths.b, b)
      }
      if (kept !== undefined && kept.exit() !== null) {
        await deadSide()
        break
      }
      try {
        const { result } = await runSweep(cfg, { ...deps.sweepDeps, log: deps.log, ...(deps.signal ? { signal: deps.signal } : {}), ...(kept ? { server: kept } : {}) })
        await keep(side, result)
      } catch (err) {
        if (!(err instanceof ServerExitedDuringSweep)) {
          // A server that dies as the slot starts fails its probe before the sweep watches it.
          if (!(await diedBefore())) throw err
          await deadSide()
          break
        }
        if (side === 'A') throw new UsageError(`A (the reference) failed: ${err.message}`, err.hint)
        deps.log(`B's server exited during slot ${i + 1}: ${err.message.split('\n')[0]}`)
        await keep(side, await readResultFile(out))
        break
      }
      deps.onSlotDone?.(side, round, i, order.length)
    }
  } finally {
    for (const handle of running.values()) await handle.stop()
  }
  if (acc.A === undefined || acc.B === undefined) throw new UsageError('servegate ab: a side has no finished slot, so there is nothing to compare')
  return { verdict: compareAB(acc.A, acc.B, opts.gateOptions), a: acc.A, b: acc.B, paths, order }
}
