import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { UsageError } from '../../src/errors.js'
import { serverHostOf } from '../../src/env/local-host.js'
import { parseResult, readResultFile, writeResultFile } from '../../src/store/result-file.js'
import { dayResult } from '../gate/fixtures.js'
import { usageErrorOf } from '../fixtures/errors.js'
import { runCli } from '../sweep/cli-child.js'
import { listProblems } from '../../src/util/json-file.js'

let dir: string
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'servegate-result-'))
})
afterEach(async () => {
  await rm(dir, { recursive: true, force: true })
})

const usage = usageErrorOf

describe('result files', () => {
  it('round-trips a result through write and read unchanged', async () => {
    const r = dayResult(0)
    const path = join(dir, 'out', 'r.json')
    await writeResultFile(path, r)
    expect(await readResultFile(path)).toEqual(r)
    expect((await readFile(path, 'utf8')).endsWith('}\n')).toBe(true)
  })

  it('keeps config and env.definitions open but drops unknown keys elsewhere', () => {
    const r = dayResult(0) as unknown as Record<string, unknown>
    const json = JSON.parse(JSON.stringify({ ...r, extra_top: 1 })) as Record<string, any>
    json.config = { anything: { nested: [1, 2] } }
    json.env.definitions = { ttft: 'send → first token' }
    const parsed = parseResult(json, 'r.json') as unknown as Record<string, any>
    expect(parsed.config).toEqual({ anything: { nested: [1, 2] } })
    expect(parsed.env.definitions).toEqual({ ttft: 'send → first token' })
    expect(parsed.extra_top).toBeUndefined()
  })

  it('keeps the serving machine (env.server_host) and reads a result written before it was recorded', () => {
    const machine = { hostname: 'gpu-1', machine_id_sha256: '5e8a1f0c3b2d4e6f', platform: 'linux x64 6.8.0-45-generic', cpu_model: 'AMD EPYC 9654', cpus: 64 }
    const json = JSON.parse(JSON.stringify(dayResult(0))) as Record<string, any>
    json.env.server_host = serverHostOf(true, machine, ['GPU-8f3e2a1b-0c4d-4e5f-9a6b-7c8d9e0f1a2b'])
    expect(parseResult(json, 'r.json').env.server_host).toEqual({ location: 'local', ...machine, gpu_uuids: ['GPU-8f3e2a1b-0c4d-4e5f-9a6b-7c8d9e0f1a2b'] })
    delete json.env.server_host
    expect(parseResult(json, 'old.json').env.server_host).toBeUndefined()
    json.env.server_host = { location: 'elsewhere' }
    expect(() => parseResult(json, 'bad.json')).toThrow(/env\.server_host\.location/)
  })

  it('reads a result written before prompt tokens were recorded with both prompt counts null', () => {
    const json = JSON.parse(JSON.stringify(dayResult(0))) as Record<string, any>
    for (const p of json.points)
      for (const r of p.runs) {
        delete r.tokens.prompt_expected
        delete r.tokens.prompt_server_usage
      }
    const parsed = parseResult(json, 'old.json')
    expect(parsed.points[0]!.runs[0]!.tokens).toMatchObject({ prompt_expected: null, prompt_server_usage: null })
  })

  it('lists every problem at once with the file, the field path and what was expected', () => {
    const json = JSON.parse(JSON.stringify(dayResult(0))) as Record<string, any>
    json.points[0].runs[1].itl_ms.p95 = 'fast'
    delete json.env.gpu.driver_version
    json.target.metric = 'ttft'
    const err = usage(() => parseResult(json, 'cand.json'))
    expect(err.message).toContain('cand.json is not a valid servegate result file')
    expect(err.message).toContain('points.0.runs.1.itl_ms.p95: expected a latency in ms: a finite number ≥ 0, or null')
    expect(err.message).toContain('env.gpu.driver_version: Invalid input: expected string, received undefined')
    expect(err.message).toMatch(/target\.metric: .*"tpot"\|"itl"/)
  })

  it('names a wrong schema and recognises a baseline passed by mistake', () => {
    const err = usage(() => parseResult({ schema: 'servegate.baseline/v1' }, 'b.json'))
    expect(err.message).toBe('b.json is not a servegate result: schema is "servegate.baseline/v1", expected "servegate.result/v1"')
    expect(err.hint).toMatch(/baseline file/)
  })

  it('says a cut-off file is truncated', async () => {
    const text = JSON.stringify(dayResult(0), null, 2)
    const path = join(dir, 'cut.json')
    await writeFile(path, text.slice(0, Math.floor(text.length / 2)))
    await expect(readResultFile(path)).rejects.toThrow(/cut\.json is not valid JSON: the file ends early \(truncated/)
  })

  it('says an empty file is empty and a garbled one is corrupt', async () => {
    await writeFile(join(dir, 'empty.json'), '')
    await writeFile(join(dir, 'bad.json'), '{"schema": nope}')
    await expect(readResultFile(join(dir, 'empty.json'))).rejects.toThrow(/empty\.json is empty/)
    await expect(readResultFile(join(dir, 'bad.json'))).rejects.toThrow(/bad\.json is not valid JSON: corrupt content/)
  })

  it('reports a missing file as a usage error naming it', async () => {
    await expect(readResultFile(join(dir, 'nope.json'))).rejects.toBeInstanceOf(UsageError)
    await expect(readResultFile(join(dir, 'nope.json'))).rejects.toThrow(/cannot read .*nope\.json/)
  })
})

describe('result files that no sweep could have written', () => {
  const copy = (): Record<string, any> => JSON.parse(JSON.stringify(dayResult(0))) as Record<string, any>

  it('accepts only the statistics every run records, and a target percentile among them', () => {
    const json = copy()
    json.points[0].runs[0].itl_ms.p90 = 12
    json.target.percentile = 90
    const err = usage(() => parseResult(json, 'r.json'))
    expect(err.message).toMatch(/points\.0\.runs\.0\.itl_ms: Unrecognized key: "p90"/)
    expect(err.message).toContain('target.percentile: expected 50, 95, 99 (the percentiles every run records)')
  })

  it('rejects a point measured twice, naming both places', () => {
    const json = copy()
    json.points.push(structuredClone(json.points[0]))
    const err = usage(() => parseResult(json, 'dup.json'))
    expect(err.message).toContain('dup.json is not a valid servegate result file')
    const p = json.points[0]
    expect(err.message).toContain(`points.${json.points.length - 1}: duplicate point ${p.input_len}x${p.output_len} at C=${p.concurrency} (also points.0)`)
  })

  it('rejects a repeat twice within a point, and within a throughput-at-target shape', () => {
    const json = copy()
    json.points[1].runs[2].repeat = json.points[1].runs[0].repeat
    json.at_target[0].runs.push(structuredClone(json.at_target[0].runs[1]))
    const err = usage(() => parseResult(json, 'r.json'))
    expect(err.message).toContain(`points.1.runs.2.repeat: duplicate repeat ${json.points[1].runs[0].repeat} (also runs.0)`)
    expect(err.message).toContain(`at_target.0.runs.${json.at_target[0].runs.length - 1}.repeat: duplicate repeat`)
  })

  it.each([
    ['0', 'ttft_ms', 'p50', '> 0'],
    ['0', 'e2el_ms', 'mean', '> 0'],
    ['-3.5', 'itl_ms', 'p95', '≥ 0'],
    ['-0.1', 'tpot_ms', 'p50', '≥ 0'],
    ['1e999', 'e2el_ms', 'p99', '> 0'],
    ['1e999', 'itl_ms', 'p99', '≥ 0'],
  ])('rejects a latency of %s (%s.%s) in the file as written, naming the field', async (text, stat, key, rule) => {
    const json = copy()
    json.points[0].runs[1][stat][key] = 123456.789
    const path = join(dir, 'lat.json')
    // Written as text: 1e999 only becomes Infinity when the file is parsed, as with a hand-edited file.
    await writeFile(path, JSON.stringify(json).replace('123456.789', text))
    const err = await readResultFile(path).then(
      () => null,
      (e: unknown) => e as Error,
    )
    expect(err).toBeInstanceOf(UsageError)
    expect(err!.message).toContain(`points.0.runs.1.${stat}.${key}: expected a latency in ms: a finite number ${rule}, or null`)
  })

  it('accepts an ITL or TPOT of 0: chunks that arrive in one read are 0 ms apart', () => {
    const json = copy()
    json.points[0].runs[0].itl_ms.p50 = 0
    json.points[0].runs[0].tpot_ms.p50 = 0
    expect(parseResult(json, 'r.json').points[0]!.runs[0]!.itl_ms.p50).toBe(0)
  })

  it('lists the first five problems of a badly broken file, then how many more', () => {
    const json = copy()
    const runs = json.points.flatMap((p: { runs: unknown[] }) => p.runs) as Array<Record<string, any>>
    for (const r of runs) r.ttft_ms.p95 = r.ttft_ms.p99 = 0
    expect(runs.length).toBe(6)
    const err = usage(() => parseResult(json, 'many.json'))
    const lines = err.message.split('\n')
    expect(lines[0]).toBe('many.json is not a valid servegate result file:')
    expect(lines.slice(1, 6).every((l) => /^ {2}points\.\d+\.runs\.\d+\.ttft_ms\.p9[59]: expected a latency/.test(l))).toBe(true)
    expect(lines[6]).toBe(`  … and ${2 * runs.length - 5} more`)
    expect(lines).toHaveLength(7)
  })
})

describe('a bad result file through the CLI', () => {
  it('exits 2 with the file and the field, and no stack', async () => {
    const json = JSON.parse(JSON.stringify(dayResult(0))) as Record<string, any>
    json.points.push(structuredClone(json.points[0]))
    const path = join(dir, 'twice.json')
    await writeFile(path, JSON.stringify(json))
    const r = await runCli(['report', path])
    expect(r.code).toBe(2)
    expect(r.stderr).toContain(`servegate: ${path} is not a valid servegate result file:`)
    expect(r.stderr).toMatch(/points\.\d+: duplicate point/)
    expect(r.stderr).not.toMatch(/^\s+at /m)
  })
})

describe('listProblems (the formatter every validation message shares)', () => {
  const lines = (n: number) => Array.from({ length: n }, (_, i) => `field${i}: bad`)
  it('lists up to six problems in full: "… and 1 more" would hide a line to save none', () => {
    expect(listProblems(lines(6)).split('\n')).toEqual(lines(6).map((l) => `  ${l}`))
  })
  it('lists five of seven, then how many more', () => {
    expect(listProblems(lines(7)).split('\n')).toEqual([...lines(5).map((l) => `  ${l}`), '  … and 2 more'])
  })
})
