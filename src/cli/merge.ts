/**
 * `servegate merge SHARD… --out result.json`: the results of a sharded sweep's shards (each with
 * its `.records.jsonl.gz` beside it) as one ordinary result (analysis/shard-merge.ts), which
 * `report`, `compare`, `baseline update` and the gate take unchanged. It prints the table, each
 * run's shard alignment and the headroom line; it exits 1 when no merged run is valid (as `run`
 * does), 2 on files that are not one sharded sweep's, every shard present.
 */
import type { Command } from 'commander'
import { dirname, join } from 'node:path'
import { mergeShards, type ShardInput } from '../analysis/shard-merge.js'
import { fingerprintOf } from '../gate/fingerprint.js'
import { renderConsoleTable } from '../report/table.js'
import { assertWritableOutput } from '../store/output-path.js'
import { readResultFile, writeResultFile } from '../store/result-file.js'
import { readShardRecords } from '../store/shard-records.js'
import { noValidRun } from '../sweep/no-valid-run.js'
import type { ResultFile } from '../types.js'

/** Register `servegate merge`. */
export function registerMergeCommand(program: Command): void {
  program
    .command('merge')
    .description("Merge a sharded sweep's shard results (run --shard I/N) into one result, re-summarising every shard's requests")
    .argument('<shards...>', "every shard's result file, each with its .records.jsonl.gz beside it")
    .option('--out <file>', 'merged result file', 'servegate-result.json')
    .action(async (files: string[], opts: { out: string }) => {
      assertWritableOutput(opts.out, '--out')
      const inputs: ShardInput[] = []
      for (const file of files) {
        const result = await readResultFile(file)
        // A file without a shard field has no records file: mergeShards refuses it, naming it.
        inputs.push({ file, result, runs: result.shard === undefined ? [] : await readShardRecords(join(dirname(file), result.shard.records)) })
      }
      const { result, notes } = mergeShards(inputs)
      result.fingerprint = fingerprintOf(result)
      await writeResultFile(opts.out, result)
      const log = (line: string): void => void process.stderr.write(`${line}\n`)
      for (const n of notes) log(`servegate merge: ${n}`)
      process.stdout.write(`${renderConsoleTable(result)}\n`)
      for (const line of alignmentLines(result)) log(line)
      const invalid = noValidRun(result)
      if (invalid === null) log(`Merged ${inputs.length} shards into ${opts.out}`)
      else {
        log(`servegate merge: no merged run is valid (${invalid}); the result is written to ${opts.out}`)
        process.exitCode = 1
      }
    })
}

/** One line a run: the shards' split of C and how far apart they started, measured and ended, against the bound. */
export function alignmentLines(result: ResultFile): string[] {
  const lines: string[] = []
  for (const p of result.points)
    for (const r of p.runs) {
      const s = r.shards
      if (s === undefined) continue
      const a = s.alignment
      const split = s.parts.map((x) => x.concurrency).join('+')
      const ok = r.validity.issues.some((i) => i.code === 'shards_unaligned') ? 'UNALIGNED' : 'aligned'
      lines.push(
        `${p.input_len}×${p.output_len} c=${p.concurrency} (${split}) repeat ${r.repeat}: ${ok}, warmups started ${a.start_spread_ms.toFixed(1)} ms apart (bound ${a.start_bound_ms.toFixed(1)} ms), measured starts ${a.measure_spread_ms.toFixed(1)} ms (bound ${a.bound_ms.toFixed(1)} ms), ends ${a.end_spread_ms.toFixed(1)} ms (bound ${a.end_bound_ms.toFixed(1)} ms)`,
      )
    }
  return lines
}
