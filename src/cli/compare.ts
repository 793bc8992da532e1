/**
 * `servegate compare BASELINE CANDIDATE`: the gate's verdict at a terminal or in
 * any CI. Exit codes (set on process.exitCode; cli.ts owns the process):
 *   0 pass, and inconclusive unless `--fail-on inconclusive` (it is printed as such);
 *   1 regression (and inconclusive with `--fail-on inconclusive`);
 *   2 not comparable, or unusable input (UsageError, printed by cli.ts).
 */
import { basename } from 'node:path'
import type { Command } from 'commander'
import { UsageError } from '../errors.js'
import { compareToBaseline } from '../gate/compare.js'
import { DEFAULT_FAIL_ON, FAIL_ON_VERDICTS, gateExit } from '../gate/outcome.js'
import { BASELINE_SCHEMA, type Baseline, type Verdict } from '../gate/types.js'
import { renderVerdictMarkdown } from '../report/verdict-markdown.js'
import { renderVerdictText } from '../report/verdict-text.js'
import { writeFileAtomic } from '../store/atomic-write.js'
import { baselineFromResult, parseBaseline } from '../store/baseline.js'
import { readJsonFile } from '../store/json-file.js'
import { parseResult } from '../store/result-file.js'
import { assertWritableOutput } from '../store/output-path.js'
import { RESULT_SCHEMA } from '../types.js'

export interface CompareIo {
  /** Where the verdict text goes (default: stdout). */
  print(text: string): void
}

const defaultIo: CompareIo = { print: (t) => void process.stdout.write(t) }

/** Load BASELINE: a baseline file, or a result file taken as a one-refresh baseline. */
export async function loadBaselineOrResult(path: string): Promise<Baseline> {
  const json = await readJsonFile(path)
  const schema = (json as { schema?: unknown } | null)?.schema
  if (schema === RESULT_SCHEMA) return baselineFromResult(parseResult(json, path), basename(path).replace(/\.json$/i, ''))
  if (schema === BASELINE_SCHEMA) return parseBaseline(json, path)
  throw new UsageError(
    `${path} is neither a servegate baseline nor a result: schema is ${JSON.stringify(schema)}, expected "${BASELINE_SCHEMA}" or "${RESULT_SCHEMA}"`,
  )
}

/** Exit code for a verdict (see the file comment). */
export function exitCodeFor(v: Verdict, failOnInconclusive: boolean): number {
  return gateExit(v.verdict, failOnInconclusive ? FAIL_ON_VERDICTS : DEFAULT_FAIL_ON)
}

/** Register `servegate compare`. */
export function registerCompareCommand(program: Command, io: CompareIo = defaultIo): void {
  program
    .command('compare')
    .description('Compare a candidate result with a baseline: exit 0 pass, 1 regression, 2 not comparable or invalid input')
    .argument('<baseline>', 'baseline file (servegate.baseline/v1) or a result file used as a one-refresh baseline')
    .argument('<candidate>', 'result file of the candidate (servegate.result/v1)')
    .option('--markdown <file>', 'also write the verdict as markdown (PR comment / job summary)')
    .option('--json <file>', 'also write the verdict as JSON')
    .option('--fail-on <what>', 'regression (default) or inconclusive: exit 1 on an inconclusive verdict too', 'regression')
    .action(async (baselinePath: string, candidatePath: string, opts: { markdown?: string; json?: string; failOn: string }) => {
      if (opts.failOn !== 'regression' && opts.failOn !== 'inconclusive') {
        throw new UsageError(`--fail-on ${JSON.stringify(opts.failOn)}: expected regression or inconclusive`)
      }
      for (const [path, flag] of [[opts.markdown, '--markdown'], [opts.json, '--json']] as const) assertWritableOutput(path, flag)
      const baseline = await loadBaselineOrResult(baselinePath)
      const candidate = parseResult(await readJsonFile(candidatePath), candidatePath)
      const verdict = compareToBaseline(baseline, candidate)
      io.print(renderVerdictText(verdict))
      if (verdict.verdict === 'inconclusive' && opts.failOn === 'regression') {
        io.print('Inconclusive exits 0: no regression was shown, but this is not a pass (use --fail-on inconclusive to fail).\n')
      }
      if (opts.markdown) await writeFileAtomic(opts.markdown, renderVerdictMarkdown(verdict))
      if (opts.json) {
        const doc = { schema: 'servegate.verdict/v1', baseline: baselinePath, candidate: candidatePath, ...verdict }
        await writeFileAtomic(opts.json, `${JSON.stringify(doc, null, 2)}\n`)
      }
      process.exitCode = exitCodeFor(verdict, opts.failOn === 'inconclusive')
    })
}
