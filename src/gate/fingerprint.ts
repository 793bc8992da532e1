/**
 * The measurement fingerprint of a result: every setting that changes what a
 * figure means, including the request deadline (a shorter one drops the
 * slowest requests as failures), the load threads, and servegate's own
 * version line. Two results with different fingerprints measured different
 * things, so the gate calls them `not_comparable` instead of judging speed.
 * Tokens per chunk is the exception: it is what the server did (speculative
 * decoding streams several tokens per chunk), so a change there switches the
 * ITL rows to ITL per token instead of blocking the comparison. Pure.
 */
import type { Fingerprint, ResultFile } from '../types.js'
import { pointScope, shapeLabel } from './metric-keys.js'

export type { Fingerprint } from '../types.js'

const obj = (x: unknown): Record<string, unknown> | null => (typeof x === 'object' && x !== null && !Array.isArray(x) ? (x as Record<string, unknown>) : null)

/** Tokens per chunk of a point, from its runs' server (else client) token counts over their content chunks, to 0.1. */
function tokensPerChunk(runs: ResultFile['points'][number]['runs']): number | null {
  let tokens = 0
  let chunks = 0
  for (const r of runs) {
    const c = r.tokens.client_chunks
    if (r.completed <= 0 || c === null || c <= 0) continue
    tokens += r.tokens.server_usage ?? c
    chunks += c
  }
  return chunks > 0 ? Math.round((tokens / chunks) * 10) / 10 : null
}

/**
 * The fingerprint of a result, from its recorded config (the sweep planned) and its
 * runs (tokens per chunk). Settings an older result did not record are 'unknown'.
 */
export function fingerprintOf(result: ResultFile): Fingerprint {
  const cfg = result.config
  const server = obj(cfg['server'])
  const planned = Array.isArray(cfg['shapes'])
    ? (cfg['shapes'] as unknown[]).flatMap((s) => {
        const o = obj(s)
        return o && typeof o['input_len'] === 'number' && typeof o['output_len'] === 'number' ? [shapeLabel(o['input_len'], o['output_len'])] : []
      })
    : []
  // The sweep as planned, not as measured: an interrupted sweep is incomplete, not another sweep.
  // A result that did not record its plan has [] here, which compares with nothing.
  const shapes = [...new Set(planned)].sort()
  const conc = Array.isArray(cfg['concurrency']) && cfg['concurrency'].every((c) => typeof c === 'number') ? (cfg['concurrency'] as number[]) : []
  const tpc: Record<string, number | null> = {}
  for (const p of [...result.points].sort((a, b) => a.input_len - b.input_len || a.output_len - b.output_len || a.concurrency - b.concurrency)) {
    tpc[pointScope(p)] = tokensPerChunk(p.runs)
  }
  const text = (x: unknown): string => (typeof x === 'string' && x !== '' ? x : 'unknown')
  const t = result.target
  return {
    api: text(server?.['api']),
    model: typeof cfg['model'] === 'string' ? cfg['model'] : text(result.env.model.id),
    shapes,
    concurrency: [...new Set(conc)].sort((a, b) => a - b),
    prompts_per_concurrency: typeof cfg['prompts_per_concurrency'] === 'number' ? cfg['prompts_per_concurrency'] : 'unknown',
    warmup: typeof cfg['warmup'] === 'number' || cfg['warmup'] === 'auto' ? cfg['warmup'] : 'unknown',
    target: `${t.metric} p${t.percentile} ≤ ${t.threshold_ms} ms`,
    // servegate sends ignore_eos: true on every request (plan/prompts.ts); a result may record otherwise.
    ignore_eos: typeof cfg['ignore_eos'] === 'boolean' ? cfg['ignore_eos'] : true,
    tokens_per_chunk: tpc,
    // Chat prompts of input_len words carry the chat template on top; calibrated ones are exactly input_len tokens.
    prompt_calibration: text(cfg['prompt_calibration']),
    load: loadPattern(cfg),
    request_extras: requestExtras(server),
    tokenizer: tokenizerOf(cfg, server),
    ...recordedSince01(result),
  }
}

