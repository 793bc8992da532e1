import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { writeResultFile } from '../../src/store/result-file.js'
import { outputProblem } from '../../src/store/output-path.js'
import { dayResult } from '../gate/fixtures.js'
import { runCli } from '../sweep/cli-child.js'

// An output flag that cannot be written is one line and exit 2 before any work:
// before the simulator starts or the server is contacted, before a compare decides.
describe('unwritable output paths', () => {
  let dir: string
  let server: Server
  let serverUrl: string
  let requests = 0
  let aFile: string
  let aDir: string
  let result: string

  const expectOneLine = (r: { code: number | null; stderr: string }, text: string): void => {
    expect(r.code).toBe(2)
    const lines = r.stderr.split('\n').filter((l) => l.startsWith('servegate:'))
    expect(lines).toEqual([`servegate: ${text}`])
    expect(r.stderr).not.toMatch(/^\s+at /m)
  }

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'servegate-outpath-'))
    // A stand-in server that only counts: any request reaching it means the check came too late.
    server = createServer((_req, res) => {
      requests++
      res.writeHead(500).end()
    })
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
    serverUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
    aFile = join(dir, 'plain.txt')
    writeFileSync(aFile, 'not a directory\n')
    aDir = join(dir, 'a-directory')
    mkdirSync(aDir)
    result = join(dir, 'r.json')
    await writeResultFile(result, dayResult(0))
  })

  afterAll(async () => {
    await new Promise((r) => server.close(r))
    rmSync(dir, { recursive: true, force: true })
  })

  it('run --out naming a directory: refused before the server is contacted', async () => {
    const r = await runCli(['run', '--base-url', serverUrl, '--out', aDir])
    expectOneLine(r, `--out ${aDir}: is a directory, expected a file path`)
    expect(requests).toBe(0)
  })

  it('run --out under a file: refused before the built-in simulator starts', async () => {
    const out = join(aFile, 'sub', 'r.json')
    const r = await runCli(['run', '--out', out])
    expectOneLine(r, `--out ${out}: directory ${join(aFile, 'sub')} does not exist and cannot be created: ${aFile} is not a directory`)
    expect(r.stderr).not.toContain('started servegate')
  })

  it('compare --json and --markdown: refused before a verdict is printed', async () => {
    const json = join(aFile, 'v.json')
    let r = await runCli(['compare', result, result, '--json', json])
    expectOneLine(r, `--json ${json}: ${aFile} is not a directory`)
    expect(r.stdout).toBe('')
    r = await runCli(['compare', result, result, '--markdown', aDir])
    expectOneLine(r, `--markdown ${aDir}: is a directory, expected a file path`)
    expect(r.stdout).toBe('')
  })

  it('report --markdown into a missing directory: refused before the table is printed', async () => {
    const md = join(dir, 'no-such-dir', 'report.md')
    const r = await runCli(['report', result, '--markdown', md])
    expectOneLine(r, `--markdown ${md}: directory ${join(dir, 'no-such-dir')} does not exist`)
    expect(r.stdout).toBe('')
  })

  it('baseline update --into naming a directory: refused, nothing written', async () => {
    const r = await runCli(['baseline', 'update', result, '--into', aDir])
    expectOneLine(r, `--into ${aDir}: is a directory, expected a file path`)
  })

  it('accepts a missing directory that the atomic writers will create', async () => {
    const into = join(dir, 'baselines', 'gate.json')
    expect(outputProblem(into)).toBeNull()
    const r = await runCli(['baseline', 'update', result, '--into', into])
    expect(r.code).toBe(0)
    expect(existsSync(into)).toBe(true)
  })

  it.skipIf(process.getuid?.() === 0)('names a directory that is not writable', () => {
    const ro = join(dir, 'read-only')
    mkdirSync(ro, { mode: 0o555 })
    expect(outputProblem(join(ro, 'r.json'))).toBe(`directory ${ro} is not writable`)
  })
})
