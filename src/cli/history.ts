/** `servegate history BASELINE`: each gated metric across the baseline's refreshes, with change points and the environment changes that came with them. */
import type { Command } from 'commander'
import { baselineHistory } from '../gate/history.js'
import { renderHistoryMarkdown, renderHistoryText } from '../report/history-format.js'
import { writeFileAtomic, writeJsonAtomic } from '../store/atomic-write.js'
import { assertWritableOutput } from '../store/output-path.js'
import { loadBaselineOrResult } from './compare.js'

export function registerHistoryCommand(program: Command): void {
  program
    .command('history')
    .description("Each gated metric across a baseline's refreshes, oldest first: trend, change points, environment changes")
    .argument('<baseline>', 'baseline file (servegate.baseline/v1)')
    .option('--markdown <file>', 'also write it as markdown, with a chart GitHub renders')
    .option('--json <file>', 'also write it as JSON')
    .action(async (path: string, opts: { markdown?: string; json?: string }) => {
      for (const [p, flag] of [
        [opts.markdown, '--markdown'],
        [opts.json, '--json'],
      ] as const)
        assertWritableOutput(p, flag)
      const h = baselineHistory(await loadBaselineOrResult(path))
      process.stdout.write(renderHistoryText(h))
      if (opts.markdown) await writeFileAtomic(opts.markdown, renderHistoryMarkdown(h))
      if (opts.json) await writeJsonAtomic(opts.json, { schema: 'servegate.history/v1', ...h })
    })
}
