import { describe, expect, it } from 'vitest'
import { spawnSync } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseConfigText } from '../../src/config/load.js'
import { configForResult, resolveConfig } from '../../src/config/resolve.js'
import { buildPlan } from '../../src/plan/plan.js'
import { UsageError } from '../../src/errors.js'
import { cliArgs } from '../fixtures/servegate-cli.js'

const root = join(import.meta.dirname, '..', '..')

function problemOf(text: string): string {
  try {
    parseConfigText(text, 'servegate.yaml')
  } catch (err) {
    expect(err).toBeInstanceOf(UsageError)
    return (err as Error).message
  }
  throw new Error('expected the config to be refused')
}

describe('sweep placement in the config file', () => {
  it('names the file, the field and the allowed values of a bad placement', () => {
    const msg = problemOf('sweeps:\n  gate:\n    shapes: [{input_len: 64, output_len: 16}]\n    concurrency: [1, 8, 16]\n    placement: around\n')
    const lines = msg.split('\n').filter((l) => l.trim() !== '')
    expect(lines).toHaveLength(2)
    expect(lines[0]).toBe('servegate.yaml is not a valid servegate config:')
    expect(lines[1]).toMatch(/sweeps\.gate\.placement: expected "fixed" \(every concurrency of the list\) or "bracket"/)
  })

  it('refuses ITL concurrencies outside the sweep list', () => {
    const msg = problemOf(
      'sweeps:\n  gate:\n    shapes: [{input_len: 64, output_len: 16}]\n    concurrency: [1, 8, 16]\n    placement: bracket\n    itl_concurrency: [1, 64]\n',
    )
    expect(msg).toMatch(/sweeps\.gate\.itl_concurrency: expected concurrencies of this sweep's list \(1, 8, 16\); not in it: 64/)
  })

  it('keeps a fixed sweep exactly as before: no placement recorded, every concurrency planned', () => {
    const file = parseConfigText('sweeps:\n  gate:\n    shapes: [{input_len: 64, output_len: 16}]\n    concurrency: [1, 8, 16]\n', 'servegate.yaml')
    const cfg = resolveConfig({ file, filePath: 'servegate.yaml', flags: {}, env: {} })
    expect(cfg.placement).toBeUndefined()
    expect(configForResult(cfg)).not.toHaveProperty('placement')
    expect(buildPlan(cfg).map((p) => p.concurrency)).toEqual([1, 1, 1, 8, 8, 8, 16, 16, 16])
  })

  it('defaults the ITL concurrency of a bracketed sweep to the lowest of the list', () => {
    const file = parseConfigText(
      'sweeps:\n  gate:\n    shapes: [{input_len: 64, output_len: 16}]\n    concurrency: [16, 1, 8]\n    placement: bracket\n',
      'servegate.yaml',
    )
    expect(resolveConfig({ file, filePath: 'servegate.yaml', flags: {}, env: {} }).itlConcurrency).toEqual([1])
  })

  it('exits 2 with one line when `servegate run` is given a bad placement', () => {
    const dir = mkdtempSync(join(tmpdir(), 'servegate-placement-'))
    try {
      const path = join(dir, 'servegate.yaml')
      writeFileSync(path, 'sweeps:\n  gate:\n    shapes: [{input_len: 64, output_len: 16}]\n    concurrency: [1, 8]\n    placement: brackets\n')
      const r = spawnSync(process.execPath, cliArgs('run', '--config', path, '--sweep', 'gate', '--out', join(dir, 'r.json')), {
        cwd: root,
        encoding: 'utf8',
        env: { ...process.env, CI: 'true' },
      })
      expect(r.status).toBe(2)
      expect(r.stderr).toMatch(/sweeps\.gate\.placement: expected "fixed"/)
      expect(r.stderr.split('\n').filter((l) => l.includes('sweeps.gate.placement'))).toHaveLength(1)
      expect(r.stderr.split('\n').filter((l) => l.startsWith('servegate:'))).toHaveLength(1)
      expect(r.stderr).not.toMatch(/^\s+at /m)
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  }, 30_000)
})
