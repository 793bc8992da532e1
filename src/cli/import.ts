/**
 * `servegate import vllm FILE… --out RESULT`: `vllm bench serve --save-result`
 * files become a servegate result (formats/vllm-import.ts), so `compare`, `report` and
 * `baseline update` work on a team's existing harness before it switches.
 */
import type { Command } from 'commander'
import { DEFAULTS } from '../config/defaults.js'
import { positiveIntFlag, targetFlag, type Problems } from '../config/flags.js'
import { UsageError } from '../errors.js'
import { importVllm } from '../formats/vllm-import.js'
import { parseVllmFile } from '../formats/vllm-file.js'
import { readJsonFile } from '../util/json-file.js'
import { assertWritableOutput } from '../store/output-path.js'
import { writeResultFile } from '../store/result-file.js'
import { HARNESS_VERSION } from '../version.js'

export interface ImportIo {
  /** Where the summary goes (default stdout). */
  print(text: string): void
  /** Where warnings go (default stderr). */
  warn(text: string): void
}

const defaultIo: ImportIo = { print: (t) => void process.stdout.write(t), warn: (t) => void process.stderr.write(t) }

interface ImportFlags {
  out: string
  inputLen?: string
  outputLen?: string
  gpus?: string
  target?: string
}

/** Register `servegate import`. */
export function registerImportCommand(program: Command, io: ImportIo = defaultIo): void {
  const cmd = program.command('import').description("Turn another tool's result files into a servegate result")
  cmd
    .command('vllm')
    .description('Import `vllm bench serve --save-result` JSON files (one per max_concurrency; several at one concurrency are repeats)')
    .argument('<files...>', 'vLLM result JSON files')
    .requiredOption('--out <file>', 'servegate result file to write')
    .option('--input-len <n>', 'label the points with this input length (default: from the files)')
    .option('--output-len <n>', 'label the points with this output length (default: from the files)')
    .option('--gpus <n>', 'GPUs that served the model, for the per-GPU figures (default: unknown)')
    .option('--target <spec>', 'interactivity target metric:pNN:ms (default tpot:p95:50)')
    .action(async (paths: string[], opts: ImportFlags) => {
      const problems: Problems = []
      const inputLen = positiveIntFlag('--input-len', opts.inputLen, problems)
      const outputLen = positiveIntFlag('--output-len', opts.outputLen, problems)
      const gpus = positiveIntFlag('--gpus', opts.gpus, problems)
      const target = targetFlag(opts.target, problems) ?? DEFAULTS.target
      if (problems.length > 0) throw new UsageError(problems.join('; '), 'Run `servegate import vllm --help` for every flag and its format.')
      assertWritableOutput(opts.out, '--out')
      const files = []
      for (const path of paths) files.push(parseVllmFile(await readJsonFile(path), path))
      const { result, warnings } = importVllm(files, {
        ...(inputLen === undefined ? {} : { inputLen }),
        ...(outputLen === undefined ? {} : { outputLen }),
        gpus: gpus ?? null,
        target: { metric: target.metric, percentile: target.percentile, threshold_ms: target.thresholdMs },
        importedAt: new Date().toISOString(),
        harnessVersion: HARNESS_VERSION,
      })
      for (const w of warnings) io.warn(`Warning: ${w}.\n`)
      if (gpus === undefined) io.warn('Warning: GPU count unknown, so no per-GPU figure; give --gpus N to record it.\n')
      await writeResultFile(opts.out, result)
      const runs = result.points.reduce((n, p) => n + p.runs.length, 0)
      io.print(
        `Imported ${paths.length} vllm bench serve file${paths.length === 1 ? '' : 's'} as ${result.points.length} point${result.points.length === 1 ? '' : 's'} (${runs} run${runs === 1 ? '' : 's'}) into ${opts.out}; ` +
          'every run is marked checks_not_run (the checks servegate could not make on these files).\n',
      )
    })
}
