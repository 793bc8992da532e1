/**
 * Engine and model identity from the server's own endpoints: `GET /version`
 * (vLLM answers {version}; servegate's simulator adds {engine}) and
 * `GET /v1/models`. Only what an endpoint states is recorded.
 */
import type { EnvRecord } from '../types.js'
import { modelCards } from '../client/endpoints.js'
import type { FetchJsonFn } from '../client/http.js'

/**
 * Engines whose /v1/models `owned_by` names the engine itself, so it is evidence, not a guess:
 * vLLM's and SGLang's model cards (`owned_by: "vllm"` / `"sglang"` in their OpenAI protocol
 * modules), llama.cpp's llama-server (`"llamacpp"`) and TensorRT-LLM's trtllm-serve
 * (`"tensorrt_llm"`). Recorded as the engine says it. Dynamo's frontend says `"nvidia"`
 * (`list_models_openai` in its `lib/llm/src/http/service/openai.rs`), as NIM and many gateways do:
 * the vendor, not the engine, so it is not read.
 */
const ENGINES_BY_OWNER = new Set(['vllm', 'sglang', 'llamacpp', 'tensorrt_llm'])

/**
 * Metric families only one engine exposes, as a Prometheus text names them: where neither
 * `/version` nor `owned_by` names the engine, the metrics it serves do. Dynamo's frontend is known
 * this way only (`dynamo_frontend_*`). Recorded under the names `owned_by` uses.
 */
const ENGINES_BY_METRIC_PREFIX: ReadonlyArray<[prefix: string, engine: string]> = [
  ['vllm:', 'vllm'],
  ['sglang:', 'sglang'],
  ['trtllm_', 'tensorrt_llm'],
  ['llamacpp:', 'llamacpp'],
  ['dynamo_frontend_', 'dynamo'],
]

/** The engine a Prometheus text's samples name, where exactly one engine's families appear; else null. */
export function engineFromMetrics(text: string | null): string | null {
  if (text === null) return null
  const seen = new Set<string>()
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue
    for (const [prefix, engine] of ENGINES_BY_METRIC_PREFIX) if (line.startsWith(prefix)) seen.add(engine)
  }
  // A front that re-exports another engine's metrics beside its own (a gateway) names no one engine.
  return seen.size === 1 ? [...seen][0]! : null
}

const str = (v: unknown): string | null => (typeof v === 'string' && v.trim() !== '' ? v.trim() : null)

/**
 * Engine name/version and model id/revision/root of the server at `root`; 'unknown' for what it does
 * not say. `scrape` reads its Prometheus text (null where it has none), for an engine named only there.
 */
export async function queryServerInfo(
  fetchJson: FetchJsonFn,
  root: string,
  model: string | null,
  scrape: () => Promise<string | null> = async () => null,
): Promise<{ engine: EnvRecord['engine']; model: EnvRecord['model'] }> {
  const [version, models, metrics] = await Promise.all([fetchJson(`${root}/version`), fetchJson(`${root}/v1/models`), scrape().catch(() => null)])
  const v = version && typeof version === 'object' ? (version as Record<string, unknown>) : {}
  const cards = modelCards(models) ?? []
  const card = (model !== null ? cards.find((c) => c.id === model) : cards[0]) ?? null

  const owner = str(card?.owned_by)?.toLowerCase() ?? null
  const engineName = str(v.engine) ?? (owner && ENGINES_BY_OWNER.has(owner) ? owner : null) ?? engineFromMetrics(metrics)
  const rootPath = str(card?.root)
  return {
    engine: { name: engineName ?? 'unknown', version: str(v.version) ?? 'unknown' },
    model: {
      id: str(card?.id) ?? 'unknown',
      revision: str(card?.revision) ?? str(v.model_revision) ?? revisionFromPath(rootPath) ?? 'unknown',
      root: rootPath ?? 'unknown',
    },
  }
}

/** A Hugging Face cache path names its commit: `…/snapshots/<40 hex>/`. */
export function revisionFromPath(path: string | null): string | null {
  if (!path) return null
  return /\/snapshots\/([0-9a-f]{40})(?:\/|$)/.exec(path)?.[1] ?? null
}
