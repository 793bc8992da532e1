import { UsageError } from '../errors.js'
import type { ResolvedConfig } from '../config/resolve.js'
import type { ResultFile } from '../types.js'

/** Stable identity of one planned run, used to skip finished runs on --resume. */
export function planKey(inputLen: number, outputLen: number, concurrency: number, repeat: number): string {
  return `${inputLen}x${outputLen}@c${concurrency}#r${repeat}`
}

/**
 * Refuse to resume into a result measured with different settings: mixing
 * two configurations in one file would produce a curve nobody measured.
 */
export function checkResumable(result: ResultFile, cfg: ResolvedConfig, path: string): void {
  const problems: string[] = []
  const t = result.target
  if (t.metric !== cfg.target.metric || t.percentile !== cfg.target.percentile || t.threshold_ms !== cfg.target.thresholdMs) {
    problems.push(`target ${t.metric}:p${t.percentile}:${t.threshold_ms} in the file, ${cfg.target.metric}:p${cfg.target.percentile}:${cfg.target.thresholdMs} now`)
  }
  const c = result.config as Record<string, unknown>
  const same = (key: string, now: unknown): void => {
    if (key in c && JSON.stringify(c[key]) !== JSON.stringify(now)) problems.push(`${key} ${JSON.stringify(c[key])} in the file, ${JSON.stringify(now)} now`)
  }
  const server = (c.server ?? {}) as Record<string, unknown>
  if ('api' in server && server.api !== cfg.server.api) problems.push(`api ${String(server.api)} in the file, ${cfg.server.api} now`)
  same('prompts_per_concurrency', cfg.promptsPerConcurrency)
  same('seed', cfg.seed)
  const shapes = new Set(cfg.shapes.map((s) => `${s.inputLen}x${s.outputLen}`))
  for (const p of result.points) {
    if (!shapes.has(`${p.input_len}x${p.output_len}`) || !cfg.concurrency.includes(p.concurrency)) {
      problems.push(`point ${p.input_len}x${p.output_len} at C=${p.concurrency} is not in the current sweep`)
    }
  }
  if (problems.length > 0) {
    throw new UsageError(
      `Cannot resume ${path}: it was measured with other settings:\n  ${problems.join('\n  ')}`,
      'Resume with the same flags and config, or choose another --out.',
    )
  }
}
