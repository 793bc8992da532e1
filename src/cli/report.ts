import { writeFile } from 'node:fs/promises'
import type { Command } from 'commander'
import { describeError, UsageError } from '../errors.js'
import { compareToBaseline } from '../gate/compare.js'
import { loadBaselineOrResult } from './compare.js'
import type { Baseline } from '../gate/types.js'
import { chartScripts } from '../store/html-assets.js'
import { renderHtmlReport } from '../report/html.js'
import { renderMarkdownReport } from '../report/markdown.js'
import { renderConsoleTable } from '../report/table.js'
import type { ResultFile } from '../types.js'
import { assertWritableOutput } from '../store/output-path.js'
import { redactSecrets } from '../util/redact.js'

export interface ReportCommandDeps {
  /** Reads and validates a result file (throws UsageError when it is not one). */
  readResult: (path: string) => Promise<ResultFile>
  /** Reads a baseline file, or a result file taken as a one-refresh baseline (throws UsageError otherwise). */
  readBaseline?: (path: string) => Promise<Baseline>
  /** Where the table goes; default process.stdout. */
  stdout?: NodeJS.WritableStream
  /** Where notices go; default process.stderr. */
  stderr?: NodeJS.WritableStream
  /** Writes the markdown and HTML files; default fs.writeFile. */
  writeText?: (path: string, text: string) => Promise<void>
}

/**
 * `servegate report RESULT [--markdown FILE] [--baseline FILE --html FILE]`: print the methodology's
 * table; optionally write it as markdown, and the self-contained HTML page (with the verdict and the
 * baseline's frontier when --baseline is given).
 */
export function registerReportCommand(program: Command, deps: ReportCommandDeps): void {
  program
    .command('report')
    .description("Print the methodology's table for a result file (pending cells stay pending)")
    .argument('<result>', 'result file written by servegate run')
    .option('--markdown <file>', 'also write the report as markdown to FILE')
    .option('--html <file>', 'also write a self-contained HTML page (frontier, latency percentiles, tables) to FILE')
    .option('--baseline <file>', 'with --html: a baseline file (or a result) drawn beside the result, and the verdict against it')
    .action(async (resultPath: string, opts: { markdown?: string; html?: string; baseline?: string }) => {
      if (opts.baseline !== undefined && opts.html === undefined) {
        throw new UsageError(
          `--baseline ${opts.baseline}: used only by the HTML page, but --html is missing`,
          'Add --html FILE, or use `servegate compare BASELINE RESULT` for the verdict alone.',
        )
      }
      assertWritableOutput(opts.markdown, '--markdown', { createsDirs: false })
      assertWritableOutput(opts.html, '--html', { createsDirs: false })
      const result = await deps.readResult(resultPath)
      const baseline = opts.baseline === undefined ? null : await (deps.readBaseline ?? loadBaselineOrResult)(opts.baseline)
      const stdout = deps.stdout ?? process.stdout
      const stderr = deps.stderr ?? process.stderr
      const write = deps.writeText ?? ((p: string, t: string) => writeFile(p, t, 'utf8'))
      stdout.write(`${renderConsoleTable(result)}\n`)
      const save = async (flag: string, path: string, text: () => string): Promise<void> => {
        try {
          // A result or baseline from elsewhere may predate redaction: the page and the report hide what they can.
          await write(path, redactSecrets(text()))
        } catch (err) {
          throw new UsageError(`cannot write ${flag} ${path}: ${describeError(err)}`, 'Check that the directory exists and is writable.')
        }
      }
      if (opts.markdown !== undefined) {
        await save('--markdown', opts.markdown, () => renderMarkdownReport(result))
        stderr.write(`Markdown report written to ${opts.markdown}\n`)
      }
      if (opts.html !== undefined) {
        const verdict = baseline === null ? null : compareToBaseline(baseline, result)
        await save('--html', opts.html, () => renderHtmlReport(result, { baseline, verdict, scripts: chartScripts() }))
        stderr.write(`HTML report written to ${opts.html}${verdict === null ? '' : ` (verdict against ${opts.baseline}: ${verdict.verdict})`}\n`)
      }
    })
}
