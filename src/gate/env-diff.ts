/**
 * What changed in the environment between a baseline and a candidate, who is
 * to blame for each change, and whether the two can be compared at all. Pure.
 *
 * Blame: `host` is what the runner host brings (GPUs, driver, CUDA, GPU clocks,
 * kernel) and no pull request changes; `repository` is what the project under
 * test decides (engine and image, model, serve command, the measurement
 * config); `harness` is servegate itself. A verdict says first when only the
 * host changed, since the pull request cannot be the cause of that.
 */
import type { EnvRecord, Fingerprint } from '../types.js'
import { diffFingerprint } from './fingerprint.js'
import { HOST_NAME_FIELD, IDENTITY_FIELDS, servingPlatform, showsGpus } from './host-identity.js'
import type { EnvBlame, EnvChange } from './types.js'

const UNKNOWN = 'unknown'

/**
 * The GPUs' maximum SM and memory clocks, `GPU0 SM max 1980, memory max 2619 MHz; …`.
 * The recorded clocks also hold the current ones, which move with load and heat on the same
 * host, so only the maxima (set by the board, the driver and application clocks) name a host.
 */
export function maxClocks(clocks: string): string {
  if (clocks === UNKNOWN) return UNKNOWN
  const gpus = clocks.split(/;\s*/).map((one) => {
    const m = /^(\S+) SM (\S+)\/(\S+) MHz, memory (\S+)\/(\S+) MHz/.exec(one.trim())
    return m === null ? one.trim() : `${m[1]} SM max ${m[3]}, memory max ${m[5]} MHz`
  })
  return gpus.join('; ')
}

const FIELDS: Array<[string, EnvBlame, (e: EnvRecord) => string]> = [
  ['GPU', 'host', (e) => gpuNames(e)],
  ['GPU count', 'host', (e) => String(e.gpu.count)],
  ['driver', 'host', (e) => e.gpu.driver_version],
  ['CUDA', 'host', (e) => e.gpu.cuda_version],
  ['GPU clocks', 'host', (e) => maxClocks(e.gpu.clocks)],
  // The serving machine's: `linux x64 6.8.0-45-generic`, the kernel release the last word.
  ['kernel/platform', 'host', (e) => servingPlatform(e)],
  // Which machine served the model (./host-identity.ts): another one is a host change however alike.
  ...IDENTITY_FIELDS.map(([field, get]): [string, EnvBlame, (e: EnvRecord) => string] => [field, 'host', get]),
  ['engine', 'repository', (e) => `${e.engine.name} ${e.engine.version}`],
  ['model', 'repository', (e) => e.model.id],
  ['model revision', 'repository', (e) => e.model.revision],
  ['container digest', 'repository', (e) => e.container_digest],
  ['serve command', 'repository', (e) => e.serve_command],
  ['servegate', 'harness', (e) => e.harness?.version ?? UNKNOWN],
]

function gpuNames(e: EnvRecord): string {
  if (e.gpu.names.length === 0) return UNKNOWN
  // Count identical names so "2 × H100" and "H100, H100" compare equal regardless of order.
  const counts = new Map<string, number>()
  for (const n of e.gpu.names) counts.set(n, (counts.get(n) ?? 0) + 1)
  return [...counts.entries()]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([n, c]) => (c > 1 ? `${c} × ${n}` : n))
    .join(', ')
}

/** A host name as a verdict shows it: whether it is known, not what it is. */
function withheld(name: string, prefix = ''): string {
  return name === UNKNOWN || name === '' ? name : `${prefix}(withheld)`
}

export interface EnvDiff {
  changes: EnvChange[]
  /** Reasons the two environments cannot be compared (different GPU model or count, or a candidate that shows no GPU where the baseline had some); empty if comparable. */
  incomparable: string[]
}

/**
 * Field-by-field differences, each with its blame, and the GPU changes that make a comparison
 * meaningless. With both fingerprints, a change of measurement settings is a `config` change
 * (the repository's servegate config decides them).
 */
