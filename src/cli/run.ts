import type { Command } from 'commander'
import { loadConfigFile } from '../config/load.js'
import { resolveConfig, type RunFlags } from '../config/resolve.js'
import { plannedRunCount } from '../config/placement.js'
import { applyBracket } from '../gate/bracket.js'
import { rateLabel } from '../plan/plan.js'
import { readBaseline } from '../store/baseline.js'
import { runSweep, SweepCancelled } from '../sweep/run-sweep.js'
import { renderConsoleTable } from '../report/table.js'
import { createProgress } from './progress.js'
import { noValidRun } from '../sweep/no-valid-run.js'
import { redactSecrets, rememberSecrets } from '../util/redact.js'

/** `servegate run`: measure a sweep and print the methodology's table. */
export function registerRunCommand(program: Command): void {
  program
    .command('run')
    .description('Run a benchmark sweep (starts the built-in simulator when no --base-url is given)')
    .option('--config <file>', 'YAML or JSON config file; flags override it')
    .option('--sweep <name>', 'named sweep of the config file (e.g. full, gate)')
    .option('--base-url <url>', 'server root, e.g. http://127.0.0.1:8000 (a trailing /v1 is accepted)')
    .option('--model <id>', 'model to request (default: the first of /v1/models)')
    .option('--api <api>', 'completions or chat')
    .option('--input-len <n>', 'prompt length in tokens')
    .option('--output-len <n>', 'output length in tokens (sent as max_tokens with ignore_eos)')
    .option('--concurrency <list>', 'concurrency levels, e.g. 1,4,16')
    .option('--prompts-per-concurrency <n>', 'measured requests per point = concurrency × N (default 12)')
    .option('--request-rate <list>', 'open loop: request rates in requests/s, e.g. 5,10,20, or inf (all at once); replaces --concurrency')
    .option('--burstiness <b>', 'open loop: gamma shape of the inter-arrival times (default 1: Poisson; < 1 burstier)')
    .option('--max-concurrency <n>', 'open loop: most requests in flight at once (a due request waits for a slot; default: no cap)')
    .option('--num-prompts <n>', 'open loop: measured requests per point (default 1000)')
    .option('--goodput <slos>', 'SLOs a good request meets, ms: ttft:MS,tpot:MS,e2el:MS (any subset)')
    .option(
      '--header <NAME:VALUE>',
      'a header sent with every request to the server (repeatable; the value is redacted everywhere, the name recorded)',
      (v: string, prev: string[]) => [...prev, v],
      [] as string[],
    )
    .option(
      '--extra-body <json>',
      "a JSON object whose fields join every request body, e.g. '{\"min_tokens\": 128}' (the methodology's own fields are refused)",
    )
    .option(
      '--tokenizer <dir|org/name>',
      "a Hugging Face tokenizer of the client's own (a directory, or a model id in this host's Hugging Face cache, read offline): sizes chat prompts exactly and re-counts output where the server's /tokenize cannot",
    )
    .option('--warmup <n>', 'warmup requests per point, discarded (default: one per slot, at least 4)')
    .option('--repeats <n>', 'runs per point (default 3)')
    .option(
      '--host-retries <n>',
      'measure a run again, with fresh prompts, when only the host spoiled it (client_saturated, gpu_shared, gpu_throttled), at most n times (default 0)',
    )
    .option('--target <spec>', 'interactivity target metric:pNN:ms (default tpot:p95:50)')
    .option('--seed <n>', 'seed for prompts')
    .option('--workers <n>', 'load-generator worker threads, or auto')
    .option('--timeout-ms <n>', 'fail a request after this long without a byte')
    .option(
      '--request-timeout <s>',
      'fail a request whose answer is not complete after this many seconds (default: 120 + 0.001 × input-len + 0.25 × output-len)',
    )
    .option('--gpus <n>', 'GPUs serving the model, for throughput per GPU (default: what nvidia-smi sees on a local server, else unknown)')
    .option('--container-digest <digest>', 'image digest of the server, recorded in the result')
    .option('--serve <cmd>', 'start the server with this shell command ({port}: a free loopback port, the base URL follows it), watch it, stop it at the end')
    .option('--ready-timeout <s>', 'seconds a started server may take to answer /health or /v1/models (default 1800)')
    .option('--serve-command <cmd>', 'the command that started the server, recorded in the result')
    .option(
      '--bracket-baseline <file>',
      "run per shape only the two concurrencies around this baseline's crossing of the target, plus the sweep's itl_concurrency (placement: bracket)",
    )
    .option(
      '--shard <I/N>',
      'run shard I of N of a sharded sweep (I from 0; or the variable holding it: JOB_COMPLETION_INDEX/4, SLURM_PROCID/8); merge the shards with servegate merge',
    )
    .option('--start-at <time>', 'sharded sweep: when the schedule begins, the same ISO 8601 time on every shard (e.g. 2026-12-07T10:00:00Z)')
    .option('--slot <s>', "sharded sweep: seconds each run is given on every shard (its first quarter is the warmup's); longer than the longest run")
    .option('--time-server <host[:port]>', 'sharded sweep: an NTP server every load host reaches; each shard measures its clock offset against it')
    .option('--out <file>', 'result file (default servegate-result.json)')
    .option('--resume', 'continue an interrupted sweep in --out without redoing finished runs')
    .action(async (opts: Record<string, string | boolean | undefined>) => {
      const flags = opts as RunFlags
      const configPath = typeof opts.config === 'string' ? opts.config : null
      const file = configPath ? await loadConfigFile(configPath) : null
      let cfg = resolveConfig({ file, filePath: configPath, flags, env: process.env })
      // From here on every file, log line and error this process writes hides them (util/redact.ts).
      rememberSecrets(cfg.secrets ?? [])
      const log = (line: string): void => void process.stderr.write(`${redactSecrets(line)}\n`)
      if (cfg.placement === 'bracket' && flags.bracketBaseline === undefined) {
        // The same sweep refreshes the baseline: without one to bracket, it measures the whole list.
        log(
          `Bracketing: sweep "${cfg.sweepName}" has placement bracket but no --bracket-baseline was given: running the whole list ${cfg.concurrency.join(', ')}.`,
        )
      } else if (cfg.placement === 'bracket' && flags.bracketBaseline !== undefined) {
        const placed = applyBracket(cfg, await readBaseline(flags.bracketBaseline), `--bracket-baseline ${flags.bracketBaseline}`)
        cfg = placed.cfg
        for (const note of placed.notes) log(`Bracketing: ${note}`)
      }
      const total = plannedRunCount(cfg)
      const progress = createProgress(total, { stream: process.stderr, tty: Boolean(process.stderr.isTTY) && !process.env.CI })
      // The first signal stops dispatching and cuts the requests in flight (the load threads'
      // connections are destroyed), so a server under a C=256 point is freed at once; the finished
      // runs are already on disk and the file is marked as interrupted. A second signal, or a stop
      // that takes longer than STOP_GRACE_MS, exits straight away: the file is then as last written.
      const abort = new AbortController()
      const interrupted = (): void => {
        progress.stop()
        log(`\nInterrupted. Finished runs are saved in ${cfg.out}; continue with: ${resumeCommand(process.argv.slice(3))}`)
        process.exit(130)
      }
      const onSignal = (sig: NodeJS.Signals): void => {
        if (abort.signal.aborted) return interrupted()
        progress.stop()
        log(`\n${sig} received: stopping the sweep (the run in progress is dropped; press Ctrl-C again to quit at once).`)
        abort.abort(sig)
        // A server servegate started is stopped in order first (SIGTERM, its grace, SIGKILL); a hard exit kills its group.
        setTimeout(interrupted, STOP_GRACE_MS + (cfg.serve ? cfg.serve.stopTimeoutS * 1000 + 5000 : 0)).unref()
      }
      process.on('SIGINT', onSignal)
      process.on('SIGTERM', onSignal)
      try {
        const { result, resultPath } = await runSweep(cfg, {
          signal: abort.signal,
          log,
          onResume: (already) => progress.skip(already),
          onPointStart: (p) => progress.start(label(p)),
          onPointDone: (p, run) =>
            progress.done(
              label(p),
              `${run.output_throughput.toFixed(0)} tok/s, ITL p50 ${run.itl_ms.p50?.toFixed(2) ?? '–'} ms${run.goodput?.share != null ? `, goodput ${(run.goodput.share * 100).toFixed(1)}%` : ''}${run.validity.valid ? '' : ` — INVALID: ${run.validity.issues.map((i) => i.code).join(', ')}`}`,
            ),
        })
        progress.stop()
        process.stdout.write(`${renderConsoleTable(result)}\n`)
        const invalid = noValidRun(result)
        if (result.shard !== undefined)
          // A shard's runs are judged on its share alone (too few requests, a ramp): the merge judges each point over every shard.
          log(
            `Shard ${result.shard.index} of ${result.shard.count} written to ${resultPath} (records: ${result.shard.records}); merge every shard with: servegate merge <the ${result.shard.count} shard results> --out result.json`,
          )
        else if (invalid === null) log(`Result written to ${resultPath}`)
        else {
          // A sweep that measured nothing valid must not look like a success to a script or CI step;
          // its file is still written, since the runs' validity issues say what went wrong.
          log(`servegate: no run of the sweep is valid (${invalid}); the result is written to ${resultPath}`)
          process.exitCode = 1
        }
      } catch (err) {
        progress.stop()
        if (err instanceof SweepCancelled) interrupted()
        throw err
      } finally {
        process.off('SIGINT', onSignal)
        process.off('SIGTERM', onSignal)
      }
    })
}

/** How long a stopping sweep may take to cut its load and write its file before the process exits anyway. */
const STOP_GRACE_MS = 4000

/** The command that continues this sweep: the same arguments (shell-quoted), with --resume once. */
function resumeCommand(args: readonly string[]): string {
  const rest = args.filter((a) => a !== '--resume')
  return ['servegate', 'run', '--resume', ...rest].map(shellQuote).join(' ')
}

/** Quote one argument for a POSIX shell when it holds anything but plain word characters. */
function shellQuote(arg: string): string {
  return /^[A-Za-z0-9_@%+=:,./-]+$/.test(arg) ? arg : `'${arg.replaceAll("'", "'\\''")}'`
}

function label(p: { shape: { inputLen: number; outputLen: number }; concurrency: number; repeat: number; openLoop?: { rate: number } }): string {
  return `${p.shape.inputLen} in / ${p.shape.outputLen} out, ${p.openLoop ? `rate ${rateLabel(p.openLoop.rate)}/s` : `C=${p.concurrency}`}, repeat ${p.repeat}`
}
