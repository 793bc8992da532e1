import { UsageError } from '../errors.js'
import type { ResolvedConfig } from '../config/resolve.js'
import type { EnvRecord, PointResult, ResultFile } from '../types.js'
import { rateLabel } from '../plan/plan.js'

/** Stable identity of one planned run, used to skip finished runs on --resume. */
export function planKey(inputLen: number, outputLen: number, concurrency: number, repeat: number): string {
  return `${inputLen}x${outputLen}@c${concurrency}#r${repeat}`
}

/** planKey of a measured run of a point: an open-loop point is identified by its rate (`4096x512@rateinf#r1`). */
export function measuredRunKey(p: Pick<PointResult, 'input_len' | 'output_len' | 'concurrency' | 'request_rate'>, repeat: number): string {
  return p.request_rate === undefined
    ? planKey(p.input_len, p.output_len, p.concurrency, repeat)
    : `${p.input_len}x${p.output_len}@rate${p.request_rate}#r${repeat}`
}

/** What the server is now, as far as resuming needs to know (absent: not checked). */
export interface ResumeNow {
  /** The model the sweep will request (after preflight). */
  model?: string
  /** How prompts get their length now (a file measured with calibrated chat prompts cannot take uncalibrated ones). */
  promptCalibration?: string
  /** The environment as collected now. */
  env?: Pick<EnvRecord, 'engine' | 'model' | 'gpu' | 'container_digest' | 'server_host'>
}

/**
 * Refuse to resume into a result measured with different settings, or on a
 * different engine, model revision, GPU or driver: mixing two configurations
 * in one file would produce a curve nobody measured. The sweep may grow
 * (more shapes, concurrencies or repeats); it may not change what a finished
 * run measured.
 */
export function checkResumable(result: ResultFile, cfg: ResolvedConfig, path: string, now: ResumeNow = {}): void {
  const problems: string[] = []
  const t = result.target
  if (t.metric !== cfg.target.metric || t.percentile !== cfg.target.percentile || t.threshold_ms !== cfg.target.thresholdMs) {
    problems.push(
      `target ${t.metric}:p${t.percentile}:${t.threshold_ms} in the file, ${cfg.target.metric}:p${cfg.target.percentile}:${cfg.target.thresholdMs} now`,
    )
  }
  const c = result.config as Record<string, unknown>
  const same = (key: string, inFile: unknown, current: unknown): void => {
    if (inFile !== undefined && JSON.stringify(inFile) !== JSON.stringify(current)) {
      problems.push(`${key} ${JSON.stringify(inFile)} in the file, ${JSON.stringify(current)} now`)
    }
  }
  const server = (c.server ?? {}) as Record<string, unknown>
  same('api', server.api, cfg.server.api)
  same('prompts_per_concurrency', c.prompts_per_concurrency, cfg.promptsPerConcurrency)
  // The load pattern is what every run measured: closed and open loop, or two arrival processes, never mix in one file.
  same('load', c.load ?? 'closed', cfg.openLoop ? 'open' : 'closed')
  if (cfg.openLoop) {
    same('burstiness', c.burstiness, cfg.openLoop.burstiness)
    same('max_concurrency', c.max_concurrency, cfg.openLoop.maxConcurrency)
    same('num_prompts', c.num_prompts, cfg.openLoop.numPrompts)
  }
  // Warmup decides how warm the engine is when measuring starts: part of what a run measured.
  same('warmup', c.warmup, cfg.warmup)
  // An unpinned seed is not a setting: the resumed sweep keeps the file's seed (see runSweep).
  if (cfg.seedPinned === true) same('seed', c.seed, cfg.seed)
  if (now.model !== undefined) same('model', c.model, now.model)
  if (now.promptCalibration !== undefined) same('prompt_calibration', c.prompt_calibration, now.promptCalibration)
  if (now.env !== undefined) {
    const e = result.env
    same('engine', `${e.engine.name} ${e.engine.version}`, `${now.env.engine.name} ${now.env.engine.version}`)
    same('model revision', e.model.revision, now.env.model.revision)
    same('GPUs', e.gpu.names, now.env.gpu.names)
    same('GPU driver', e.gpu.driver_version, now.env.gpu.driver_version)
    // One curve, one serving machine: a sweep resumed on another box would mix two machines' runs.
    const was = e.server_host
    const is = now.env.server_host
    if (was !== undefined && is !== undefined) {
      same('serving machine (host name)', was.hostname, is.hostname)
      same('serving machine (machine id hash)', was.machine_id_sha256, is.machine_id_sha256)
    }
    // A digest is often given only on some invocations: compare it only when both are known.
    if (e.container_digest !== 'unknown' && now.env.container_digest !== 'unknown') same('container digest', e.container_digest, now.env.container_digest)
  }
  const shapes = new Set(cfg.shapes.map((s) => `${s.inputLen}x${s.outputLen}`))
  const rates = new Set((cfg.openLoop?.rates ?? []).map((r) => String(rateLabel(r))))
  for (const p of result.points) {
    const planned = p.request_rate === undefined ? cfg.openLoop == null && cfg.concurrency.includes(p.concurrency) : rates.has(String(p.request_rate))
    if (!shapes.has(`${p.input_len}x${p.output_len}`) || !planned) {
      problems.push(
        `point ${p.input_len}x${p.output_len} ${p.request_rate === undefined ? `at C=${p.concurrency}` : `at rate ${p.request_rate}`} is not in the current sweep`,
      )
    }
    const extra = p.runs.filter((r) => r.repeat > cfg.repeats).map((r) => r.repeat)
    if (extra.length > 0) {
      problems.push(`point ${p.input_len}x${p.output_len} at C=${p.concurrency} has repeat ${extra.join(', ')} in the file, only ${cfg.repeats} repeat(s) now`)
    }
  }
  if (problems.length > 0) {
    throw new UsageError(
      `Cannot resume ${path}: it was measured with other settings:\n  ${problems.join('\n  ')}`,
      'Resume with the same flags, config and server, or choose another --out.',
    )
  }
}
