/**
 * `servegate ab`: measure a reference (A) and a candidate (B) engine in
 * alternating slots on this host and decide from paired differences. Writes
 * a.json, b.json (ordinary result files), slot files and verdict.md into
 * --out-dir; exits like `servegate compare` (gate/outcome.ts gateExit).
 */
import { join } from 'node:path'
import type { Command } from 'commander'
import { CandidateBrokeBeforeMeasuring, runAB } from '../ab/run-ab.js'
import { MIN_AB_ROUNDS, parseGpuList, roundsProblem } from '../plan/ab-schedule.js'
import { maxRoundsProblem } from '../gate/ab-looks.js'
import { renderAbMarkdown, renderAbText } from '../report/ab-report.js'
import { loadConfigFile } from '../config/load.js'
import { resolveConfig } from '../config/resolve.js'
import { UsageError } from '../errors.js'
import { DEFAULT_FAIL_ON, failOnWarning, gateExit, parseFailOn } from '../gate/outcome.js'
import { optionsFromGateSettings } from '../gate/settings.js'
import { readBaseline } from '../store/baseline.js'
import { writeFileAtomic } from '../store/atomic-write.js'
import { redactSecrets, rememberSecrets } from '../util/redact.js'

interface AbFlags {
  aServe?: string
  aBaseUrl?: string
  bServe?: string
  bBaseUrl?: string
  rounds: string
  maxRounds?: string
  config?: string
  sweep?: string
  outDir: string
  failOn: string
  exclusive?: boolean
  resident?: boolean
  aGpus?: string
  bGpus?: string
  baseline?: string
}

