/**
 * The gate's terms come from the branch a pull request merges into, never from
 * the pull request itself: otherwise a PR could loosen `gate.tolerance_pct` or
 * rewrite the baseline from a slow run and pass its own gate. The terms are the
 * baseline file, the config's `target` and `gate` blocks and `server.env`; the server and
 * sweep settings still come from the PR (they are what is being tested), and
 * the gate checks that the sweep matches the baseline's profile.
 */
import { relative, resolve } from 'node:path'
import type { ResolvedConfig, RunFlags } from '../config/resolve.js'
import type { ConfigFile } from '../config/schema.js'
import { UsageError } from '../errors.js'
import type { Baseline } from '../gate/types.js'
import type { BaseRef, RunContext } from './context.js'
import type { ActionDeps } from './deps.js'
import { baselinePathFor, chooseSweep, type ActionInputs } from './inputs.js'
import type { GitRunner } from './refresh-commit.js'

/** The config keys that are terms of the gate (read from the base branch). */
export const TERM_KEYS = ['target', 'gate'] as const

/**
 * A revision of the base branch that exists locally: the PR's base commit when
 * the event names it, else `origin/<ref>`; fetched from origin when missing
 * (a shallow checkout fetches one commit). Throws a UsageError when neither can be had.
 */
export async function resolveBaseRev(git: GitRunner, cwd: string, base: BaseRef): Promise<string> {
  const has = async (rev: string): Promise<boolean> => (await git(['cat-file', '-e', `${rev}^{commit}`], cwd)).code === 0
  const shallow = (await git(['rev-parse', '--is-shallow-repository'], cwd)).stdout.trim() === 'true'
  const depth = shallow ? ['--depth=1'] : []
  if (base.sha !== null) {
    if (await has(base.sha)) return base.sha
    const bySha = await git(['fetch', '--no-tags', ...depth, 'origin', base.sha], cwd)
    if (bySha.code === 0 && (await has(base.sha))) return base.sha
  }
  const tracking = `refs/remotes/origin/${base.ref}`
  const byRef = await git(['fetch', '--no-tags', ...depth, 'origin', `+refs/heads/${base.ref}:${tracking}`], cwd)
  if (base.sha !== null && (await has(base.sha))) return base.sha
  if (await has(tracking)) return tracking
  throw new UsageError(
    `servegate cannot read the base branch ${base.ref}${base.sha === null ? '' : ` (${base.sha.slice(0, 12)})`} to take the gate's terms from it: git fetch origin exited ${byRef.code}: ${byRef.stderr.trim()}`,
    'Check out the repository with actions/checkout (its origin must be reachable), or fetch the base branch before servegate runs.',
  )
}

