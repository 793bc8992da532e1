import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { UsageError } from '../../src/errors.js'
import { parseResult, readResultFile, writeResultFile } from '../../src/store/result-file.js'
import { dayResult } from '../gate/fixtures.js'
import { usageErrorOf } from '../fixtures/errors.js'

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

  it('lists every problem at once with the file, the field path and what was expected', () => {
    const json = JSON.parse(JSON.stringify(dayResult(0))) as Record<string, any>
    json.points[0].runs[1].itl_ms.p95 = 'fast'
    delete json.env.gpu.driver_version
    json.target.metric = 'ttft'
    const err = usage(() => parseResult(json, 'cand.json'))
    expect(err.message).toContain('cand.json is not a valid servegate result file')
    expect(err.message).toContain('points.0.runs.1.itl_ms.p95: Invalid input: expected number, received string')
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
