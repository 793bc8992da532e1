/**
 * The gate's terms come from the base branch, never from the checkout being
 * judged: otherwise a pull request (or the merge queue's branch, or a branch a
 * push or a run by hand was on) could loosen `gate.tolerance_pct`, narrow the
 * gated sweep to the points it does well on, shorten the request deadline to
 * drop its slowest requests, or rewrite the baseline from a slow run, and pass
 * its own gate. The terms are the baseline file, the config's `target`, every
 * `gate.*` key, the whole `sweeps` block (the gated sweep's shapes,
 * concurrency, placement, itl_concurrency, repeats, prompts, warmup: the
 * Action runs the base branch's gated sweep), `seed`, the `goodput` SLOs, and
 * `server.request_timeout`, `server.env` (which of the runner's variables a
 * serve command may see: a PR adding HF_TOKEN to it must not get it),
 * `server.api_key_env` (which variable's value is sent as the key) and
 * `server.isolation`. What is left to the checkout is the server under test
 * (how it is started and reached). A config path or a named baseline the base
 * branch lacks is refused, and so is an input that contradicts the base's
 * config (input-terms.ts), all before anything is measured.
 */
import { relative, resolve } from 'node:path'
import type { ResolvedConfig, RunFlags } from '../config/resolve.js'
import type { ConfigFile } from '../config/schema.js'
import { UsageError } from '../errors.js'
import type { Baseline } from '../gate/types.js'
import { readBaseConfig, resolveBaseRev, showAtRev } from './base-files.js'
import { BASE_EVENTS, type RunContext } from './context.js'
import type { ActionDeps } from './deps.js'
import { baselinePathFor, chooseSweep, type ActionInputs } from './inputs.js'
import { baseTermView, conflictMessage, configJudgement, inputConflicts, type Judgement } from './input-terms.js'

/** The top-level config keys that are terms of the gate (read from the base branch), with the depth their changes are named to. */
const TERMS = { target: 1, gate: 1, sweeps: 2, seed: 0, goodput: 1 } as const

/** The top-level config keys that are terms of the gate (read from the base branch). */
const TERM_KEYS = Object.keys(TERMS) as Array<keyof typeof TERMS>

/**
 * The `server.*` keys that are terms: the request deadline decides which slow requests count as
 * failed; `env` and `api_key_env` which of the runner's variables reach an engine and whom the key
 * is sent to; `isolation` whether the commands a change controls run apart from servegate's tokens.
 */
const SERVER_TERM_KEYS = ['request_timeout', 'env', 'api_key_env', 'isolation'] as const

/** The `server` block as a plain record: a term key the schema does not hold yet reads as absent. */
const serverOf = (file: ConfigFile | null | undefined): Record<string, unknown> | undefined => file?.server as Record<string, unknown> | undefined

/** The PR's config with the base branch's terms (see the file comment) in place of its own. */
export function withBaseTerms(pr: ConfigFile | null, base: ConfigFile | null): ConfigFile | null {
  if (pr === null) return null
  const out: ConfigFile = { ...pr }
  for (const key of TERM_KEYS) {
    const v = base?.[key]
    if (v === undefined) delete out[key]
    else (out as Record<string, unknown>)[key] = v
  }
  const server: Record<string, unknown> = { ...(pr.server ?? {}) }
  for (const key of SERVER_TERM_KEYS) {
    const v = serverOf(base)?.[key]
    if (v === undefined) delete server[key]
    else server[key] = v
  }
  if (Object.keys(server).length > 0) out.server = server as NonNullable<ConfigFile['server']>
  else delete out.server
  return out
}

/** The terms whose values differ between the PR's config and the base's, e.g. `gate.tolerance_pct`, `sweeps.gate.concurrency`. */
export function termDifferences(pr: ConfigFile | null, base: ConfigFile | null): string[] {
  const out: string[] = []
  for (const key of TERM_KEYS) diffPaths(pr?.[key], base?.[key], key, TERMS[key], out)
  for (const key of SERVER_TERM_KEYS) diffPaths(serverOf(pr)?.[key], serverOf(base)?.[key], `server.${key}`, 0, out)
  return out
}