/** A file's text at `rev` (path relative to `cwd`), or null when the file does not exist there. */
export async function showAtRev(git: GitRunner, cwd: string, rev: string, relPath: string): Promise<string | null> {
  const spec = `${rev}:./${relPath.replace(/^\.\//, '')}`
  const r = await git(['show', spec], cwd)
  if (r.code === 0) return r.stdout
  // git says "does not exist in" / "exists on disk, but not in" for a path the revision lacks.
  if (/does not exist|exists on disk, but not in|not in '/.test(r.stderr)) return null
  throw new UsageError(`servegate could not read ${relPath} at ${rev}: git show exited ${r.code}: ${r.stderr.trim()}`)
}

/** The PR's config with the base branch's terms (`target`, `gate`) in place of its own. */
export function withBaseTerms(pr: ConfigFile | null, base: ConfigFile | null): ConfigFile | null {
  if (pr === null) return null
  const out: ConfigFile = { ...pr }
  for (const key of TERM_KEYS) {
    const v = base?.[key]
    if (v === undefined) delete out[key]
    else (out as Record<string, unknown>)[key] = v
  }
  return withBaseServerEnv(out, base)
}

/**
 * `server.env` is a term too: it decides which of the runner's variables a serve command sees, so
 * a pull request adding HF_TOKEN (or anything else) to it must not get it. The base branch's list
 * is kept; the rest of `server` (the engine under test) stays the PR's.
 */
function withBaseServerEnv(out: ConfigFile, base: ConfigFile | null): ConfigFile {
  const env = base?.server?.env
  if (out.server === undefined) return env === undefined ? out : { ...out, server: { env } }
  const server = { ...out.server }
  if (env === undefined) delete server.env
  else server.env = env
  return { ...out, server }
}

/** The term keys whose values differ between the PR's config and the base's, e.g. `gate.tolerance_pct`. */
export function termDifferences(pr: ConfigFile | null, base: ConfigFile | null): string[] {
  const out: string[] = []
  for (const key of TERM_KEYS) {
    const a = (pr?.[key] ?? {}) as Record<string, unknown>
    const b = (base?.[key] ?? {}) as Record<string, unknown>
    for (const sub of [...new Set([...Object.keys(a), ...Object.keys(b)])].sort()) {
      if (canonical(a[sub]) !== canonical(b[sub])) out.push(`${key}.${sub}`)
    }
  }
  return out
}

/** JSON with sorted keys, so key order never counts as a change. */
function canonical(v: unknown): string {
  if (v === undefined) return 'undefined'
  return JSON.stringify(v, (_k, x: unknown) =>
    x !== null && typeof x === 'object' && !Array.isArray(x) ? Object.fromEntries(Object.entries(x).sort(([p], [q]) => p.localeCompare(q))) : x,
  )
}

/** The banner note and the warning when the PR changes the terms; null when it does not. */
export function termsNotice(changed: readonly string[], baseRef: string): { title: string; message: string } | null {
  if (changed.length === 0) return null
  return {
    title: "servegate: this pull request changes the gate's terms",
    message:
      `This pull request changes ${changed.join(', ')}. The gate used the versions on ${baseRef}; ` +
      'the new terms apply once this pull request is merged.',
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
}

/**
 * The config and the baseline. In gate and check mode on a pull request the
 * gate's terms (the config's target and gate blocks, the baseline file) are
 * read from the base branch; when the PR changes them, a note and a warning
 * say so. Everything else (server, sweep) comes from this checkout.
 */
export async function readGateTerms(deps: ActionDeps, inputs: ActionInputs, ctx: RunContext, wd: string, notes: string[]): Promise<Terms> {
  const { stages } = deps
  const configRel = inputs.config
  const configPath = configRel === undefined ? null : resolve(wd, configRel)
  const prFile = configPath === null ? null : await stages.loadConfigFile(configPath)
  // An A/B job is a gate too: a PR must not loosen the tolerances it is judged by.
  const fromBase = (inputs.mode === 'gate' || inputs.mode === 'check' || inputs.mode === 'ab') && ctx.base !== null
  let file: ConfigFile | null = prFile
  let baseFile: ConfigFile | null = null
  let rev: string | null = null
  let baseLabel: string | null = null
  if (fromBase && ctx.base !== null) {
    rev = await resolveBaseRev(deps.git, wd, ctx.base)
    baseLabel = `${ctx.base.ref} (${rev.startsWith('refs/') ? rev : rev.slice(0, 12)})`
    const baseText = configPath === null ? null : await showAtRev(deps.git, wd, rev, relative(wd, configPath))
    baseFile = baseText === null ? null : stages.parseConfigText(baseText, `${configRel} on ${baseLabel}`)
    file = withBaseTerms(prFile, baseFile)
  }
  const cfg = stages.resolveConfig({ file, filePath: configPath, flags: runFlags(inputs, wd, file?.sweeps ? Object.keys(file.sweeps) : null), env: deps.env })
  const baselineRel = baselinePathFor(inputs, cfg.sweepName)
  const baselineAbs = resolve(wd, baselineRel)
  const changed = fromBase ? termDifferences(prFile, baseFile) : []
  if (fromBase && canonical(prFile?.server?.env ?? []) !== canonical(baseFile?.server?.env ?? [])) changed.push('server.env')
  let baseline: Baseline | null
  if (rev !== null && baseLabel !== null) {
    const text = await showAtRev(deps.git, wd, rev, relative(wd, baselineAbs))
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
  const notice = termsNotice(changed, baseLabel ?? 'the base branch')
  if (notice !== null) {
    notes.push(notice.message)
    deps.core.warning(notice.message, { title: notice.title })
  }
  return { cfg, baselineRel, baselineAbs, baseline, baseLabel, file, filePath: configPath }
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
