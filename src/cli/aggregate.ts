/**
 * `servegate aggregate DIR --expect a,b,c`: the verdict records of a matrix of
 * runners (each job's `<out>.record.json`, downloaded into DIR) as one verdict,
 * one row per configuration, the worst on top. Exit codes follow the gate's
 * table (gate/outcome.ts) for every configuration, the highest wins
 * (gate/aggregate.ts aggregateExit); an expected configuration without a
 * record, or whose record holds no verdict, is `incomplete`. The default fail-on
 * is every verdict that is not a pass (unmeasured and undecided too): the matrix's check
 * passes only when every expected configuration passed. Unusable input (foreign
 * JSON in DIR, bad flags) exits 2, and so does a record that cannot be the
 * verdict it claims: one of another commit than `--head-sha` (without it, records
 * of several commits), or one whose rows contradict its verdict.
 */
import type { Command } from 'commander'
import { UsageError } from '../errors.js'
import { aggregateExit, aggregateRecords, parseExpect } from '../gate/aggregate.js'
import { FAIL_ON_VERDICTS, failOnWarning, parseFailOn } from '../gate/outcome.js'
import { renderAggregateMarkdown, renderAggregateText } from '../report/aggregate-markdown.js'
import { writeFileAtomic } from '../store/atomic-write.js'
import { assertWritableOutput } from '../store/output-path.js'
import { readRecordsUnder } from '../store/record-file.js'

export interface AggregateIo {
  /** Where the table goes (default: stdout). */
  print(text: string): void
}

const defaultIo: AggregateIo = { print: (t) => void process.stdout.write(t) }

/** Register `servegate aggregate`. */
export function registerAggregateCommand(program: Command, io: AggregateIo = defaultIo): void {
  program
    .command('aggregate')
    .description('One verdict for a matrix of runners from their verdict records: exit 0 only when every expected configuration passes')
    .argument('<dir>', 'folder holding the verdict records (searched recursively: one subfolder per downloaded artifact is fine)')
    .requiredOption('--expect <labels>', 'the configuration labels the matrix runs, comma-separated; one without a record counts as incomplete')
    .option('--head-sha <sha>', 'the commit under test (full SHA, git rev-parse HEAD): a record of any other commit is refused')
    .option('--markdown <file>', 'also write the table as markdown (PR comment / job summary)')
    .option(
      '--fail-on <list>',
      `verdicts that fail, comma-separated (default ${FAIL_ON_VERDICTS.join(',')}: anything but a pass; or never)`,
      FAIL_ON_VERDICTS.join(','),
    )
    .action(async (dir: string, opts: { expect: string; markdown?: string; failOn: string; headSha?: string }) => {
      const failOn = parseFailOn(opts.failOn, '--fail-on')
      const expected = parseExpect(opts.expect, '--expect')
      const headSha = opts.headSha === undefined ? null : parseHeadSha(opts.headSha)
      assertWritableOutput(opts.markdown, '--markdown')
      const { records, missingDir } = await readRecordsUnder(dir)
      const agg = aggregateRecords(records, expected, { headSha })
      const notes = missingDir ? [`${dir} does not exist: no record was found, so every expected configuration is missing.`] : []
      for (const n of notes) io.print(`${n}\n`)
      io.print(renderAggregateText(agg))
      const commit = records[0]?.record.head_sha ?? null
      if (headSha === null && commit !== null) {
        const unchecked = `No --head-sha: the records' commit ${commit.slice(0, 12)} was not checked against the commit under test.`
        io.print(`${unchecked}\n`)
        notes.push(unchecked)
      }
      const warning = failOnWarning(failOn)
      if (warning !== null) io.print(`Warning: ${warning}.\n`)
      const code = aggregateExit(agg, failOn)
      if (code === 0 && agg.rows.some((r) => r.verdict !== 'pass' && r.verdict !== 'improvement')) {
        io.print('Exits 0 because --fail-on leaves out every verdict above that is not a pass, but not every configuration passed.\n')
      }
      if (opts.markdown) await writeFileAtomic(opts.markdown, renderAggregateMarkdown(agg, { notes }))
      process.exitCode = code
    })
}

/** A full commit SHA (SHA-1 or SHA-256), as records name theirs: an abbreviated one would match no record. */
function parseHeadSha(raw: string): string {
  const sha = raw.trim()
  if (!/^([0-9a-f]{40}|[0-9a-f]{64})$/i.test(sha))
    throw new UsageError(
      `--head-sha ${JSON.stringify(raw)}: expected the full commit SHA, 40 hex digits (git rev-parse HEAD)`,
      'Records name their commit in full; an abbreviated SHA would match none.',
    )
  return sha
}
