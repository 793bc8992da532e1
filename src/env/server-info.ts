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
 * (`"tensorrt_llm"`). Recorded as the engine says it.
 */
const ENGINES_BY_OWNER = new Set(['vllm', 'sglang', 'llamacpp', 'tensorrt_llm'])

const str = (v: unknown): string | null => (typeof v === 'string' && v.trim() !== '' ? v.trim() : null)

/** Engine name/version and model id/revision/root of the server at `root`; 'unknown' for what it does not say. */
export async function queryServerInfo(
  fetchJson: FetchJsonFn,
  root: string,
  model: string | null,
): Promise<{ engine: EnvRecord['engine']; model: EnvRecord['model'] }> {
  const [version, models] = await Promise.all([fetchJson(`${root}/version`), fetchJson(`${root}/v1/models`)])
  const v = version && typeof version === 'object' ? (version as Record<string, unknown>) : {}
  const cards = modelCards(models) ?? []
  const card = (model !== null ? cards.find((c) => c.id === model) : cards[0]) ?? null

  const owner = str(card?.owned_by)?.toLowerCase() ?? null
  const engineName = str(v.engine) ?? (owner && ENGINES_BY_OWNER.has(owner) ? owner : null)
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
