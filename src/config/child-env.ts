/**
 * The environment of every command servegate starts for an engine: the serve
 * command (`server.command`, `--serve`), its stop command, the reference
 * command (`gate.reference_command`) and both sides of an A/B run. Those
 * commands come from a config a pull request may edit, so they get an
 * allow-list, never the job's whole environment: the runner's tokens
 * (ACTIONS_RUNTIME_TOKEN, GITHUB_TOKEN, the Action's inputs) and the API key
 * servegate reads stay with servegate. A secret the engine does need (a
 * Hugging Face token, the key it should demand) reaches it only when the
 * config names it in `server.env`, which the Action reads from the base branch.
 *
 * This is the one list the docs cite (docs/config.md "The engine's environment").
 */
import { isSecretName } from '../util/redact.js'

/** Variables passed by exact name: what a shell, a locale and the model hub need. */
export const CHILD_ENV_NAMES: readonly string[] = [
  'PATH',
  'HOME',
  'USER',
  'LOGNAME',
  'SHELL',
  'LANG',
  'LANGUAGE',
  'TZ',
  'TMPDIR',
  'HF_HOME',
  'HF_HUB_CACHE',
  'HF_HUB_OFFLINE',
  'HF_DATASETS_OFFLINE',
  'HF_HUB_ENABLE_HF_TRANSFER',
  'TRANSFORMERS_OFFLINE',
  'TRANSFORMERS_CACHE',
  'XDG_CACHE_HOME',
  'PYTORCH_CUDA_ALLOC_CONF',
  'OMP_NUM_THREADS',
]

/** Variables passed by prefix: locale categories, the GPU stack, and the engines' own settings. */
export const CHILD_ENV_PREFIXES: readonly string[] = ['LC_', 'CUDA_', 'NVIDIA_', 'NCCL_', 'VLLM_', 'SGLANG_']

/**
 * Prefixes `server.env` may not name: the runner's own variables (GITHUB_TOKEN,
 * ACTIONS_RUNTIME_TOKEN, ACTIONS_ID_TOKEN_REQUEST_*, the Action's inputs INPUT_*).
 */
const REFUSED_ENV_PREFIXES: readonly string[] = ['GITHUB_', 'ACTIONS_', 'INPUT_', 'RUNNER_']

/**
 * Whether the allow-list passes `name`: listed by exact name or prefix, and no word of the
 * name is a secret word (VLLM_API_KEY, NCCL_..._TOKEN stay out even though a prefix matches).
 */
export function allowedByDefault(name: string): boolean {
  if (isSecretName(name)) return false
  return CHILD_ENV_NAMES.includes(name) || CHILD_ENV_PREFIXES.some((p) => name.startsWith(p))
}

/** The refused prefix `name` starts with, or null. */
export function refusedEnvPrefix(name: string): string | null {
  return REFUSED_ENV_PREFIXES.find((p) => name.toUpperCase().startsWith(p)) ?? null
}

/**
 * The environment for an engine command: the allow-listed variables of `parent`, the ones
 * `server.env` names (`pass`), then `extra` on top (what servegate sets itself for a side,
 * e.g. CUDA_VISIBLE_DEVICES). A refused name in `pass` is never passed, whatever the caller.
 */
export function childEnv(
  parent: Readonly<Record<string, string | undefined>>,
  pass: readonly string[] = [],
  extra: Readonly<Record<string, string>> = {},
): Record<string, string> {
  const out: Record<string, string> = {}
  for (const [name, value] of Object.entries(parent)) {
    if (value === undefined) continue
    if (allowedByDefault(name) || (pass.includes(name) && refusedEnvPrefix(name) === null)) out[name] = value
  }
  return { ...out, ...extra }
}

/**
 * What servegate sets for a side given its own GPUs (`servegate ab --a-gpus 0,1`):
 * CUDA_VISIBLE_DEVICES, on top of the allow-list (it replaces the job's own value, which the
 * CUDA_ prefix would pass). An engine in a container sees it only when the command forwards
 * it (`docker run -e CUDA_VISIBLE_DEVICES …`, or `--gpus "device=$CUDA_VISIBLE_DEVICES"`).
 */
export function gpuEnv(gpus: readonly string[] | null | undefined): Record<string, string> {
  return gpus === null || gpus === undefined ? {} : { CUDA_VISIBLE_DEVICES: gpus.join(',') }
}
