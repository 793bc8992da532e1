/** The environment record of a result: engine, model, GPU, container, harness, host, times, definitions. */
import type { EnvRecord } from '../types.js'
import { DEFINITIONS } from './definitions.js'
import { createExec, type ExecFn } from './exec.js'
import { createFetchJson, type FetchJsonFn } from '../client/http.js'
import { scrapeMetrics } from '../client/endpoints.js'
import { findHarnessRoot, harnessGitCommit, harnessVersion } from './harness.js'
import { localMachine, serverHostOf, type LocalMachine } from './local-host.js'
import { queryGpuInventory, queryGpuUuids, unknownGpuInventory } from './nvidia-smi.js'
import { queryServerInfo } from './server-info.js'

export interface EnvDeps {
  /** Server root (no trailing `/v1`). */
  baseUrl: string
  /** The model benchmarked; null: the first of /v1/models. */
  model: string | null
  containerDigest: string | null
  serveCommand: string | null
  /** ISO time the sweep started. */
  startedAt: string
  /** ISO time it finished; absent: 'unknown' (set it later with withFinishedAt). */
  finishedAt?: string | null
  fetchJson: FetchJsonFn
  /** The server's Prometheus text, or null (engine detection from its metric families); absent: not read. */
  scrapeMetrics?: () => Promise<string | null>
  exec: ExecFn
  /** servegate's package directory; default: found from this module. */
  harnessRoot?: string | null
  /** Overrides for tests; default: this host. */
  host?: EnvRecord['host']
  /** This host's identity (tests); default: read from this host (env/local-host.ts). */
  machine?: LocalMachine
  /** Whether the server runs on this host, so that its GPUs are the ones nvidia-smi sees and it is this machine (default true). */
  gpuOnThisHost?: boolean
  /** GPUs serving the model as the user declared them (`--gpus`, `server.gpus`); null or absent: not declared. */
  declaredGpus?: number | null
  /** Where a disagreement between the declared count and nvidia-smi's is said. */
  warn?: (line: string) => void
  nodeVersion?: string
}

/** Collects everything known about where a result is measured; whatever cannot be found is 'unknown'. */
export async function collectEnv(deps: EnvDeps): Promise<EnvRecord> {
  const root = deps.harnessRoot === undefined ? findHarnessRoot() : deps.harnessRoot
  const onThisHost = deps.gpuOnThisHost !== false
  const [server, gpu, uuids, gitCommit] = await Promise.all([
    queryServerInfo(deps.fetchJson, deps.baseUrl, deps.model, deps.scrapeMetrics),
    onThisHost ? queryGpuInventory(deps.exec) : Promise.resolve(unknownGpuInventory()),
    onThisHost ? queryGpuUuids(deps.exec) : Promise.resolve([]),
    harnessGitCommit(deps.exec, root),
  ])
  const machine = deps.machine ?? localMachine()
  const counted = withDeclaredGpus(gpu, deps.declaredGpus ?? null)
  if (counted.warning !== null) deps.warn?.(`Warning: ${counted.warning}`)
  return {
    engine: server.engine,
    model: server.model,
    gpu: counted.gpu,
    container_digest: deps.containerDigest ?? 'unknown',
    serve_command: deps.serveCommand ?? 'unknown',
    harness: { version: harnessVersion(root), git_commit: gitCommit, node_version: deps.nodeVersion ?? process.version },
    // The load's host apart from the server's: load from other hosts (shards) is no host change.
    host: deps.host ?? { hostname: machine.hostname, platform: machine.platform, cpus: machine.cpus },
    server_host: serverHostOf(onThisHost, machine, uuids),
    base_url: deps.baseUrl,
    started_at: deps.startedAt,
    finished_at: deps.finishedAt ?? 'unknown',
    definitions: { ...DEFINITIONS },
  }
}

/** The same record with its finish time set (ISO). */
export function withFinishedAt(env: EnvRecord, finishedAt: string): EnvRecord {
  return { ...env, finished_at: finishedAt }
}

/** EnvDeps over the real world: global fetch (with the API key) and child_process with this process's PATH. */
export function defaultEnvDeps(input: {
  root: string
  model: string | null
  apiKey: string | null
  containerDigest: string | null
  serveCommand: string | null
  startedAt: string
}): EnvDeps {
  return {
    baseUrl: input.root,
    model: input.model,
    containerDigest: input.containerDigest,
    serveCommand: input.serveCommand,
    startedAt: input.startedAt,
    fetchJson: createFetchJson({ apiKey: input.apiKey }),
    scrapeMetrics: () => scrapeMetrics(input.root, input.apiKey),
    exec: createExec(),
  }
}

/**
 * The GPU count recorded: the declared one (`--gpus N`) when given, since it names the GPUs serving
 * the model, while nvidia-smi counts every GPU of the host (8 on a box where a TP=2 server uses 2);
 * else nvidia-smi's. When both are known and differ, the declared count is kept and a warning says so.
 */
export function withDeclaredGpus<G extends { count: number | 'unknown' }>(gpu: G, declared: number | null): { gpu: G; warning: string | null } {
  if (declared === null) return { gpu, warning: null }
  const seen = gpu.count
  const warning =
    typeof seen === 'number' && seen !== declared
      ? `--gpus ${declared} differs from the ${seen} GPU${seen === 1 ? '' : 's'} nvidia-smi sees on this host: per-GPU figures divide by ${declared}, the GPUs you declared as serving the model`
      : null
  return { gpu: { ...gpu, count: declared }, warning }
}
