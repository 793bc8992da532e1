import { Command, CommanderError } from 'commander'
import { pathToFileURL } from 'node:url'
import { realpathSync } from 'node:fs'
import { UsageError } from './errors.js'
import { redactSecrets } from './util/redact.js'
import { HARNESS_VERSION } from './version.js'
import { registerRunCommand } from './cli/run.js'
import { registerSimCommand } from './cli/sim.js'
import { registerCompareCommand } from './cli/compare.js'
import { registerGateCommand } from './cli/gate.js'
import { registerBaselineCommand } from './cli/baseline.js'
import { registerReportCommand } from './cli/report.js'
import { registerAbCommand } from './cli/ab.js'
import { registerHistoryCommand } from './cli/history.js'
import { registerImportCommand } from './cli/import.js'
import { registerExportCommand } from './cli/export.js'
import { registerAggregateCommand } from './cli/aggregate.js'
import { registerMergeCommand } from './cli/merge.js'
import { readResultFile } from './store/result-file.js'

/** Build the `servegate` command tree. */
function buildProgram(): Command {
  const program = new Command()
  program
    .name('servegate')
    .description('Benchmark an OpenAI-compatible LLM server honestly and gate changes on regressions.')
    .version(HARNESS_VERSION)
    .exitOverride()
    .showHelpAfterError()
  registerRunCommand(program)
  registerSimCommand(program)
  registerCompareCommand(program)
  registerGateCommand(program)
  registerBaselineCommand(program)
  registerReportCommand(program, { readResult: readResultFile })
  registerAbCommand(program)
  registerHistoryCommand(program)
  registerImportCommand(program)
  registerExportCommand(program)
  registerAggregateCommand(program)
  registerMergeCommand(program)
  return program
}

/** Run the CLI; user errors print one clear message and exit 2, bugs keep their stack. */
export async function main(argv: string[]): Promise<void> {
  try {
    await buildProgram().parseAsync(argv)
  } catch (err) {
    if (err instanceof CommanderError) {
      // Help and version exit 0; commander already printed its message.
      process.exitCode = err.exitCode === 0 ? 0 : 2
      return
    }
    if (err instanceof UsageError) {
      // An error may quote a command or a URL with credentials: it leaves through the one redaction.
      process.stderr.write(redactSecrets(`servegate: ${err.message}\n${err.hint ? `hint: ${err.hint}\n` : ''}`))
      process.exitCode = 2
      return
    }
    process.stderr.write(redactSecrets(`servegate crashed (a bug, please report it): ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`))
    process.exitCode = 3
  }
}

const invoked = process.argv[1] ? pathToFileURL(realpathSync(process.argv[1])).href : ''
if (import.meta.url === invoked) void main(process.argv)
