/**
 * `--shard I/N`, `--start-at`, `--slot`, `--time-server` and the config file's `shard:` (flags win):
 * the shard of a sharded sweep this process runs and the schedule it keeps (plan/shard.ts). A
 * sharded sweep measures one server the launcher started, closed loop, on a schedule that has no
 * room for a second attempt: what cannot keep that is refused here, before anything runs.
 */
import type { Problems } from './flags.js'
import type { ConfigFile } from './schema.js'

/** Which shard this process runs: index I of N, counted from 0 as Kubernetes and Slurm count. */
export interface ShardSpec {
  index: number
  count: number
}

/** Most shards a sweep may be split into (a sanity bound on `--shard I/N`). */
export const MAX_SHARDS = 1024

/** The shard this process runs and its schedule. */
export interface ShardSettings extends ShardSpec {
  /** The environment variable the index came from; null: given as a number. */
  indexFrom: string | null
  /** `--start-at` as given (ISO 8601) and in ms since 1970. */
  startAt: string
  startAtMs: number
  /** Each run's slot, s. */
  slotS: number
  /** The NTP server each shard measures its clock against; null: none (shards on one host share a clock). */
  timeServer: string | null
}

/** The raw shard flags of `servegate run`. */
export interface ShardFlags {
  shard?: string
  startAt?: string
  slot?: string
  timeServer?: string
}

/** What else of the run's settings decides whether a sharded sweep can keep its schedule. */
export interface ShardContext {
  openLoop: boolean
  resume: boolean
  /** A serve command (`--serve`, `server.command`): each shard would start a server of its own. */
  serve: boolean
}

/** The shard settings, or null when neither the flags nor the file ask for a shard; problems pushed as found. */
export function resolveShard(
  flags: ShardFlags,
  file: ConfigFile | null,
  fileName: string,
  env: Readonly<Record<string, string | undefined>>,
  ctx: ShardContext,
  problems: Problems,
): ShardSettings | null {
  const fromFile = file?.shard
  const where = (flag: string, key: string): string => (flags[flag as keyof ShardFlags] !== undefined ? `--${kebab(flag)}` : `${fileName}: shard.${key}`)
  const rawSpec = flags.shard ?? (fromFile ? `${fromFile.index ?? ''}/${fromFile.count}` : undefined)
  if (rawSpec === undefined) {
    for (const f of ['startAt', 'slot', 'timeServer'] as const)
      if (flags[f] !== undefined) problems.push(`--${kebab(f)} belongs to a sharded sweep: give --shard I/N too`)
    return null
  }
  const before = problems.length
  const parsed = parseShardSpec(rawSpec, env)
  if ('problem' in parsed) problems.push(`${where('shard', 'index')} ${JSON.stringify(rawSpec)}: ${parsed.problem}`)
  const rawStart = flags.startAt ?? fromFile?.start_at
  let startAtMs: number | null = null
  if (rawStart === undefined)
    problems.push('--shard needs --start-at TIME: the same ISO 8601 time on every shard, a little in the future, where their schedule begins')
  else {
    const t = parseStartAt(rawStart)
    if (typeof t === 'number') startAtMs = t
    else problems.push(`${where('startAt', 'start_at')} ${JSON.stringify(rawStart)}: ${t.problem}`)
  }
  let slotS: number | null = fromFile?.slot_s ?? null
  if (flags.slot !== undefined) {
    const n = Number(flags.slot.trim())
    if (!/^\d+(\.\d+)?$/.test(flags.slot.trim()) || !(n > 0))
      problems.push(`--slot ${JSON.stringify(flags.slot)}: expected seconds above 0, longer than the sweep's longest run`)
    else slotS = n
  }
  if (slotS === null && flags.slot === undefined)
    problems.push('--shard needs --slot SECONDS: how long each run is given on every shard (longer than the longest run, its warmup included)')
  if (ctx.openLoop) problems.push('--shard runs closed-loop sweeps only: an open-loop sweep (--request-rate) cannot be split yet')
  if (ctx.resume) problems.push('--shard cannot --resume: the schedule the other shards keep has moved on; run the sharded sweep again')
  if (ctx.serve)
    problems.push('--shard measures one server that the launcher started, given by --base-url: drop --serve (every shard would start a server of its own)')
  if (problems.length > before || 'problem' in parsed || startAtMs === null || slotS === null) return null
  if (parsed.spec.count > MAX_SHARDS) return null
  return {
    ...parsed.spec,
    indexFrom: parsed.indexFrom,
    startAt: rawStart!.trim(),
    startAtMs,
    slotS,
    timeServer: flags.timeServer ?? fromFile?.time_server ?? null,
  }
}

function kebab(flag: string): string {
  return flag.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)
}

/**
 * `I/N` as `--shard` takes it: I a number from 0 to N − 1, or the name of an environment variable
 * holding it (`JOB_COMPLETION_INDEX`, `SLURM_PROCID`); N a number from 1 to MAX_SHARDS. Returns the
 * spec and where the index came from, or a problem: what was given and what was expected.
 */
export function parseShardSpec(
  raw: string,
  env: Readonly<Record<string, string | undefined>>,
): { spec: ShardSpec; indexFrom: string | null } | { problem: string } {
  const m = /^\s*([A-Za-z_][A-Za-z0-9_]*|\d+)\s*\/\s*(\d+)\s*$/.exec(raw)
  const expected = 'expected I/N: I from 0 to N−1, or the name of the variable holding it (JOB_COMPLETION_INDEX/4, SLURM_PROCID/8)'
  if (m === null) return { problem: expected }
  const count = Number(m[2])
  if (!Number.isSafeInteger(count) || count < 1 || count > MAX_SHARDS) return { problem: `expected N from 1 to ${MAX_SHARDS} shards` }
  const name = /^\d+$/.test(m[1]!) ? null : m[1]!
  const text = name === null ? m[1]! : env[name]
  if (text === undefined) return { problem: `the variable ${name} is not set (the launcher sets it: a Kubernetes Indexed Job, Slurm's srun)` }
  if (!/^\s*\d+\s*$/.test(text)) return { problem: `${name} is ${JSON.stringify(text)}: expected a shard index from 0 to ${count - 1}` }
  const index = Number(text)
  if (index >= count) return { problem: `${name === null ? 'shard index' : `${name}=${index}`} is not below N = ${count}: indices run from 0 to ${count - 1}` }
  return { spec: { index, count }, indexFrom: name }
}

/**
 * `--start-at TIME`: an ISO 8601 time with its zone (`2026-12-07T10:00:00Z`, `…+01:00`), the same on
 * every host; a time without a zone would be read in each host's own. Returns ms since 1970 or a problem.
 */
export function parseStartAt(raw: string): number | { problem: string } {
  const s = raw.trim()
  if (!/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2})$/.test(s))
    return { problem: 'expected an ISO 8601 time with its zone, e.g. 2026-12-07T10:00:00Z (every shard reads it alike)' }
  const ms = Date.parse(s)
  return Number.isFinite(ms) ? ms : { problem: 'expected a valid date and time, e.g. 2026-12-07T10:00:00Z' }
}
