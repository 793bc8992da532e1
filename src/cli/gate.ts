/**
 * `servegate gate --baseline FILE --config FILE`: the gate's ladder at a terminal, as the Action's
 * gate mode climbs it (docs/gate.md, "The escalation ladder"). The config's gated sweep is the
 * candidate's first engine start, judged against the stored baseline; where servegate starts the
 * candidate's engine (`--serve`, `server.command`) and no reference engine is named, an undecided
 * row gets more starts of it, one run per point of the rows still open; with a reference engine
 * (`--reference`, `gate.reference_command`) whatever the stored baseline leaves open is decided
 * side by side (`servegate ab`'s job, the first sweep as its first B slot). The sweep runs one run
 * per point where such a step can follow, the config's repeats where it cannot. Exit codes as
 * `servegate compare` (gate/outcome.ts gateExit).
 */
import { join } from 'node:path'
import type { Command } from 'commander'
import { UsageError } from '../errors.js'
import { reusableFirstSlot, runAB } from '../ab/run-ab.js'
import { loadConfigFile } from '../config/load.js'
import { referenceFile } from '../config/reference-file.js'
import { resolveConfig, type RunFlags } from '../config/resolve.js'
import { DEFAULT_MAX_ROUNDS, maxRoundsProblem } from '../gate/ab-looks.js'
import { capLine, costOf } from '../gate/cost.js'
import { hostChangedSince } from '../gate/host-change.js'
import { escalationReason } from '../gate/ladder.js'
import { mergeResults } from '../gate/merge.js'
import { DEFAULT_FAIL_ON, gateExit, parseFailOn } from '../gate/outcome.js'
import { compareStarts } from '../gate/seq-baseline.js'
import { optionsFromGateSettings } from '../gate/settings.js'
import type { Verdict } from '../gate/types.js'
import { roundsProblem } from '../plan/ab-schedule.js'
import { renderVerdictMarkdown } from '../report/verdict-markdown.js'
import { renderVerdictText } from '../report/verdict-text.js'
import { writeFileAtomic, writeJsonAtomic } from '../store/atomic-write.js'
import { readBaseline } from '../store/baseline.js'
import { assertWritableOutput } from '../store/output-path.js'
import { writeResultFile } from '../store/result-file.js'
import { climbStarts, sum } from '../sweep/climb.js'
import { runSweep } from '../sweep/run-sweep.js'
import { redactSecrets, rememberSecrets } from '../util/redact.js'

interface GateFlags {
  baseline: string
  config?: string
  sweep?: string
  baseUrl?: string
  serve?: string
  model?: string
  reference?: string
  confirm: boolean
  maxStarts: string
  rounds: string
  maxRounds: string
  out?: string
  markdown?: string
  json?: string
  failOn: string
}

function whole(flag: string, raw: string, min: number): number {
  if (!/^\d+$/.test(raw.trim()) || Number(raw) < min)
    throw new UsageError(`servegate gate ${flag} ${JSON.stringify(raw)}: expected a whole number of at least ${min}`)
  return Number(raw)
}