const plain = (x: unknown): Record<string, unknown> | null => (typeof x === 'object' && x !== null && !Array.isArray(x) ? (x as Record<string, unknown>) : null)

/** Push `path` (or the paths under it, `depth` levels down) where `a` and `b` differ; a named entry only one side has (a sweep) is one change. */
function diffPaths(a: unknown, b: unknown, path: string, depth: number, out: string[], top = true): void {
  if (canonical(a) === canonical(b)) return
  const ao = plain(a)
  const bo = plain(b)
  if (depth === 0 || (ao === null && a !== undefined) || (bo === null && b !== undefined) || (!top && (a === undefined || b === undefined))) {
    out.push(path)
    return
  }
  for (const k of [...new Set([...Object.keys(ao ?? {}), ...Object.keys(bo ?? {})])].sort()) diffPaths(ao?.[k], bo?.[k], `${path}.${k}`, depth - 1, out, false)
}

/** JSON with sorted keys, so key order never counts as a change. */
function canonical(v: unknown): string {
  if (v === undefined) return 'undefined'
  return JSON.stringify(v, (_k, x: unknown) =>
    x !== null && typeof x === 'object' && !Array.isArray(x) ? Object.fromEntries(Object.entries(x).sort(([p], [q]) => p.localeCompare(q))) : x,
  )
}

/** The banner note and the warning when the checkout (a pull request's, or a run's) changes the terms; null when it does not. */
export function termsNotice(
  changed: readonly string[],
  baseRef: string,
  what: 'pull request' | 'run' = 'pull request',
): { title: string; message: string } | null {
  if (changed.length === 0) return null
  return {
    title: `servegate: this ${what} changes the gate's terms`,
    message:
      `This ${what === 'run' ? "run's checkout" : 'pull request'} changes ${changed.join(', ')}. The gate used the versions on ${baseRef}; ` +
      (what === 'run' ? `the new terms apply once they are on ${baseRef.replace(/ \(.*$/, '')}.` : 'the new terms apply once this pull request is merged.'),
  }
}

/** What a run is held to: the resolved config and the baseline, and where the terms came from. */
export interface Terms {
  cfg: ResolvedConfig
  baselineRel: string
  baselineAbs: string
  baseline: Baseline | null
  /** `main (1a2b3c4d5e6f)` when the terms came from the base branch; null when from this checkout. */
  baseLabel: string | null
  /** The config file as resolved (the PR's, with the base branch's terms), and its path: an A/B decision resolves its reference side from it. */
  file: ConfigFile | null
  filePath: string | null
  /** The judgement the config sets (the base branch's on a gate), which wins over the inputs. */
  judgement: Judgement
}

/**
 * The config and the baseline. In gate, check and ab mode the gate's terms
 * (see the file comment; the baseline file) are read from the base branch
 * the event names (context.ts); when the checkout changes them, a note and a
 * warning say so. The server under test comes from this checkout. An event
 * that should name a base but whose payload does not is refused, never judged
 * by the checkout's own terms.
 */