/**
 * Whose tokenizer a chat sweep's prompts were sized with: the client's own (name and hash), or
 * `server` (its /tokenize, or none: the prompt calibration says which). Completions prompts are
 * exact token ids, so no client tokenizer enters them: `server` too.
 */
function tokenizerOf(cfg: Record<string, unknown>, server: Record<string, unknown> | null): string {
  if (server?.['api'] !== 'chat') return 'server'
  const t = obj(cfg['tokenizer'])
  if (t !== null && typeof t['name'] === 'string' && typeof t['sha256'] === 'string') return `${t['name']} sha256:${t['sha256']}`
  // Whether the server's /tokenize could size them is the prompt calibration's field.
  return 'server'
}

/**
 * The fields fingerprints gained after 0.1.0's first baselines: the request deadline, the load
 * threads and servegate's version line, from the recorded config and harness ('unknown' where
 * a result did not record them).
 */
function recordedSince01(result: ResultFile): Required<Pick<Fingerprint, 'request_timeout' | 'workers' | 'harness'>> {
  const cfg = result.config
  return { request_timeout: deadline(cfg['request_timeout_s']), workers: workerSetting(cfg['workers']), harness: versionLine(result.harness.version) }
}

/** `600 s`, or each shape's derived deadline `128x32 128.128 s, 64x16 64.064 s`. */
function deadline(x: unknown): string {
  if (typeof x === 'number' && Number.isFinite(x)) return `${x} s`
  const o = obj(x)
  if (o === null) return 'unknown'
  const per = Object.entries(o).sort(([a], [b]) => a.localeCompare(b))
  return per.length > 0 && per.every(([, v]) => typeof v === 'number') ? per.map(([k, v]) => `${k} ${String(v)} s`).join(', ') : 'unknown'
}

const workerSetting = (x: unknown): string => (x === 'auto' || (typeof x === 'number' && Number.isInteger(x) && x >= 0) ? String(x) : 'unknown')

/**
 * The part of a version that may change what servegate measures: `0.2` for 0.2.x while the
 * major is 0 (every minor may), else the major (`1` for 1.4.2). A patch release measures alike.
 */
export function versionLine(version: string): string {
  const m = /^v?(\d+)\.(\d+)(?:\.|$)/.exec(version.trim())
  if (m === null) return version.trim() === '' ? 'unknown' : version.trim()
  return m[1] === '0' ? `0.${m[2]}` : m[1]!
}

/**
 * What every request carried beyond the methodology's body, as one comparable string: `none`, or
 * `headers x-route, x-tenant; extra_body {"min_tokens":8}` (header values are never recorded;
 * the body's keys sorted, so the same fields in another order read alike).
 */
function requestExtras(server: Record<string, unknown> | null): string {
  const headers = obj(server?.['headers'])
  const body = obj(server?.['extra_body'])
  const parts: string[] = []
  if (headers !== null && Object.keys(headers).length > 0) parts.push(`headers ${Object.keys(headers).sort().join(', ')}`)
  if (body !== null && Object.keys(body).length > 0) parts.push(`extra_body ${canonicalJson(body)}`)
  return parts.length > 0 ? parts.join('; ') : 'none'
}

