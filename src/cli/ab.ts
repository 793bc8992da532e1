/**
 * `servegate ab`: measure a reference (A) and a candidate (B) engine in
 * alternating slots on this host and decide from paired differences. Writes
 * a.json, b.json (ordinary result files), slot files and verdict.md into
 * --out-dir; exits like `servegate compare` (gate/outcome.ts gateExit).
 */
import { join } from 'node:path'
import type { Command } from 'commander'
import { CandidateBrokeBeforeMeasuring, runAB } from '../ab/run-ab.js'
import { renderAbMarkdown, renderAbText } from '../ab/report.js'
import { loadConfigFile } from '../config/load.js'
import { resolveConfig } from '../config/resolve.js'
import { UsageError } from '../errors.js'
import { DEFAULT_FAIL_ON, failOnWarning, gateExit, parseFailOn } from '../gate/outcome.js'
import { optionsFromGateSettings } from '../gate/settings.js'
import { writeFileAtomic } from '../store/atomic-write.js'
import { redactSecrets, rememberSecrets } from '../util/redact.js'

interface AbFlags {
  aServe?: string
  aBaseUrl?: string
  bServe?: string
  bBaseUrl?: string
  rounds: string
  config?: string
  sweep?: string
  outDir: string
  failOn: string
  exclusive?: boolean
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
    // 6 rounds: 0.7 % false alarms per unchanged PR and every 10 % slowdown caught in bench/ab-power.ts; 4 rounds gave 1.8 %.
    .option('--rounds <n>', 'rounds of two slots each, in the order A B, B A, … (at least 2; default 6)', '6')
    .option('--config <file>', 'config file (YAML or JSON): the sweep, target and gate settings')
    .option('--sweep <name>', 'named sweep of the config file (default: gate when it has one)')
    .option('--out-dir <dir>', 'where a.json, b.json, the slot files and verdict.md go', 'servegate-ab')
    .option('--exclusive', 'start and stop each side around each of its slots (two engines that need the same GPUs)')
    .option('--fail-on <list>', `verdicts that fail, comma-separated (default ${DEFAULT_FAIL_ON.join(',')})`, DEFAULT_FAIL_ON.join(','))
    .action(async (flags: AbFlags) => {
      const failOn = parseFailOn(flags.failOn, '--fail-on')
      const rounds = Number(flags.rounds)
      if (!/^\d+$/.test(flags.rounds) || rounds < 2) throw new UsageError(`--rounds "${flags.rounds}": expected an integer ≥ 2 (pairs are needed to judge the spread)`)
      const file = flags.config ? await loadConfigFile(flags.config) : null
      const sweep = flags.sweep ?? (file?.sweeps?.['gate'] !== undefined ? 'gate' : undefined)
      // Each side is the same sweep with its own server: a base URL, or a command servegate starts.
      const sideConfig = (side: 'a' | 'b', baseUrl: string | undefined, serve: string | undefined) => {
        if ((baseUrl === undefined) === (serve === undefined)) throw new UsageError(`side ${side.toUpperCase()}: give exactly one of --${side}-base-url and --${side}-serve`)
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
            outDir: flags.outDir,
            gateOptions: optionsFromGateSettings(cfgB.gate),
            exclusive: flags.exclusive === true,
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
