import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { compareToBaseline } from '../../src/gate/compare.js'
import { costOf } from '../../src/gate/cost.js'
import { buildVerdictRecord, type VerdictRecord } from '../../src/gate/record.js'
import { appendRefresh } from '../../src/gate/refresh.js'
import type { Baseline, Verdict } from '../../src/gate/types.js'
import { readRecordsUnder } from '../../src/store/record-file.js'
import { pipeDay } from '../gate/fixtures.js'

let dir: string
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'servegate-record-'))
})
afterEach(async () => {
  await rm(dir, { recursive: true, force: true })
})

// A verdict the gate really gives (five refreshes through the summarizer), with the cost a job states.
let base: Baseline | null = null
for (let d = 0; d < 5; d++) base = appendRefresh(base, pipeDay(d, 1), { name: 'gate' })
const SLOWER = compareToBaseline(base!, pipeDay(7, 1.3))
const COST = costOf({ engineStarts: 9, pointRuns: 54 }, 61.234, 120, false)

function recordOf(v: Verdict): VerdictRecord {
  return buildVerdictRecord({
    label: 'h100',
    outcome: v.verdict,
    mode: 'gate',
    sweep: 'gate',
    comparedWith: 'baselines/gate.json',
    verdict: v,
    env: pipeDay(7).env,
    runner: { name: 'gpu-1', os: 'Linux', arch: 'X64', labels: null },
    job: { run_url: null, job: 'bench', run_attempt: '1' },
    headSha: 'f00df00d',
    at: '2026-01-01T10:00:00.000Z',
    harnessVersion: '0.1.0',
  })
}

async function readBack(rec: unknown): Promise<VerdictRecord> {
  await writeFile(join(dir, 'r.record.json'), JSON.stringify(rec))
  const { records } = await readRecordsUnder(dir)
  return records[0]!.record
}

describe('the verdict record carries the cost', () => {
  it("copies the verdict's cost into the record, and it reads back unchanged", async () => {
    const rec = recordOf({ ...SLOWER, cost: COST })
    expect(rec.cost).toEqual({ engine_starts: 9, point_runs: 54, gpu_minutes: 61.23, max_gpu_minutes: 120, capped: false })
    expect(await readBack(rec)).toEqual(rec)
  })

  it('leaves the field out when the verdict states no cost', () => {
    expect(recordOf(SLOWER)).not.toHaveProperty('cost')
    expect(recordOf({ ...SLOWER, cost: null })).not.toHaveProperty('cost')
  })

  it('still reads a record written before records carried a cost', async () => {
    const { cost: _drop, ...older } = recordOf({ ...SLOWER, cost: COST })
    expect(await readBack(older)).toEqual(older)
  })

  it('refuses a record whose cost is not numbers, naming the file and the field', async () => {
    const bad = { ...recordOf({ ...SLOWER, cost: COST }), cost: { ...COST, point_runs: 'many' } }
    await expect(readBack(bad)).rejects.toThrow(`${join(dir, 'r.record.json')} is not a valid servegate verdict record:\n  cost.point_runs:`)
  })
})
