import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { PassThrough } from 'node:stream'
import { Command } from 'commander'
import { afterAll, describe, expect, it } from 'vitest'
import { registerReportCommand } from '../../src/cli/report.js'
import { UsageError } from '../../src/errors.js'
import { chartScripts } from '../../src/store/html-assets.js'
import { escapeHtml, renderHtmlReport, scriptJson } from '../../src/report/html.js'
import { readResultFile } from '../../src/store/result-file.js'
import type { ResultFile } from '../../src/types.js'
import { pipelineResult } from '../gate/fixtures.js'

const EVIL = '<script>alert(1)</script><img src=x onerror=alert(2)>&amp;'

const grid = (over: (r: ResultFile) => void = () => {}): ResultFile => {
  const r = pipelineResult({
    concurrency: [1, 2, 4],
    repeats: 3,
    itl: (c, rep) => (10 + c * 5) * (1 + rep * 0.01),
    run: (c, rep) => ({ failed: c === 4 && rep === 2 ? 3 : 0 }),
  })
  over(r)
  return r
}

// Every string a server or host reports, made hostile.
function hostile(r: ResultFile): void {
  r.env.engine.version = EVIL
  r.env.model.id = EVIL
  r.env.gpu.names = [EVIL]
  r.env.serve_command = EVIL
  r.env.container_digest = EVIL
  r.env.host.hostname = EVIL
  r.config = { ...r.config, sweep: EVIL }
  for (const p of r.points) for (const run of p.runs) for (const i of run.validity.issues) i.detail = EVIL
}

describe('renderHtmlReport', () => {
  const scripts = chartScripts()

  it('is one page that fetches nothing: the libraries and the data are inline, and a CSP forbids every request', () => {
    const html = renderHtmlReport(grid(), { scripts })
    expect(html).toContain(`<meta http-equiv="Content-Security-Policy" content="default-src 'none';`)
    expect(html).not.toMatch(/<(?:link|img|iframe|object|embed)\b/i)
    expect(html).not.toMatch(/\b(?:src|href)\s*=/i)
    expect(html).not.toContain('sourceMappingURL')
    expect(html).toContain(scripts.chartJs.slice(0, 200))
    expect(html.match(/<script\b/g)).toHaveLength(4)
  })

  it('keeps every reported string as text: no markup, and no "<" in the JSON data block', () => {
    const html = renderHtmlReport(grid(hostile), { scripts })
    expect(html).not.toContain('<script>alert')
    expect(html).not.toContain('<img')
    expect(html).toContain(escapeHtml(EVIL))
    const data = /<script type="application\/json" id="servegate-data">([^]*?)<\/script>/.exec(html)![1]!
    expect(data).not.toMatch(/[<>&]/)
    expect(scriptJson({ s: '</script><!--\u2028' })).toBe('{"s":"\\u003c/script\\u003e\\u003c!--\\u2028"}')
  })

  it('lists each validity issue with its run, and says which runs are left out', () => {
    const html = renderHtmlReport(grid(), { scripts })
    expect(html).toMatch(/<td>64 in \/ 16 out<\/td><td>4<\/td><td>2<\/td><td>left out<\/td><td>requests_failed<\/td>/)
  })

  it('labels the y-axis per GPU when the GPU count is known, and as the whole server when it is not', () => {
    expect(renderHtmlReport(grid(), { scripts })).toContain('"yLabel":"output tok/s per GPU"')
    const unknown = renderHtmlReport(
      grid((r) => {
        r.env.gpu.count = 'unknown'
      }),
      { scripts },
    )
    expect(unknown).toContain('"yLabel":"output tok/s of the whole server (GPU count unknown: not per GPU)"')
    expect(unknown).toContain('the GPU count is unknown, so no per-GPU figure is given')
  })
})

describe('servegate report --html', () => {
  const dir = mkdtempSync(join(tmpdir(), 'servegate-html-cli-'))
  afterAll(() => rmSync(dir, { recursive: true, force: true }))
  const resultPath = join(dir, 'r.json')
  writeFileSync(resultPath, JSON.stringify(grid()))

  function program() {
    const stdout = new PassThrough()
    const stderr = new PassThrough()
    let err = ''
    stdout.resume()
    stderr.on('data', (d: Buffer) => (err += d.toString()))
    const p = new Command().exitOverride()
    registerReportCommand(p, { readResult: readResultFile, stdout, stderr })
    return { p, err: () => err }
  }

  it('writes the page and, with --baseline, the verdict against it', async () => {
    const out = join(dir, 'r.html')
    const { p, err } = program()
    await p.parseAsync(['node', 'servegate', 'report', resultPath, '--baseline', resultPath, '--html', out])
    const html = readFileSync(out, 'utf8')
    expect(html).toContain('<h2>Verdict: ')
    expect(html).toContain('"role":"baseline"')
    expect(err()).toMatch(new RegExp(`^HTML report written to ${out} \\(verdict against ${resultPath}: \\w+\\)\\n$`))
  })

  it('refuses --baseline without --html in one line', async () => {
    const { p } = program()
    const run = p.parseAsync(['node', 'servegate', 'report', resultPath, '--baseline', resultPath])
    await expect(run).rejects.toBeInstanceOf(UsageError)
    await expect(run).rejects.toThrow(/--baseline .*: used only by the HTML page, but --html is missing/)
  })
})