export function diffEnv(
  baseline: EnvRecord,
  candidate: EnvRecord,
  fingerprints?: { baseline?: Fingerprint | undefined; candidate?: Fingerprint | undefined },
): EnvDiff {
  const changes: EnvChange[] = []
  const incomparable: string[] = []
  for (const [field, blame, get] of FIELDS) {
    const b = get(baseline)
    const c = get(candidate)
    if (b === c) continue
    // Host names are compared, never shown: verdicts reach comments, which keep a runner's name out (show-host).
    if (field === HOST_NAME_FIELD) changes.push({ field, baseline: withheld(b), candidate: withheld(c, 'another '), blame })
    else changes.push({ field, baseline: b, candidate: c, blame })
    // Two known GPU lists that differ block; a side that saw none blocks only as below (the candidate's).
    if ((field === 'GPU' || field === 'GPU count') && b !== UNKNOWN && c !== UNKNOWN) {
      incomparable.push(`${field} differs: baseline ${b}, candidate ${c}`)
    }
  }
  // GPUs the baseline ran on and a candidate that shows none (nvidia-smi saw nothing, or the server
  // is on another machine): nothing says the candidate ran on such GPUs, or on any.
  if (showsGpus(baseline) && !showsGpus(candidate)) {
    incomparable.push(
      `the baseline ran on GPUs (${gpuNames(baseline) === UNKNOWN ? `${baseline.gpu.count} GPUs` : gpuNames(baseline)}) and the candidate shows none (nvidia-smi saw no GPU, or the server ran on another machine): nothing shows it ran on the same GPUs`,
    )
  }
  const bf = fingerprints?.baseline
  const cf = fingerprints?.candidate
  if (bf !== undefined && cf !== undefined) {
    for (const d of diffFingerprint(bf, cf)) changes.push({ field: `config: ${d.field}`, baseline: d.baseline, candidate: d.candidate, blame: 'repository' })
  }
  return { changes, incomparable }
}

/** A change both sides recorded: an `unknown` or empty side (no nvidia-smi, a remote server) proves nothing. */
export function isKnownChange(c: EnvChange): boolean {
  return c.baseline !== UNKNOWN && c.candidate !== UNKNOWN && c.baseline !== '' && c.candidate !== ''
}

/** `driver 550.54 → 560.28; CUDA 12.4 → 12.6; host name changed` (host names are withheld, see diffEnv). */
export function describeChanges(changes: readonly Pick<EnvChange, 'field' | 'baseline' | 'candidate'>[]): string {
  return changes.map((c) => (c.field === HOST_NAME_FIELD ? `${c.field} changed` : `${c.field} ${c.baseline} → ${c.candidate}`)).join('; ')
}

export interface EnvBlameSummary {
  host: EnvChange[]
  repository: EnvChange[]
  harness: EnvChange[]
  /**
   * One sentence, host first: `driver 570.86 → 575.51 since the baseline; the repository is
   * unchanged`; null when nothing both sides recorded changed.
   */
  headline: string | null
}

/**
 * Sort the known changes by blame and say who changed what. `since` names the other side:
 * `since the baseline`, `since refresh 5`, `between A and B`.
 */
export function blameEnvChanges(changes: readonly EnvChange[], since = 'since the baseline'): EnvBlameSummary {
  const known = changes.filter(isKnownChange)
  const host = known.filter((c) => c.blame === 'host')
  const repository = known.filter((c) => c.blame === 'repository')
  const harness = known.filter((c) => c.blame === 'harness')
  const tail = harness.length > 0 ? `; ${describeChanges(harness)} (the harness)` : ''
  let headline: string | null = null
  if (host.length > 0 && repository.length === 0) headline = `${describeChanges(host)} ${since}; the repository is unchanged${tail}`
  else if (host.length > 0) headline = `the host changed ${since} (${describeChanges(host)}) and so did the repository (${describeChanges(repository)})${tail}`
  else if (repository.length > 0) headline = `the host is unchanged ${since}; the repository changed: ${describeChanges(repository)}${tail}`
  else if (harness.length > 0) headline = `${describeChanges(harness)} ${since} (the harness); the host and the repository are unchanged`
  return { host, repository, harness, headline }
}