export async function readGateTerms(deps: ActionDeps, inputs: ActionInputs, ctx: RunContext, wd: string, notes: string[]): Promise<Terms> {
  const { stages } = deps
  const configRel = inputs.config
  const configPath = configRel === undefined ? null : resolve(wd, configRel)
  const prFile = configPath === null ? null : await stages.loadConfigFile(configPath)
  // An A/B job is a gate too: a PR must not loosen the tolerances it is judged by.
  const judged = inputs.mode === 'gate' || inputs.mode === 'check' || inputs.mode === 'ab'
  if (judged && ctx.base === null && (BASE_EVENTS as readonly string[]).includes(ctx.eventName)) {
    throw new UsageError(
      `this ${ctx.eventName} event names no base branch, so servegate cannot take the gate's terms from one, and will not take them from the checkout it judges.`,
      ctx.eventName === 'merge_group'
        ? 'The merge_group payload carries merge_group.base_ref; check the workflow trigger.'
        : "The payload's repository.default_branch names the branch whose terms apply; check the workflow trigger.",
    )
  }
  const fromBase = judged && ctx.base !== null
  let file: ConfigFile | null = prFile
  let baseFile: ConfigFile | null = null
  let rev: string | null = null
  let baseLabel: string | null = null
  if (fromBase && ctx.base !== null) {
    rev = await resolveBaseRev(deps.git, wd, ctx.base)
    baseLabel = `${ctx.base.ref} (${rev.startsWith('refs/') ? rev : rev.slice(0, 12)})`
    baseFile = await readBaseConfig(deps, wd, rev, baseLabel, configRel, configPath)
    const refused = conflictMessage(inputConflicts(inputs, baseTermView(baseFile, `${configRel ?? 'the config'} on ${baseLabel}`)))
    if (refused !== null) {
      throw new UsageError(
        refused,
        `Remove the input from the workflow, or give it the value on ${ctx.base.ref}; a change to a term applies once it is merged into ${ctx.base.ref}'s config.`,
      )
    }
    file = withBaseTerms(prFile, baseFile)
  }
  const cfg = stages.resolveConfig({ file, filePath: configPath, flags: runFlags(inputs, wd, file?.sweeps ? Object.keys(file.sweeps) : null), env: deps.env })
  const baselineRel = baselinePathFor(inputs, cfg.sweepName)
  const baselineAbs = resolve(wd, baselineRel)
  const changed = fromBase ? termDifferences(prFile, baseFile) : []
  let baseline: Baseline | null
  if (rev !== null && baseLabel !== null) {
    const text = await showAtRev(deps.git, wd, rev, relative(wd, baselineAbs))
    if (text === null && inputs.baseline !== undefined) {
      // Named by the workflow: a file the base lacks would skip the stored baseline's look.
      throw new UsageError(
        `the input baseline "${inputs.baseline}" names a file that does not exist on ${baseLabel}: a change is judged against a baseline the base branch holds.`,
        `Record it on ${ctx.base?.ref ?? 'the base branch'} first (mode: refresh there, with the same baseline input), or leave the input empty.`,
      )
    }
    baseline = text === null ? null : stages.parseBaselineText(text, `${baselineRel} on ${baseLabel}`)
    // The PR's copy counts as changed when it parses to something else (formatting alone is no change).
    if (baseline !== null && deps.files.exists(baselineAbs)) {
      const ours = await stages.readBaseline(baselineAbs).catch(() => null)
      if (ours === null || JSON.stringify(ours) !== JSON.stringify(baseline)) changed.push(baselineRel)
    }
  } else {
    // Read the baseline before sweeping: a missing or corrupt one must not cost a GPU run first.
    baseline = deps.files.exists(baselineAbs) ? await stages.readBaseline(baselineAbs) : null
  }
  const notice = termsNotice(changed, baseLabel ?? 'the base branch', ctx.pullRequest === null ? 'run' : 'pull request')
  if (notice !== null) {
    notes.push(notice.message)
    deps.core.warning(notice.message, { title: notice.title })
  }
  const judgement = configJudgement(file, `${configRel ?? 'the config'}${baseLabel === null ? '' : ` on ${baseLabel}`}`)
  return { cfg, baselineRel, baselineAbs, baseline, baseLabel, file, filePath: configPath, judgement }
}

/** The run's flags from the inputs: in mode ab the server is B's (b-serve / b-base-url, else serve / base-url). */
export function runFlags(inputs: ActionInputs, wd: string, fileSweeps: readonly string[] | null): RunFlags {
  const flags: RunFlags = { out: resolve(wd, inputs.out) }
  const sweep = chooseSweep(inputs, fileSweeps)
  if (sweep !== undefined) flags.sweep = sweep
  const ab = inputs.mode === 'ab'
  const baseUrl = ab ? (inputs.bBaseUrl ?? (inputs.bServe === undefined ? inputs.baseUrl : undefined)) : inputs.baseUrl
  const serve = ab ? (inputs.bServe ?? (inputs.bBaseUrl === undefined ? inputs.serve : undefined)) : inputs.serve
  if (baseUrl !== undefined) flags.baseUrl = baseUrl
  if (inputs.model !== undefined) flags.model = inputs.model
  if (inputs.containerDigest !== undefined) flags.containerDigest = inputs.containerDigest
  if (inputs.serveCommand !== undefined) flags.serveCommand = inputs.serveCommand
  if (serve !== undefined) flags.serve = serve
  return flags
}