/** Register `servegate gate`. */
export function registerGateCommand(program: Command): void {
  program
    .command('gate')
    .description(
      "Gate a candidate as the Action does: its sweep against a stored baseline, then more starts of its engine or an A/B with the reference engine where the baseline leaves a row open (exit codes as compare's)",
    )
    .requiredOption('--baseline <file>', 'stored baseline (servegate.baseline/v1) of the gated sweep on this host')
    .option('--config <file>', 'config file with the gated sweep and its gate settings (gate.reference_command, gate.max_gpu_minutes, …)')
    .option('--sweep <name>', 'named sweep of the config file (default: gate, else the only one)')
    .option('--base-url <url>', "the candidate's server root (it is never restarted: one look, then undecided rows stay open)")
    .option('--serve <cmd>', "start the candidate's engine with this command ({port}: a free loopback port); each further start is a fresh one")
    .option('--model <id>', 'model to request (default: the first of /v1/models)')
    .option(
      '--reference <cmd>',
      "the base branch's engine as a serve command (default: gate.reference_command): decides what the baseline leaves open, side by side",
    )
    .option('--no-confirm', 'never start the candidate again: one look against the baseline')
    .option('--max-starts <n>', 'engine starts of the candidate in all, without a reference (default 8)', '8')
    .option('--rounds <n>', 'A/B: the first look after this many rounds (default 2)', '2')
    .option('--max-rounds <n>', `A/B: look after every round up to this many (default ${DEFAULT_MAX_ROUNDS})`, String(DEFAULT_MAX_ROUNDS))
    .option('--out <file>', 'result file of the candidate (default servegate-result.json); an A/B writes its sides in <out>-ab/')
    .option('--markdown <file>', 'also write the verdict as markdown')
    .option('--json <file>', 'also write the verdict as JSON')
    .option('--fail-on <list>', `verdicts that fail, comma-separated (default ${DEFAULT_FAIL_ON.join(',')})`, DEFAULT_FAIL_ON.join(','))
    .action(async (flags: GateFlags) => {
      const failOn = parseFailOn(flags.failOn, '--fail-on')
      const maxStarts = whole('--max-starts', flags.maxStarts, 1)
      const rounds = whole('--rounds', flags.rounds, 0)
      const maxRounds = whole('--max-rounds', flags.maxRounds, 0)
      const roundsWhy = roundsProblem(rounds) ?? maxRoundsProblem(rounds, maxRounds)
      if (roundsWhy !== null) throw new UsageError(`servegate gate --rounds ${rounds} --max-rounds ${maxRounds}: ${roundsWhy}`)
      for (const [path, flag] of [
        [flags.markdown, '--markdown'],
        [flags.json, '--json'],
        [flags.out, '--out'],
      ] as const)
        assertWritableOutput(path, flag)
      const file = flags.config ? await loadConfigFile(flags.config) : null
      const runFlags: RunFlags = {
        ...(flags.sweep !== undefined ? { sweep: flags.sweep } : {}),
        ...(flags.baseUrl !== undefined ? { baseUrl: flags.baseUrl } : {}),
        ...(flags.serve !== undefined ? { serve: flags.serve } : {}),
        ...(flags.model !== undefined ? { model: flags.model } : {}),
        ...(flags.out !== undefined ? { out: flags.out } : {}),
      }
      const cfg = resolveConfig({ file, filePath: flags.config ?? null, flags: runFlags, env: process.env })
      const reference = flags.reference ?? cfg.gate.referenceCommand ?? null
      rememberSecrets(cfg.secrets ?? [])
      const log = (line: string): void => void process.stderr.write(`${redactSecrets(line)}\n`)
      if (cfg.serve == null && cfg.server.baseUrl === null) {
        throw new UsageError('servegate gate: the candidate has no server: give --serve or --base-url (or server.command / server.base_url in the config)')
      }
      const baseline = await readBaseline(flags.baseline)
      const canRestart = flags.confirm && cfg.serve != null
      // The first sweep is the candidate's first engine start: one run per point where a step can follow it.
      const sequential = reference !== null || canRestart
      const firstCfg = sequential && cfg.repeats > 1 ? { ...cfg, repeats: 1 } : cfg
      if (firstCfg !== cfg)
        log(`servegate gate: the first sweep runs one run per point (the sweep's repeats: ${cfg.repeats}): a sequential step may follow it.`)
      const { result, resultPath } = await runSweep(firstCfg, { log })
      const hostChanged = hostChangedSince(baseline, result)
      const gateOptions = optionsFromGateSettings(cfg.gate)
      const climbed = await climbStarts(
        {
          runSweep,
          mergeResults,
          writeResultFile,
          compareStarts: (b, candidate, step, startOf) => compareStarts(b, candidate, { ...gateOptions, ...step }, startOf),
          log,
        },
        { cfg, baseline, result, resultPath, hasReference: reference !== null, canRestart, maxStarts, hostChangeIsFinding: false, hostChanged },
      )
      const cap = cfg.gate.maxGpuMinutes ?? null
      const engineStarts = cfg.serve != null ? climbed.starts : 0
      const pointRuns = climbed.measured.points.reduce((n, p) => n + p.runs.length, 0)
      let verdict: Verdict = climbed.verdict
      verdict.cost = costOf({ engineStarts, pointRuns }, sum(climbed.spent), cap, climbed.capped && verdict.verdict === 'undecided')
      if (verdict.cost.capped) verdict.reasons.unshift(`undecided: ${capLine(cap!, sum(climbed.spent))}`)
      if (climbed.starts > 1)
        log(`servegate gate: the candidate's engine was started ${climbed.starts} times; every start is an increment of the same sequential test.`)
      if (climbed.next === 'ab' && reference !== null) {
        log(`servegate gate: escalating to A/B with the reference engine: ${escalationReason(verdict, hostChanged)}.`)
        // The reference reads the same sweep and gate settings, none of the candidate's server.
        const { baseUrl: _b, serve: _s, ...common } = runFlags
        const cfgA = resolveConfig({ file: referenceFile(file), filePath: flags.config ?? null, flags: { ...common, serve: reference }, env: process.env })
        // The secrets in the reference's command (an API key, a token in its environment), as for any serve command.
        rememberSecrets(cfgA.secrets ?? [])
        const bFirst = climbed.starts === 1 ? reusableFirstSlot(climbed.measured, cfg, false) : null
        const outDir = join(resultPath.replace(/\.json$/i, '') + '-ab')
        const outcome = await runAB(
          {
            a: cfgA,
            b: cfg,
            rounds,
            maxRounds,
            outDir,
            gateOptions,
            history: baseline,
            maxGpuMinutes: cap,
            spentGpuMinutes: sum(climbed.spent),
            spent: { engineStarts, pointRuns },
            ...(bFirst !== null ? { bFirst } : {}),
          },
          { log },
        )
        verdict = outcome.verdict
        verdict.reasons.unshift(`escalated to A/B with the reference engine (files in ${outDir}): ${escalationReason(climbed.verdict, hostChanged)}`)
      }
      process.stdout.write(renderVerdictText(verdict))
      if (flags.markdown) await writeFileAtomic(flags.markdown, renderVerdictMarkdown(verdict))
      if (flags.json) await writeJsonAtomic(flags.json, { schema: 'servegate.verdict/v1', baseline: flags.baseline, candidate: resultPath, ...verdict })
      process.exitCode = gateExit(verdict.verdict, failOn)
    })
}