/** JSON with every object's keys sorted. */
function canonicalJson(x: unknown): string {
  if (Array.isArray(x)) return `[${x.map(canonicalJson).join(',')}]`
  if (x !== null && typeof x === 'object') {
    const o = x as Record<string, unknown>
    return `{${Object.keys(o)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonicalJson(o[k])}`)
      .join(',')}}`
  }
  return JSON.stringify(x) ?? 'null'
}

/**
 * How load was offered, as one comparable string: `closed` (results before open loop
 * existed are closed), or `open: rates 5, 10, 20/s, burstiness 1, max concurrency none,
 * 1000 prompts`. Closed- and open-loop results measure different things.
 */
function loadPattern(cfg: Record<string, unknown>): string {
  if (cfg['load'] !== 'open') return 'closed'
  const rates = Array.isArray(cfg['request_rates']) ? (cfg['request_rates'] as unknown[]).map(String).join(', ') : 'unknown'
  const cap = typeof cfg['max_concurrency'] === 'number' ? String(cfg['max_concurrency']) : 'none'
  return `open: rates ${rates}/s, burstiness ${String(cfg['burstiness'] ?? 'unknown')}, max concurrency ${cap}, ${String(cfg['num_prompts'] ?? 'unknown')} prompts`
}

/**
 * The stored fingerprint of a result, or the one derived from its contents for results written
 * before it was stored; fields a stored one predates are derived from what the result recorded.
 */
export function resultFingerprint(result: ResultFile): Fingerprint {
  return result.fingerprint ? { ...recordedSince01(result), ...result.fingerprint } : fingerprintOf(result)
}

export interface FingerprintDiff {
  field: string
  baseline: string
  candidate: string
}

const FIELDS: Array<[string, (f: Fingerprint) => string]> = [
  ['api', (f) => f.api],
  ['model', (f) => f.model],
  ['shapes', (f) => f.shapes.join(', ')],
  ['concurrency', (f) => f.concurrency.join(', ')],
  ['prompts per concurrency', (f) => String(f.prompts_per_concurrency)],
  ['warmup', (f) => String(f.warmup)],
  ['target', (f) => f.target],
  ['ignore_eos', (f) => String(f.ignore_eos)],
  ['prompt calibration', (f) => f.prompt_calibration ?? 'unknown'],
  // Absent in stored fingerprints written before open loop: those were closed loop.
  ['load', (f) => f.load ?? 'closed'],
  // Absent in stored fingerprints written before requests could carry extras: those carried none.
  ['request extras', (f) => f.request_extras ?? 'none'],
  // Absent in stored fingerprints written before a client tokenizer existed: unknown, never a difference.
  ['tokenizer', (f) => f.tokenizer ?? 'unknown'],
  // Absent in fingerprints stored before they were recorded: nothing says they matched, so the
  // difference stands (a baseline refreshed since records them).
  ['request deadline', (f) => f.request_timeout ?? NOT_RECORDED],
  ['workers', (f) => f.workers ?? NOT_RECORDED],
  ['servegate version', (f) => f.harness ?? NOT_RECORDED],
]

/** What a fingerprint stored before a field existed says of it. */
export const NOT_RECORDED = 'not recorded (a fingerprint stored before servegate recorded it: refresh the baseline)'

/**
 * Measurement settings that differ (tokens per chunk excluded: see the file comment).
 * A setting unknown on either side (an older file) cannot prove a difference and is skipped.
 */
export function diffFingerprint(baseline: Fingerprint, candidate: Fingerprint): FingerprintDiff[] {
  const out: FingerprintDiff[] = []
  for (const [field, get] of FIELDS) {
    const b = get(baseline)
    const c = get(candidate)
    if (b === c || b === 'unknown' || c === 'unknown' || b === '' || c === '') continue
    out.push({ field, baseline: b, candidate: c })
  }
  return out
}

/** Points whose tokens per chunk (to 0.1) differ between the two fingerprints, with both values. */
export function tokensPerChunkChanges(baseline: Fingerprint | undefined, candidate: Fingerprint): Map<string, { baseline: number; candidate: number }> {
  const out = new Map<string, { baseline: number; candidate: number }>()
  if (!baseline) return out
  for (const [scope, c] of Object.entries(candidate.tokens_per_chunk)) {
    const b = baseline.tokens_per_chunk[scope]
    if (b === undefined || b === null || c === null || b === c) continue
    out.set(scope, { baseline: b, candidate: c })
  }
  return out
}
