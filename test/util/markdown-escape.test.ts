import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { resolveConfig } from '../../src/config/resolve.js'
import { escapeMarkdown, escapeStrings } from '../../src/util/markdown-escape.js'
import { renderMarkdownReport } from '../../src/report/markdown.js'
import { startSim, type SimHandle } from '../../src/sim/index.js'
import { runSweep } from '../../src/sweep/run-sweep.js'
import type { EnvRecord } from '../../src/types.js'
import { ENV, point, result, run } from '../report/fixtures.js'

const ZWJ = '\u200D'
const IMG = '<img src=x onerror=alert(1)>'

/** Cells of a markdown table row: split on the pipes markdown would split on (not `\|`). */
const cells = (row: string): string[] => row.split(/(?<!\\)\|/).slice(1, -1)

describe('escapeMarkdown', () => {
  it.each([
    ['HTML', IMG, '&lt;img src=x onerror=alert(1)&gt;'],
    ['ampersand entity', '&lt;b&gt;', '&amp;lt;b&amp;gt;'],
    ['team mention', 'ping @org/team', `ping @${ZWJ}org/team`],
    ['user mention', '@octocat', `@${ZWJ}octocat`],
    ['pipe', 'a | b', 'a &#124; b'],
    ['backticks', '`rm -rf`', '\\`rm -rf\\`'],
    ['link', '[click](https://evil.example)', '\\[click\\](https://evil.example)'],
    ['emphasis', '*bold* __strong__ ~~gone~~', '\\*bold\\* \\_\\_strong\\_\\_ \\~\\~gone\\~\\~'],
    ['backslash', 'C:\\path\\', 'C:\\\\path\\\\'],
    ['newlines', 'line1\nline2\r\nline3', 'line1 line2 line3'],
    ['controls and bidi overrides', 'ab\u0007c\u202Edef', 'abcdef'],
  ])('neutralises %s', (_what, input, expected) => {
    expect(escapeMarkdown(input)).toBe(expected)
  })

  it('leaves ordinary identifiers readable: intraword underscores, dots, slashes, colons', () => {
    for (const s of ['vllm 0.11.1rc2', 'zai-org/GLM-5.3-Flash', 'NVIDIA H100 80GB HBM3', 'sha256:ab_cd', 'http_status ×3']) expect(escapeMarkdown(s)).toBe(s)
  })

  it('escapes every string of a nested record and keeps numbers', () => {
    expect(escapeStrings({ a: ['<x>'], b: { c: 2, d: '|' } })).toEqual({ a: ['&lt;x&gt;'], b: { c: 2, d: '&#124;' } })
  })
})

const HOSTILE: EnvRecord = {
  ...ENV,
  engine: { name: 'vllm', version: `0.11.0 ${IMG}` },
  model: { id: 'org/model | x', revision: '`main`\n## injected heading', root: '@org/team' },
  gpu: {
    ...ENV.gpu,
    names: ['NVIDIA <b>B200</b>', 'NVIDIA <b>B200</b>'],
    count: 2,
    driver_version: '570 [link](https://evil.example)',
    cuda_version: '12.8 *x*',
  },
  container_digest: 'sha256:ab | cd',
  serve_command: 'vllm serve m --served-model-name @everyone',
}

describe('renderMarkdownReport with hostile server-reported strings', () => {
  const valid = point(1, [run(0, { ttft: [100, 200], itl: [10, 20], tput: 500, perUser: 50 })])
  const broken = point(16, [
    run(0, { ttft: [100, 200], itl: [10, 20], tput: 500, perUser: 50, issues: [{ code: 'requests_failed', detail: `HTTP 500: ${IMG} | @org/team` }] }),
  ])
  const md = renderMarkdownReport({ ...result([valid, broken], [], [1, 16]), env: HOSTILE })

  it('renders no HTML, link, or mention from the environment or error details', () => {
    expect(md).not.toMatch(/<img|<b>/)
    expect(md).not.toMatch(/(?<!\\)\]\(https:\/\/evil/)
    expect(md).toContain('\\[link\\](https://evil.example)')
    expect(md).not.toMatch(new RegExp(`@(?!${ZWJ})(org|everyone)`))
    expect(md).not.toMatch(/^## injected heading/m)
    expect(md).toContain('&lt;img src=x onerror=alert(1)&gt;')
  })

  it('keeps every row of the environment table at two cells', () => {
    const rows = md.split('\n').filter((l) => /^\| (Engine|Model|GPU|Driver|Container|Serve) /.test(l))
    expect(rows).toHaveLength(6)
    for (const r of rows) expect(cells(r)).toHaveLength(2)
  })

  it('names the server and the host unless told not to', () => {
    expect(md).toContain('| Server | http://127.0.0.1:8000 |')
    expect(md).toContain('| Host | runner, linux x64, 64 CPUs |')
    const hidden = renderMarkdownReport({ ...result([valid], []), env: HOSTILE }, { showHost: false })
    expect(hidden).not.toContain('127.0.0.1')
    expect(hidden).not.toContain('runner')
    expect(hidden).toContain('| Host | linux x64, 64 CPUs |')
  })
})

describe('a model id reported by a real server', () => {
  let sim: SimHandle
  let dir: string
  beforeAll(async () => {
    sim = await startSim({ ttftMs: 2, itlMs: 1, model: `@org/team ${IMG} | x` })
    dir = mkdtempSync(join(tmpdir(), 'servegate-escape-'))
  })
  afterAll(async () => {
    await sim?.close()
    if (dir) rmSync(dir, { recursive: true, force: true })
  })

  it('reaches the markdown report as text', async () => {
    const cfg = resolveConfig({
      file: null,
      filePath: null,
      flags: {
        baseUrl: sim.url,
        inputLen: '16',
        outputLen: '4',
        concurrency: '1',
        repeats: '1',
        promptsPerConcurrency: '2',
        warmup: '0',
        out: join(dir, 'r.json'),
      },
      env: {},
    })
    const { result: measured } = await runSweep(cfg, { log: () => {} })
    expect(measured.env.model.id).toContain(IMG)
    const md = renderMarkdownReport(measured)
    expect(md).not.toContain('<img')
    expect(md).toContain(`@${ZWJ}org/team &lt;img src=x onerror=alert(1)&gt; &#124; x`)
    const modelRow = md.split('\n').find((l) => l.startsWith('| Model |'))!
    expect(cells(modelRow)).toHaveLength(2)
  })
})
