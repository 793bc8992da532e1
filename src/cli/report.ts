import { writeFile } from 'node:fs/promises'
import type { Command } from 'commander'
import { describeError, UsageError } from '../errors.js'
import { renderMarkdownReport } from '../report/markdown.js'
import { renderConsoleTable } from '../report/table.js'
import type { ResultFile } from '../types.js'
import { assertWritableOutput } from '../store/output-path.js'

export interface ReportCommandDeps {
  /** Reads and validates a result file (throws UsageError when it is not one). */
  readResult: (path: string) => Promise<ResultFile>
  /** Where the table goes; default process.stdout. */
  stdout?: NodeJS.WritableStream
  /** Where notices go; default process.stderr. */
  stderr?: NodeJS.WritableStream
  /** Writes the markdown file; default fs.writeFile. */
  writeText?: (path: string, text: string) => Promise<void>
}

/** `servegate report RESULT [--markdown FILE]`: print the methodology's table; optionally write it as markdown. */
export function registerReportCommand(program: Command, deps: ReportCommandDeps): void {
  program
    .command('report')
    .description("Print the methodology's table for a result file (pending cells stay pending)")
    .argument('<result>', 'result file written by servegate run')
    .option('--markdown <file>', 'also write the report as markdown to FILE')
    .action(async (resultPath: string, opts: { markdown?: string }) => {
      assertWritableOutput(opts.markdown, '--markdown', { createsDirs: false })
      const result = await deps.readResult(resultPath)
      const stdout = deps.stdout ?? process.stdout
      stdout.write(`${renderConsoleTable(result)}\n`)
      if (opts.markdown !== undefined) {
        const write = deps.writeText ?? ((p: string, t: string) => writeFile(p, t, 'utf8'))
        try {
          await write(opts.markdown, renderMarkdownReport(result))
        } catch (err) {
          throw new UsageError(`cannot write --markdown ${opts.markdown}: ${describeError(err)}`, 'Check that the directory exists and is writable.')
        }
        const stderr = deps.stderr ?? process.stderr
        stderr.write(`Markdown report written to ${opts.markdown}\n`)
      }
    })
}
