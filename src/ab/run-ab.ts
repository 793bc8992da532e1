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
 * Servers: a side is a base URL, or a command started through `deps.serve`.
 * With `exclusive`, a side's command is started for each of its slots and
 * stopped after it (two engines that need the same GPUs); otherwise both stay
 * up for the whole job and only the measured one gets load.
 */
import { mkdirSync } from 'node:fs'
import { join } from 'node:path'
import { UsageError } from '../errors.js'
import type { ResolvedConfig } from '../config/resolve.js'
import { mergeResults } from '../gate/merge.js'
import type { GateOptions, Verdict } from '../gate/types.js'
import { writeResultFile } from '../store/result-file.js'
import { runSweep, type SweepDeps } from '../sweep/run-sweep.js'
import type { ResultFile } from '../types.js'
import { compareAB } from './verdict.js'

export type Side = 'A' | 'B'

/** One side: a server already running (baseUrl) or a command servegate starts (serve). */
export interface AbServer {
  baseUrl: string | null
  serve: string | null
}

/** A started server: where it listens, and how to stop it. */
export interface StartedServer {
  baseUrl: string
  stop(): Promise<void>
}

export interface AbOptions {
  a: AbServer
  b: AbServer
  rounds: number
  /** The sweep to run in every slot (its repeats are ignored: one per slot). */
  cfg: ResolvedConfig
  outDir: string
  gateOptions: Partial<GateOptions>
  /** Start and stop a side's command around each of its slots instead of keeping both up. */
  exclusive: boolean
}

export interface AbDeps {
  log(line: string): void
  signal?: AbortSignal
  /** Starts a side's serve command (servegate's server lifecycle); needed only when a side has one. */
  serve?(command: string, side: Side, logFile: string): Promise<StartedServer>
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
  for (const [side, s] of [['A', opts.a], ['B', opts.b]] as const) {
    if ((s.baseUrl === null) === (s.serve === null)) {
      throw new UsageError(`side ${side}: give exactly one of --${side.toLowerCase()}-base-url and --${side.toLowerCase()}-serve`)
    }
    if (s.serve !== null && deps.serve === undefined) throw new UsageError(`side ${side}: starting a server from a command is not available here`)
  }
  mkdirSync(opts.outDir, { recursive: true })
  const paths = { a: join(opts.outDir, 'a.json'), b: join(opts.outDir, 'b.json') }
  const servers: Record<Side, AbServer> = { A: opts.a, B: opts.b }
  const running = new Map<Side, StartedServer>()
  const start = async (side: Side): Promise<string> => {
    const s = servers[side]
    if (s.baseUrl !== null) return s.baseUrl
    let handle = running.get(side)
    if (handle === undefined) {
      handle = await deps.serve!(s.serve!, side, join(opts.outDir, `${side.toLowerCase()}.server.log`))
      running.set(side, handle)
    }
    return handle.baseUrl
  }
  const stop = async (side: Side): Promise<void> => {
    const handle = running.get(side)
    running.delete(side)
    await handle?.stop()
  }

  const order = slotOrder(opts.rounds)
  const acc: Partial<Record<Side, ResultFile>> = {}
  try {
    if (!opts.exclusive) for (const side of ['A', 'B'] as const) await start(side)
    for (const [i, side] of order.entries()) {
      const round = Math.floor(i / 2)
      const url = await start(side)
      deps.log(`servegate ab: slot ${i + 1} of ${order.length} — ${side} (round ${round + 1}) against ${url}`)
      const cfg: ResolvedConfig = {
        ...opts.cfg,
        server: { ...opts.cfg.server, baseUrl: url },
        repeats: 1,
        resume: false,
        // Every slot draws prompts of its own: a server's prefix cache never serves a later slot.
        seedPinned: false,
        out: join(opts.outDir, `slot-${String(i + 1).padStart(2, '0')}-${side.toLowerCase()}.json`),
        ...(servers[side].serve !== null ? { serveCommand: servers[side].serve } : {}),
      }
      const { result } = await runSweep(cfg, { ...deps.sweepDeps, log: deps.log, ...(deps.signal ? { signal: deps.signal } : {}) })
      const merged = acc[side] === undefined ? result : mergeResults(acc[side]!, result)
      // The side's file plans all rounds: a job cut short reads as incomplete, never as fewer repeats.
      merged.config = { ...merged.config, repeats: opts.rounds }
      acc[side] = merged
      await writeResultFile(side === 'A' ? paths.a : paths.b, merged)
      deps.onSlotDone?.(side, round, i, order.length)
      if (opts.exclusive) await stop(side)
    }
  } finally {
    for (const side of [...running.keys()]) await stop(side)
  }
  const a = acc.A!
  const b = acc.B!
  return { verdict: compareAB(a, b, opts.gateOptions), a, b, paths, order }
}
