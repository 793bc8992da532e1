/**
 * `servegate export RESULT --format vllm|inferencex --out-dir DIR`: a result in
 * the field's formats, so dashboards built on vLLM's result files or on
 * InferenceX rows ingest servegate runs.
 */
import { join } from 'node:path'
import type { Command } from 'commander'
import { gpuCount } from '../analysis/per-gpu.js'
import { UsageError } from '../errors.js'
import { inferenceXRows } from '../formats/inferencex.js'
import { exportVllm } from '../formats/vllm-export.js'
import { writeJsonAtomic } from '../store/atomic-write.js'
import { assertWritableOutput } from '../store/output-path.js'
import { readResultFile } from '../store/result-file.js'

const EXPORT_FORMATS = ['vllm', 'inferencex'] as const

/** The InferenceX rows' file name inside --out-dir. */
const INFERENCEX_FILE = 'servegate-inferencex.json'

export interface ExportIo {
  print(text: string): void
  warn(text: string): void
}

const defaultIo: ExportIo = { print: (t) => void process.stdout.write(t), warn: (t) => void process.stderr.write(t) }

/** Register `servegate export`. */
export function registerExportCommand(program: Command, io: ExportIo = defaultIo): void {
  program
    .command('export')
    .description("Write a result in another tool's format: vLLM result files (one per point and repeat) or InferenceX rows (one per point)")
    .argument('<result>', 'result file (servegate.result/v1)')
    .requiredOption('--format <format>', `one of ${EXPORT_FORMATS.join(', ')}`)
    .requiredOption('--out-dir <dir>', 'directory to write the files into (created when absent)')
    .action(async (resultPath: string, opts: { format: string; outDir: string }) => {
      if (!(EXPORT_FORMATS as readonly string[]).includes(opts.format)) {
        throw new UsageError(`--format ${JSON.stringify(opts.format)}: expected one of ${EXPORT_FORMATS.join(', ')}`)
      }
      const result = await readResultFile(resultPath)
      const files = opts.format === 'vllm' ? exportVllm(result) : [{ name: INFERENCEX_FILE, json: inferenceXRows(result) as unknown }]
      if (opts.format === 'inferencex' && gpuCount(result.env) === null) {
        io.warn(
          `Warning: ${resultPath} does not record how many GPUs served the model: tput_per_gpu and the other per-GPU fields are null (measure with --gpus N).\n`,
        )
      }
      for (const f of files) assertWritableOutput(join(opts.outDir, f.name), '--out-dir')
      for (const f of files) await writeJsonAtomic(join(opts.outDir, f.name), f.json)
      io.print(`Wrote ${files.length} ${opts.format} file${files.length === 1 ? '' : 's'} to ${opts.outDir}\n`)
    })
}
