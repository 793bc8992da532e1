/**
 * A servegate result → `vllm bench serve --save-result` files, one per point
 * and repeat, with vLLM's key names and units (latencies in ms, durations in s),
 * so tools that read vLLM's files take servegate runs. Pure: the caller writes.
 * The shape rides along as `isl`/`osl` (what `--metadata isl=N` would write),
 * so `servegate import vllm` labels the points again; figures servegate did
 * not record (std, per-request arrays) are left out, never written as 0.
 */
import type { LatencyStats, ResultFile, RunResult } from '../types.js'

export interface ExportedFile {
  /** File name inside the output directory. */
  name: string
  json: Record<string, unknown>
}

/** `2025-01-02T03:04:05.000Z` → `20250102-030405` (vLLM's `date`); null when not a time. */
function vllmDateOf(iso: string): string | null {
  const m = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})/.exec(iso)
  return m ? `${m[1]}${m[2]}${m[3]}-${m[4]}${m[5]}${m[6]}` : null
}

function latencyKeys(metric: string, s: LatencyStats, out: Record<string, unknown>): void {
  const put = (key: string, v: number | null): void => {
    if (v !== null) out[key] = v
  }
  put(`mean_${metric}_ms`, s.mean)
  put(`median_${metric}_ms`, s.p50)
  put(`p50_${metric}_ms`, s.p50)
  put(`p95_${metric}_ms`, s.p95)
  put(`p99_${metric}_ms`, s.p99)
}

/** One run as vLLM's result JSON. */
function vllmJsonOfRun(result: ResultFile, point: { input_len: number; output_len: number; concurrency: number }, run: RunResult): Record<string, unknown> {
  const server = (result.config['server'] ?? {}) as Record<string, unknown>
  const model = typeof result.config['model'] === 'string' ? result.config['model'] : result.env.model.id
  const out: Record<string, unknown> = {
    date: vllmDateOf(run.finished_at) ?? vllmDateOf(result.env.finished_at),
    backend: server['api'] === 'chat' ? 'openai-chat' : 'openai',
    label: result.source ? `imported from ${result.source.tool}` : 'servegate',
    model_id: model,
    tokenizer_id: model,
    num_prompts: run.num_prompts,
    isl: point.input_len,
    osl: point.output_len,
    request_rate: 'inf',
    burstiness: 1.0,
    max_concurrency: point.concurrency,
    duration: run.duration_s,
    completed: run.completed,
    failed: run.failed,
    total_input_tokens: run.tokens.prompt_server_usage ?? run.tokens.prompt_expected,
    total_output_tokens: run.tokens.server_usage ?? run.tokens.client_chunks,
    request_throughput: run.request_throughput,
    output_throughput: run.output_throughput,
    total_token_throughput: run.total_token_throughput,
  }
  latencyKeys('ttft', run.ttft_ms, out)
  latencyKeys('tpot', run.tpot_ms, out)
  latencyKeys('itl', run.itl_ms, out)
  latencyKeys('e2el', run.e2el_ms, out)
  for (const k of Object.keys(out)) if (out[k] === null) delete out[k]
  return out
}

/** Every run of the result as a vLLM file, named `servegate-IxO-cC-rNNN.json`. */
export function exportVllm(result: ResultFile): ExportedFile[] {
  return result.points.flatMap((p) =>
    p.runs.map((run) => ({
      name: `servegate-${p.input_len}x${p.output_len}-c${p.concurrency}-r${String(run.repeat).padStart(3, '0')}.json`,
      json: vllmJsonOfRun(result, p, run),
    })),
  )
}
