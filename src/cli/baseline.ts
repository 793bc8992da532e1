/** `servegate baseline update RESULT --into FILE`: append a refresh to a stored baseline (creating it if absent). */
import { existsSync } from 'node:fs'
import { basename } from 'node:path'
import type { Command } from 'commander'
import { UsageError } from '../errors.js'
import type { Baseline, GateOptions } from '../gate/types.js'
import { gateOptionsOfConfig } from './compare.js'
import { readBaseline, writeBaseline } from '../store/baseline.js'
import { DEFAULT_MAX_HISTORY, DEFAULT_MAX_NOISE, appendNoise, appendRefresh, resetKeepingNoise } from '../gate/refresh.js'
import { assertWholeSweep, readResultFile } from '../store/result-file.js'
import { assertWritableOutput } from '../store/output-path.js'

export interface BaselineIo {
  print(text: string): void
}

const defaultIo: BaselineIo = { print: (t) => void process.stdout.write(t) }

function positiveInt(flag: string, raw: string): number {
  const n = Number(raw)
  if (!/^\d+$/.test(raw.trim()) || !Number.isInteger(n) || n < 1) throw new UsageError(`${flag} ${JSON.stringify(raw)}: expected a positive integer`)
  return n
}

interface UpdateFlags {
  into: string
  maxHistory?: string
  maxNoise?: string
  name?: string
  commit?: string
  reset?: boolean
  noiseOnly?: boolean
  config?: string
}

function wholeNumber(flag: string, raw: string): number {
  if (!/^\d+$/.test(raw.trim())) throw new UsageError(`${flag} ${JSON.stringify(raw)}: expected a whole number`)
  return Number(raw)
}

/** `b` with the given gate options' tolerances and failed-request count as its stored settings. */
function withGateSettings(b: Baseline, o: Partial<GateOptions>): Baseline {
  const { tolerances: _t, max_failed_requests: _m, ...rest } = b
  void _t
  void _m
  return {
    ...rest,
    ...(o.tolerances ? { tolerances: o.tolerances } : {}),
    ...(o.maxFailedRequests !== undefined && o.maxFailedRequests !== null ? { max_failed_requests: o.maxFailedRequests } : {}),
  }
}

/** Register `servegate baseline update`. */
export function registerBaselineCommand(program: Command, io: BaselineIo = defaultIo): void {
  const baseline = program.command('baseline').description('Manage stored baselines (servegate.baseline/v1)')
  baseline
    .command('update')
    .description('Append RESULT as the newest refresh of the baseline in --into (created when absent), keeping the last N refreshes')
    .argument('<result>', 'result file of a gated sweep (servegate.result/v1)')
    .requiredOption('--into <file>', 'baseline file, e.g. baselines/gate.json')
    .option('--max-history <n>', `refreshes to keep (default ${DEFAULT_MAX_HISTORY})`)
    .option('--name <name>', 'name of a new baseline (default: the file name)')
    .option('--commit <sha>', 'commit of the project measured, recorded with the refresh')
    .option(
      '--reset',
      'start a new history (after an intentional performance change) instead of appending; the old refreshes on this host keep informing the noise',
    )
    .option(
      '--noise-only',
      "keep RESULT in the noise history alone (a start of the base branch's engine, such as the scheduled watch's): it informs the spread, never the centre",
    )
    .option('--max-noise <n>', `starts to keep in the noise history (default ${DEFAULT_MAX_NOISE}; 0 keeps none)`)
    .option('--config <file>', "store this config's gate settings (gate.tolerance_pct, gate.max_failed_requests) instead of those the result recorded")
    .action(async (resultPath: string, opts: UpdateFlags) => {
      const maxHistory = opts.maxHistory === undefined ? DEFAULT_MAX_HISTORY : positiveInt('--max-history', opts.maxHistory)
      const maxNoise = opts.maxNoise === undefined ? DEFAULT_MAX_NOISE : wholeNumber('--max-noise', opts.maxNoise)
      if (opts.noiseOnly && opts.reset) throw new UsageError('--noise-only and --reset: expected one of them (a noise start joins an existing history)')
      assertWritableOutput(opts.into, '--into')
      const result = assertWholeSweep(await readResultFile(resultPath), resultPath)
      const previous = existsSync(opts.into) ? await readBaseline(opts.into) : null
      const existing = opts.reset ? null : previous
      const name = existing?.name ?? opts.name ?? basename(opts.into).replace(/\.json$/i, '')
      const append = { name, maxHistory, maxNoise, source: resultPath, ...(opts.commit === undefined ? {} : { commit: opts.commit }) }
      if (opts.noiseOnly) {
        if (existing === null)
          throw new UsageError(
            `--noise-only: ${opts.into} does not exist; the noise history joins a baseline's refreshes`,
            'Store a refresh first (servegate baseline update RESULT --into FILE).',
          )
        const updated = appendNoise(existing, result, append)
        await writeBaseline(opts.into, updated)
        const n = updated.noise_history?.length ?? 0
        io.print(
          `baseline ${updated.name}: kept a start from ${resultPath} in the noise history (the spread only, not the centre); ${n} start${n === 1 ? '' : 's'} kept (max ${maxNoise}) in ${opts.into}\n`,
        )
        return
      }
      const appended = opts.reset ? resetKeepingNoise(previous, result, append) : appendRefresh(existing, result, append)
      const updated = opts.config === undefined ? appended : withGateSettings(appended, await gateOptionsOfConfig(opts.config))
      await writeBaseline(opts.into, updated)
      const newest = updated.refreshes.at(-1)!
      const noise = updated.noise_history?.length ?? 0
      const lines = [
        `baseline ${updated.name}: ${existing === null ? 'created' : 'appended'} a refresh from ${resultPath}; ${updated.refreshes.length} refresh${updated.refreshes.length === 1 ? '' : 'es'} kept (max ${maxHistory}) in ${opts.into}` +
          (noise > 0 ? `; ${noise} earlier start${noise === 1 ? '' : 's'} in the noise history` : ''),
      ]
      const tol = Object.entries(updated.tolerances ?? {}).map(([k, v]) => `${k} ${Math.round(v * 1000) / 10} %`)
      if (tol.length > 0 || updated.max_failed_requests !== undefined) {
        const parts = [
          ...(tol.length > 0 ? [`tolerances ${tol.join(', ')}`] : []),
          ...(updated.max_failed_requests !== undefined ? [`at most ${updated.max_failed_requests} failed requests per run`] : []),
        ]
        lines.push(`  gate settings stored: ${parts.join('; ')}`)
      }
      if (newest.invalid.length > 0) {
        lines.push(`  left out of the statistics (invalid runs): ${newest.invalid.map((i) => `${i.scope} run ${i.repeat} (${i.codes.join(', ')})`).join('; ')}`)
      }
      io.print(`${lines.join('\n')}\n`)
    })
}
