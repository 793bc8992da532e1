import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { PassThrough } from 'node:stream'
import { Command } from 'commander'
import { afterAll, describe, expect, it } from 'vitest'
import { registerReportCommand } from '../../src/cli/report.js'
import { UsageError } from '../../src/errors.js'
import { point, result, run } from './fixtures.js'

const sample = result([point(1, [run(1, { ttft: [100, 110], itl: [20, 25], tput: 48, perUser: 49.8 })])], [])

function program(readResult: (p: string) => Promise<typeof sample>) {
  const stdout = new PassThrough()
  const stderr = new PassThrough()
  let out = ''
  let err = ''
  stdout.on('data', (d: Buffer) => (out += d.toString()))
  stderr.on('data', (d: Buffer) => (err += d.toString()))
  const p = new Command().exitOverride()
  registerReportCommand(p, { readResult, stdout, stderr })
  return { p, out: () => out, err: () => err }
}

describe('servegate report', () => {
  const dir = mkdtempSync(join(tmpdir(), 'servegate-report-'))
  afterAll(() => rmSync(dir, { recursive: true, force: true }))

  it('prints the table of the result it reads', async () => {
    const seen: string[] = []
    const { p, out } = program(async (path) => (seen.push(path), sample))
    await p.parseAsync(['node', 'servegate', 'report', 'r.json'])
    expect(seen).toEqual(['r.json'])
    expect(out()).toContain('4,096 in / 512 out')
    expect(out()).toMatch(/\n\s+16(\s+pending){6}\n/)
  })

  it('writes the markdown report with --markdown', async () => {
    const file = join(dir, 'report.md')
    const { p, err } = program(async () => sample)
    await p.parseAsync(['node', 'servegate', 'report', 'r.json', '--markdown', file])
    expect(readFileSync(file, 'utf8')).toContain('| 1 [1] | 100 / 110 | 20.0 / 25.0 | 48.0 | 49.8 |')
    expect(err()).toBe(`Markdown report written to ${file}\n`)
  })

  it('turns an unwritable markdown path into a usage error naming it', async () => {
    const file = join(dir, 'no-such-dir', 'report.md')
    const { p } = program(async () => sample)
    await expect(p.parseAsync(['node', 'servegate', 'report', 'r.json', '--markdown', file])).rejects.toBeInstanceOf(UsageError)
  })
})