/** Register `servegate ab`. */
export function registerAbCommand(program: Command): void {
  program
    .command('ab')
    .description('Measure engine A (reference) and B (candidate) in alternating slots on this host; paired verdict, exits like compare')
    .option('--a-serve <cmd>', 'command that starts A ({port} = a free port)')
    .option('--a-base-url <url>', 'A is already running here')
    .option('--b-serve <cmd>', 'command that starts B ({port} = a free port)')
    .option('--b-base-url <url>', 'B is already running here')
    // 6 rounds by default: power and false alarms per round count are in `npm run bench -- gate-false-alarms` (docs/gate.md).
    .option('--rounds <n>', `rounds of two slots each, in the order A B, B A, … (at least ${MIN_AB_ROUNDS}; default 6)`, '6')
    .option(
      '--max-rounds <n>',
      'look after --rounds, then after every round up to this many, stopping once every gated row is decided (default: --rounds, one look)',
    )
    .option('--config <file>', 'config file (YAML or JSON): the sweep, target and gate settings')
    .option('--baseline <file>', "this host's stored baseline of A's engine: its refreshes give the rows' noise (default: the gate's priors)")
    .option('--sweep <name>', 'named sweep of the config file (default: gate when it has one)')
    .option('--out-dir <dir>', 'where a.json, b.json, the slot files and verdict.md go', 'servegate-ab')
    .option('--resident', 'keep both engines up for the whole job; only where each side has GPUs of its own (--a-gpus, --b-gpus)')
    .option('--a-gpus <list>', "GPUs for A's command, e.g. 0,1 (servegate sets CUDA_VISIBLE_DEVICES)")
    .option('--b-gpus <list>', "GPUs for B's command, e.g. 2,3 (servegate sets CUDA_VISIBLE_DEVICES)")
    .option('--exclusive', "the default (each side started for its own slots and stopped before the other's); accepted for older scripts")
    .option('--fail-on <list>', `verdicts that fail, comma-separated (default ${DEFAULT_FAIL_ON.join(',')})`, DEFAULT_FAIL_ON.join(','))
    .action(async (flags: AbFlags) => {
      const failOn = parseFailOn(flags.failOn, '--fail-on')
      const rounds = /^\d+$/.test(flags.rounds) ? Number(flags.rounds) : NaN
      const roundsWhy = roundsProblem(rounds)
      if (roundsWhy !== null) throw new UsageError(`servegate ab --rounds "${flags.rounds}": ${roundsWhy}`)
      const maxRounds = flags.maxRounds === undefined ? rounds : /^\d+$/.test(flags.maxRounds) ? Number(flags.maxRounds) : NaN
      const maxWhy = maxRoundsProblem(rounds, maxRounds)
      if (maxWhy !== null) throw new UsageError(`servegate ab --max-rounds "${flags.maxRounds}": ${maxWhy}`)
      if (flags.resident === true && flags.exclusive === true)
        throw new UsageError('servegate ab: --resident and --exclusive contradict each other; give one (exclusive is the default)')
      const gpuList = (value: string | undefined, flag: string): string[] | undefined => {
        if (value === undefined) return undefined
        try {
          return parseGpuList(value, `servegate ab ${flag}`)
        } catch (err) {
          throw new UsageError((err as Error).message)
        }
      }
      const gpus = {
        ...(flags.aGpus !== undefined ? { A: gpuList(flags.aGpus, '--a-gpus')! } : {}),
        ...(flags.bGpus !== undefined ? { B: gpuList(flags.bGpus, '--b-gpus')! } : {}),
      }
      const file = flags.config ? await loadConfigFile(flags.config) : null
      const sweep = flags.sweep ?? (file?.sweeps?.['gate'] !== undefined ? 'gate' : undefined)
      // Each side is the same sweep with its own server: a base URL, or a command servegate starts.
      const sideConfig = (side: 'a' | 'b', baseUrl: string | undefined, serve: string | undefined) => {
        if ((baseUrl === undefined) === (serve === undefined))
          throw new UsageError(`servegate ab: side ${side.toUpperCase()}: give exactly one of --${side}-base-url and --${side}-serve`)
        const cfg = resolveConfig({
          file,
          filePath: flags.config ?? null,
          flags: { ...(sweep ? { sweep } : {}), ...(baseUrl !== undefined ? { baseUrl } : { serve: serve! }) },
          env: process.env,
        })
        // Both sides' commands and keys: hidden in every file, log line and error from here on.
        rememberSecrets(cfg.secrets ?? [])
        return cfg
      }
      const cfgA = sideConfig('a', flags.aBaseUrl, flags.aServe)
      const cfgB = sideConfig('b', flags.bBaseUrl, flags.bServe)
      const log = (line: string): void => void process.stderr.write(`${redactSecrets(line)}\n`)
      const abort = new AbortController()
      const onSignal = (sig: NodeJS.Signals): void => {
        if (abort.signal.aborted) process.exit(130)
        log(`\n${sig} received: stopping (the slot in progress is dropped; finished slots are in ${flags.outDir}).`)
        abort.abort(sig)
      }
      process.on('SIGINT', onSignal)
      process.on('SIGTERM', onSignal)
      try {
        const outcome = await runAB(
          {
            a: cfgA,
            b: cfgB,
            rounds,
            maxRounds,
            outDir: flags.outDir,
            gateOptions: optionsFromGateSettings(cfgB.gate),
            history: flags.baseline === undefined ? null : await readBaseline(flags.baseline),
            maxGpuMinutes: cfgB.gate.maxGpuMinutes ?? null,
            resident: flags.resident === true,
            gpus,
          },
          { log, signal: abort.signal },
        )
        process.stdout.write(renderAbText(outcome))
        const warning = failOnWarning(failOn)
        if (warning !== null) process.stdout.write(`Warning: ${warning}.\n`)
        const md = join(flags.outDir, 'verdict.md')
        await writeFileAtomic(md, renderAbMarkdown(outcome))
        log(`A: ${outcome.paths.a}, B: ${outcome.paths.b}, verdict: ${md}`)
        process.exitCode = gateExit(outcome.verdict.verdict, failOn)
      } catch (err) {
        if (!(err instanceof CandidateBrokeBeforeMeasuring)) throw err
        // No B result to judge: the candidate broke, and that is the verdict.
        process.stdout.write(`servegate verdict: BROKEN\n  ${err.message.replace(/\n/g, '\n  ')}\n`)
        process.exitCode = gateExit('broken', failOn)
      } finally {
        process.off('SIGINT', onSignal)
        process.off('SIGTERM', onSignal)
      }
    })
}
