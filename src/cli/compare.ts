/**
 * `servegate compare BASELINE CANDIDATE`: the gate's verdict at a terminal or in
 * any CI. Exit codes (set on process.exitCode; cli.ts owns the process) follow
 * gate/outcome.ts `gateExit`, the table the Action's step uses too:
 *   0 pass, improvement, an undecided verdict no row of which is blind (with a warning), and any
 *     verdict left out of --fail-on (printed as not a pass);
 *   1 regression, broken, incomplete, unmeasured, undecided with a blind row;
 *   2 not comparable, or unusable input (UsageError, printed by cli.ts).
 * `--config FILE` applies the config's gate settings exactly as the Action does.
 */
import { basename } from 'node:path'
import type { Command } from 'commander'
import { UsageError } from '../errors.js'
import { compareToBaseline } from '../gate/compare.js'
import { loadConfigFile } from '../config/load.js'
import { resolveConfig } from '../config/resolve.js'
import { DEFAULT_FAIL_ON, INCONCLUSIVE_WARNING, failOnWarning, gateExit, parseFailOn, usesInconclusive, type FailOnVerdict } from '../gate/outcome.js'
import { optionsFromGateSettings } from '../gate/settings.js'
import { BASELINE_SCHEMA, type Baseline, type GateOptions, type Verdict } from '../gate/types.js'
import { renderVerdictMarkdown } from '../report/verdict-markdown.js'
import { renderVerdictText } from '../report/verdict-text.js'
import { writeFileAtomic, writeJsonAtomic } from '../store/atomic-write.js'
import { parseBaseline } from '../store/baseline.js'
import { baselineFromResult } from '../gate/refresh.js'
import { readJsonFile } from '../util/json-file.js'
import { assertWholeSweep, parseResult } from '../store/result-file.js'
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
  if (schema === RESULT_SCHEMA) return baselineFromResult(assertWholeSweep(parseResult(json, path), path), basename(path).replace(/\.json$/i, ''))
  if (schema === BASELINE_SCHEMA) return parseBaseline(json, path)
  throw new UsageError(
    `${path} is neither a servegate baseline nor a result: schema is ${JSON.stringify(schema)}, expected "${BASELINE_SCHEMA}" or "${RESULT_SCHEMA}"`,
  )
}

/** Exit code for a verdict (see the file comment). */
function exitCodeFor(v: Verdict, failOn: readonly FailOnVerdict[] = DEFAULT_FAIL_ON): number {
  return gateExit(v.verdict, failOn)
}

/**
 * The gate options of a config file, resolved the way the Action resolves them
 * (resolveConfig, then the config's `gate` settings). The server section is left
 * out: comparing needs no server, so an unset API key variable is no error here.
 */
export async function gateOptionsOfConfig(path: string): Promise<Partial<GateOptions>> {
  const file = await loadConfigFile(path)
  const { server: _server, ...rest } = file
  void _server
  const cfg = resolveConfig({ file: rest, filePath: path, flags: {}, env: {} })
  return optionsFromGateSettings(cfg.gate)
}

/** Register `servegate compare`. */
export function registerCompareCommand(program: Command, io: CompareIo = defaultIo): void {
  program
    .command('compare')
    .description(
      'Compare a candidate result with a baseline: exit 0 pass, 1 regression/broken/incomplete/unmeasured/undecided, 2 not comparable or invalid input',
    )
    .argument('<baseline>', 'baseline file (servegate.baseline/v1) or a result file used as a one-refresh baseline')
    .argument('<candidate>', 'result file of the candidate (servegate.result/v1)')
    .option('--markdown <file>', 'also write the verdict as markdown (PR comment / job summary)')
    .option('--json <file>', 'also write the verdict as JSON')
    .option('--config <file>', 'config file whose gate settings (gate.tolerance_pct, gate.max_failed_requests, gate.max_mdc_pct) apply, as in the Action')
    .option(
      '--fail-on <list>',
      `verdicts that fail, comma-separated (default ${DEFAULT_FAIL_ON.join(',')}: every verdict but a pass, undecided only when a row is blind; or never)`,
      DEFAULT_FAIL_ON.join(','),
    )
    .action(async (baselinePath: string, candidatePath: string, opts: { markdown?: string; json?: string; failOn: string; config?: string }) => {
      const failOn = parseFailOn(opts.failOn, '--fail-on')
      for (const [path, flag] of [
        [opts.markdown, '--markdown'],
        [opts.json, '--json'],
      ] as const)
        assertWritableOutput(path, flag)
      const gateOptions = opts.config === undefined ? {} : await gateOptionsOfConfig(opts.config)
      const baseline = await loadBaselineOrResult(baselinePath)
      const candidate = assertWholeSweep(parseResult(await readJsonFile(candidatePath), candidatePath), candidatePath)
      const verdict = compareToBaseline(baseline, candidate, gateOptions)
      io.print(renderVerdictText(verdict))
      const warning = failOnWarning(failOn)
      if (warning !== null) io.print(`Warning: ${warning}.\n`)
      if (usesInconclusive(opts.failOn)) io.print(`Warning: ${INCONCLUSIVE_WARNING}.\n`)
      if (verdict.verdict !== 'pass' && verdict.verdict !== 'improvement' && exitCodeFor(verdict, failOn) === 0) {
        const why = verdict.verdict === 'undecided' && failOn.includes('undecided') ? 'no undecided row is blind (gate.max_mdc_pct)' : '--fail-on leaves it out'
        io.print(`${verdict.verdict} exits 0 because ${why}, but this is not a pass.\n`)
      }
      if (opts.markdown) await writeFileAtomic(opts.markdown, renderVerdictMarkdown(verdict))
      if (opts.json) {
        const doc = { schema: 'servegate.verdict/v1', baseline: baselinePath, candidate: candidatePath, ...verdict }
        await writeJsonAtomic(opts.json, doc)
      }
      process.exitCode = exitCodeFor(verdict, failOn)
    })
}
